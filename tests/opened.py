"""What an engine really opened: a Godot started under strace, and the files its processes opened.

Tests of the load gate assert on this record, not on what the bridge expected the engine to open:
`strace -f -e trace=open,openat,openat2,creat` writes every attempt (successful or not) of the
engine and of anything it starts to one log, which `opened()` turns into absolute paths.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from pathlib import Path

_CALL = re.compile(r'^(\d+)\s+(?:open|openat|openat2|creat)\((?:(?:AT_FDCWD|\d+)(?:<[^>]*>)?, )?"((?:[^"\\]|\\.)*)"')


def traced_godot(godot_bin: str, folder: Path, log: Path) -> tuple[str, Path]:
    """Return an executable in `folder` that runs `godot_bin` under strace, and the log it writes
    (`log`: a place the engine may write, such as the project's .godot/, since strace runs behind
    the same wall as the engine: bridge/wall.py)."""
    strace = shutil.which("strace")
    assert strace, "the load gate's tests need strace (scripts/setup.sh installs it)"
    folder.mkdir(parents=True, exist_ok=True)
    log.parent.mkdir(parents=True, exist_ok=True)
    wrapper = folder / "godot"
    wrapper.write_text(
        "#!/bin/sh\n"
        f'exec "{strace}" -f -qq -y -e trace=open,openat,openat2,creat -a1 -s 4096 -o "{log}" -A -- '
        f'"{godot_bin}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return str(wrapper), log


def opened(log: Path) -> list[str]:
    """Every path the traced processes tried to open, as written (relative ones as given)."""
    if not log.exists():
        return []
    found: list[str] = []
    for line in log.read_text("utf-8", "replace").splitlines():
        match = _CALL.match(line)
        if match:
            found.append(match.group(2).encode().decode("unicode_escape"))
    return found


def under(paths: list[str], folder: Path) -> list[str]:
    """Those of `paths` inside `folder` (by real path where they exist, by text otherwise)."""
    root = os.path.realpath(folder)
    hits = []
    for path in paths:
        real = os.path.realpath(path) if os.path.isabs(path) else path
        if real == root or real.startswith(root + os.sep) or path.startswith(str(folder) + os.sep):
            hits.append(path)
    return hits


def scripts_opened(paths: list[str], project: Path) -> list[str]:
    """Those of `paths` that are project scripts or native libraries (the engine's own are elsewhere)."""
    code = (".gd", ".gdc", ".cs", ".gdextension", ".so", ".dll", ".dylib")
    return [path for path in under(paths, project) if path.lower().endswith(code)]
