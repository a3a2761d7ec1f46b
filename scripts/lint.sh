#!/usr/bin/env bash
# The static checks, CI's first step (.ci/run), before the suite: mypy --strict and ruff over gdres/,
# tests/ and scripts/ (configured in pyproject.toml), gdlint and gdformat --check over every top-level
# folder that holds GDScript (gdformatrc and gdlintrc leave out vendored demos). Runs every check, then
# exits 1 if any failed. Needs no Godot.
set -uo pipefail
SETUP_FOR=lint source "$(dirname -- "${BASH_SOURCE[0]}")/setup.sh" || exit 1
cd "$REPO" || exit 1

folders=()
for folder in */; do
    folder=${folder%/}
    [[ -n $(find "$folder" -name '*.gd' -print -quit) ]] && folders+=("$folder")
done

failed=0
check() {
    echo "lint: $*" >&2
    "$VENV/bin/python" -m "$@" || failed=1
}
check ruff check --output-format concise gdres tests scripts
check mypy
check gdtoolkit.linter "${folders[@]}"
check gdtoolkit.formatter --check "${folders[@]}"
exit "$failed"
