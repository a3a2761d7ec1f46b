#!/usr/bin/env bash
# Run examples/requests.jsonl through `gdres batch` against a throwaway
# copy of examples/project, so the demo never modifies the checked-in project.
# Replies (JSON Lines) go to stdout; set KEEP=1 to keep the project copy.
set -euo pipefail
SETUP_FOR=demo source "$(dirname -- "${BASH_SOURCE[0]}")/setup.sh"

work=$(mktemp -d)
if [[ ${KEEP:-0} == 1 ]]; then
    trap 'echo "demo: kept project copy at $work/project" >&2' EXIT
else
    trap 'rm -rf -- "$work"' EXIT
fi
cp -R -- "$REPO/examples/project" "$work/project"
echo "demo: project copy at $work/project" >&2

# Substitute @PROJECT@ with the JSON-escaped path (without its outer quotes)
# so any character in the path still yields valid JSON.
set +e
PROJECT_DIR="$work/project" "$VENV/bin/python" -c '
import json, os, sys
path = json.dumps(os.environ["PROJECT_DIR"])[1:-1]
sys.stdout.write(sys.stdin.read().replace("@PROJECT@", path))
' <"$REPO/examples/requests.jsonl" | "$VENV/bin/gdres" batch
status=("${PIPESTATUS[@]}")
set -e
if (( status[0] != 0 )); then
    echo "demo: failed to prepare requests (status ${status[0]})" >&2
    exit "${status[0]}"
fi
exit "${status[1]}"
