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
from typing import Any

import hostile_corpus as corpus
from gdres import Bridge

_CALL = re.compile(r'^(\d+)\s+(?:open|openat|openat2|creat)\((?:(?:AT_FDCWD|\d+)(?:<[^>]*>)?, )?"((?:[^"\\]|\\.)*)"')


def traced_godot(godot_bin: str, folder: Path, log: Path) -> tuple[str, Path]:
    """Return an executable in `folder` that runs `godot_bin` under strace, and the log it writes
    (`log`: a place the engine may write, such as the project's .godot/, since strace runs behind
    the same wall as the engine: gdres/engine/wall.py)."""
    strace = shutil.which("strace")
    assert strace, "the load gate's tests need strace (scripts/setup.sh installs it)"
    folder.mkdir(parents=True, exist_ok=True)
    log.parent.mkdir(parents=True, exist_ok=True)
    wrapper = folder / "godot"
    # An import's engines run behind a wall of their own, which lets them write only the import's
    # shadow (gdres/serving/imports.py): they run untraced here (the log cannot be opened);
    # tests/engine/test_import_shadow.py traces a whole import from outside the wall.
    wrapper.write_text(
        "#!/bin/sh\n"
        f'if ! : >>"{log}" 2>/dev/null; then exec "{godot_bin}" "$@"; fi\n'
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


class Watched:
    """A project, a folder outside it with bait, and a Bridge whose engine runs under strace."""

    def __init__(self, tmp_path: Path, godot_bin: str) -> None:
        self.project = tmp_path / "project"
        self.project.mkdir()
        (self.project / "project.godot").write_text("config_version=5\n")
        self.outside = tmp_path / "outside"
        self.outside.mkdir()
        self.godot, self.log = traced_godot(godot_bin, tmp_path / "trace", self.project / ".godot" / "opened.log")
        self.bridge = Bridge(self.godot, timeout=60)

    def write(self, relative: str, data: bytes | str) -> Path:
        path = self.project / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        return path

    def script(self, relative: str, case: str, base: str = "Resource") -> Path:
        return self.write(relative, corpus.script_file(case, base))

    def bait(self, name: str, data: bytes | str = "bait") -> Path:
        path = self.outside / name
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        return path

    def run(self, op: str, **members: Any) -> dict[str, Any]:
        return self.bridge.run({"op": op, "project_path": str(self.project), **members})

    def assert_nothing_ran(self) -> None:
        paths = opened(self.log)
        assert paths, "strace recorded nothing: the engine was not watched"
        assert sorted(p.name for p in self.project.glob(f"{corpus.MARK}*")) == []
        assert scripts_opened(paths, self.project) == []
        assert under(paths, self.outside) == []
