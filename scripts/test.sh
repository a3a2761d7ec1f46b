#!/usr/bin/env bash
# Run the test suite inside the project venv with a real Godot available.
# Extra arguments go to pytest; default options live in pyproject.toml.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/setup.sh"
cd "$REPO"
exec "$VENV/bin/python" -m pytest "$@"
