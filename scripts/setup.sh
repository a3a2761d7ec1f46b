# shellcheck shell=bash
# Sourced (not run) by scripts/test.sh and scripts/demo.sh.
# Provides: REPO (repo root), VENV (its .venv), and exports GODOT_BIN.
# SETUP_FOR=demo installs only what the demo runs: the package and Godot (no test tools, no host
# packages); SETUP_FOR=lint the package and its test tools (no Godot, no host packages: scripts/lint.sh);
# anything else (the default) installs the test extras, the tests' host packages and Godot.
# Safe to source from any cwd: the repo root comes from this file's location.

REPO=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
VENV="$REPO/.venv"

if [[ ! -x $VENV/bin/python ]]; then
    echo "setup: creating $VENV" >&2
    python3 -m venv "$VENV"
fi

# Reinstall only when pyproject.toml changed since the last successful install,
# so repeated runs stay fast. The stamp lives in .venv, so deleting .venv resets it.
FOR=${SETUP_FOR:-test}
STAMP="$VENV/.gdres-installed-$FOR"
if [[ ! -e $STAMP || $REPO/pyproject.toml -nt $STAMP ]]; then
    if [[ $FOR == demo ]]; then
        echo "setup: installing gdres (editable) into $VENV" >&2
        "$VENV/bin/pip" install -q -e "$REPO" >&2
    else
        echo "setup: installing gdres (editable, with test extras) into $VENV" >&2
        "$VENV/bin/pip" install -q -e "$REPO[test]" >&2
    fi
    touch "$STAMP"
fi

# Host packages the tests need, installed where apt is the package manager: libfuse 3 for the
# case-insensitive FUSE file system of tests/engine/test_casefold.py (tests/casefold_fs.py), and strace,
# with which the load gate's tests watch what the engine really opens (tests/opened.py), and GNU
# parallel, whose recipe in docs/scaling.md tests/engine/test_scaling_recipes.py runs.
if [[ $FOR != demo && $FOR != lint && $(uname -s) == Linux ]] && command -v apt-get >/dev/null; then
    missing=()
    dpkg-query -W -f='${Status}' libfuse3-3 2>/dev/null | grep -q 'ok installed' || missing+=(libfuse3-3)
    command -v strace >/dev/null || missing+=(strace)
    command -v parallel >/dev/null || missing+=(parallel)
    if (( ${#missing[@]} )); then
        echo "setup: installing ${missing[*]} (for the tests)" >&2
        sudo=()
        [[ $(id -u) -eq 0 ]] || sudo=(sudo)
        "${sudo[@]}" apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >&2
    fi
fi

if [[ $FOR != lint ]]; then
    GODOT_BIN=$(bash "$REPO/scripts/install-godot.sh")
    export GODOT_BIN
fi
