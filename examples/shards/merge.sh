#!/usr/bin/env bash
# Put the shards' outputs back together: `merge.sh OUT...` (the folders serve.sh wrote), run at the
# top of a checkout of the commit the shards started from. Applies each shard's changes (the shards
# wrote disjoint files, so each applies cleanly) and writes replies.jsonl: every reply, in input
# line order, as one `gdres batch` of the whole file writes them.
set -euo pipefail
for out in "$@"; do
    if [[ -s $out/changes.patch ]]; then  # a shard that changed nothing wrote an empty one
        git apply --binary -- "$out/changes.patch"
    fi
done
for out in "$@"; do
    cat -- "$out/replies.jsonl"
done | sort -s -t: -k2,2n >replies.jsonl
