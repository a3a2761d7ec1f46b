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
# Every line up to the last one answered: a shard's folder left out, or its replies cut short, shows.
count=$(wc -l <replies.jsonl)
last=$(tail -n 1 replies.jsonl | sed -E 's/^\{"line":([0-9]+),.*/\1/')
if [[ $count -ne ${last:-0} ]]; then
    echo "merge.sh: $count replies for lines 1 to ${last:-0}: a shard's output is missing or cut short" >&2
    exit 1
fi
