#!/usr/bin/env bash
# One machine's share of a batch: `serve.sh K/N PROJECT REQUESTS OUT`.
# Serves the lines of REQUESTS (JSON Lines whose project_path is ".") that fall to shard K of N, in
# PROJECT, and leaves in the folder OUT its replies (replies.jsonl, each with its input `line`) and
# the files it changed (changes.patch, a binary git diff of PROJECT; .godot/, the import's cache, is
# left out). Every shard must start from the same commit. Exit status: gdres's (1: some reply is an
# error; the outputs are written all the same).
set -euo pipefail
shard=$1 project=$2 requests=$(realpath -- "$3") out=$(realpath -m -- "$4")
mkdir -p -- "$out"
status=0
(cd -- "$project" && gdres batch --no-progress --shard "$shard" "$requests") >"$out/replies.jsonl" || status=$?
git add -A -- "$project" ":(exclude)$project/.godot"
git diff --cached --binary -- "$project" >"$out/changes.patch"
exit "$status"
