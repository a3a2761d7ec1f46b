"""Import a project's assets the way the editor does, without running any of the project's code.

A project checked out from git has its `.import` files but no `.godot/imported/`, so the engine
cannot load its textures, fonts or sounds until the editor has imported them. `godot --import`
starts the editor on the project, and the editor runs the project's code as it does so: editor
plugins, @tool autoloads (their static initialisers), GDExtension libraries (native code), and the
@tool scripts of resources an importer loads. So the import runs on a shadow of the project:

1. A scratch folder mirrors the project with links to its files (hard links, then copies, where
   links cannot be made), leaving out `.godot/`, every script and native library, linked folders,
   and every file the load gate refuses (gdscript/tools/audit.gd, run like a worker). The
   artefacts already in the project's `.godot/imported/` are linked in too, so the editor redoes
   only what is missing or stale.
2. The editor imports the shadow (`--headless --import`; in recovery mode where the engine has it).
3. What the import made comes back into the project: new or changed artefacts in
   `.godot/imported/`, the uid cache when the project has none, and a `.import` file only for an
   asset that has none (the user's own `.import` files and the `.uid` files the editor adds are
   left out: a read leaves a clone's tracked files as they are). Each is written beside its target
   and renamed over it. Nothing else of the shadow (its editor settings, script class cache,
   GDExtension list) is kept.

Two bridge processes that meet one unimported project take turns through a lock; the second finds
the import done (the stamp of `.godot/imported/` has moved) and does not import again.
"""

from __future__ import annotations

import collections
import logging
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from godot_bridge.engine import godot as engines
from godot_bridge.errors import BridgeError
from godot_bridge.scripts import gdscript_dir
from godot_bridge.serving import locks

log = logging.getLogger("godot_bridge")

CODE_EXTENSIONS = frozenset({"gd", "gdc", "cs", "gdextension", "so", "dll", "dylib", "framework"})
"""Files left out of the shadow: scripts and native libraries, which the editor would run."""

IMPORT_TIMEOUT = 900.0
"""Seconds an import may take (a large project's first import takes minutes), whatever --timeout is."""

_RECOVERY_MODE = (4, 5, 0)
"""The first Godot with --recovery-mode (editor plugins, tool scripts and GDExtensions off)."""

Progress = Callable[[int, int], None]
"""Told (assets imported so far, assets to import) as the editor imports each one."""

_STEP = re.compile(r"^\[\s*\d+% \] reimport \| (.*)$")
"""A step of the editor's import on its stdout (colours taken out): `[ 41% ] reimport | c13.png`.
Godot 4 prints its progress tasks on stdout headless too, a terminal or not (EditorNode's
ProgressDialog, headless branch): first `Started (Re)Importing Assets (N steps)`, then one line
per asset, between lines of its own phases, which end in an ellipsis."""
_TOTAL = re.compile(r"^Started \(Re\)Importing Assets \((\d+) steps\)$")
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")
_PROGRESS = re.compile(r"^\[\s*(\d+%|DONE)\s*\]")
"""Any progress line of the editor's (other tasks, `[ DONE ]`): kept out of a failure's message."""


def stamp(root: Path) -> int | None:
    """Return when the project's import folder last changed (None when there is none): an import
    done by anyone since a request failed shows as a newer stamp."""
    try:
        return (root / ".godot" / "imported").stat().st_mtime_ns
    except OSError:
        return None


def import_project(engine: engines.Engine, root: Path, pack: Path, timeout: float, seen: int | None,
                   announce: Callable[[], None], progress: Progress) -> str | None:
    """Import the assets of `root` (a real project path) unless someone did since `seen` (a stamp()
    taken when the need was found); return None when the project may be served again, else why not.
    `announce` is called just before an import really starts, `progress` as each asset is imported."""
    deadline = time.monotonic() + timeout
    try:
        held = locks.hold_import(root, deadline)
    except BridgeError as exc:
        return exc.message
    except OSError as exc:
        return f"the import of {root} could not take its lock: {exc.strerror or exc}"
    try:
        if stamp(root) != seen:
            return None
        announce()
        with tempfile.TemporaryDirectory(prefix="godot-bridge-import-") as scratch:
            shadow = Path(scratch) / "project"
            left_out = _audit(engine, root, pack, deadline)
            if isinstance(left_out, str):
                return left_out
            _mirror(root, shadow, left_out)
            failure = _run_import(engine, shadow, deadline, progress)
            if failure is not None:
                return failure
            _bring_back(shadow, root)
        return None
    except OSError as exc:
        return f"the import of {root} failed: {exc.strerror or exc}"
    finally:
        held.release()


def assets(root: Path) -> int:
    """How many files of `root` have import settings (a .import file beside them), .godot/ left out."""
    found = 0
    for folder, dirs, files in os.walk(root):
        if Path(folder) == root:
            dirs[:] = [d for d in dirs if d != ".godot"]
        found += sum(1 for name in files if name.endswith(".import"))
    return found


def _audit(engine: engines.Engine, root: Path, pack: Path, deadline: float) -> set[str] | str:
    """Return the project's files the load gate refuses (relative paths), or why it could not tell."""
    argv = [engine.path, "--headless", "--path", str(root), "--main-pack", str(pack), "-s",
            str(gdscript_dir() / "tools" / "audit.gd"), "--", str(root)]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=max(1.0, deadline - time.monotonic()),
                              stdin=subprocess.DEVNULL, check=False, cwd=root)
    except subprocess.TimeoutExpired:
        return f"checking the resources of {root} before importing it ran past the deadline"
    except OSError as exc:
        return f"the engine could not be started to check {root} before importing it: {exc}"
    lines = done.stdout.decode("utf-8", "replace").splitlines()
    if "UNSAFE" not in lines:
        tail = " / ".join(done.stderr.decode("utf-8", "replace").strip().splitlines()[-3:])
        return f"checking the resources of {root} before importing it failed: {tail}"
    return {line.removeprefix("res://") for line in lines[lines.index("UNSAFE") + 1:] if line.startswith("res://")}


def _mirror(root: Path, shadow: Path, left_out: set[str]) -> None:
    """Fill `shadow` with links to the project's files, less what the import must not see."""
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        relative = here.relative_to(root)
        # A linked folder may lead anywhere, its files included: it is not followed.
        dirs[:] = [d for d in dirs if not (here / d).is_symlink() and not (relative == Path(".") and d == ".godot")]
        (shadow / relative).mkdir(parents=True, exist_ok=True)
        for name in files:
            rel = (relative / name).as_posix()
            code = name.rsplit(".", 1)[-1].lower() in CODE_EXTENSIONS
            if code or rel in left_out or rel.removesuffix(".import") in left_out:
                continue
            if name.endswith((".import", ".uid")):
                # Copied, not linked: the editor rewrites these, and it writes through a link to
                # the file it leads to (it keeps links intact when it saves); the project's own
                # stay as they are (_bring_back).
                shutil.copy2(here / name, shadow / relative / name)
            else:
                _link(here / name, shadow / relative / name)
    imported = root / ".godot" / "imported"
    if imported.is_dir():
        (shadow / ".godot" / "imported").mkdir(parents=True)
        for entry in imported.iterdir():
            if entry.is_file() and not entry.is_symlink():
                _link(entry, shadow / ".godot" / "imported" / entry.name)


def _link(source: Path, target: Path) -> None:
    """Make `target` show `source`'s content: a symbolic link, else a hard link, else a copy."""
    for make in (os.symlink, os.link):
        try:
            make(source, target)
            return
        except OSError:
            continue
    shutil.copy2(source, target)


def _run_import(engine: engines.Engine, shadow: Path, deadline: float, progress: Progress) -> str | None:
    argv = [engine.path, "--headless", "--path", str(shadow), "--import"]
    if engine.version_tuple >= _RECOVERY_MODE:
        argv.insert(2, "--recovery-mode")
    try:
        process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   cwd=shadow)
    except OSError as exc:
        return f"the engine's import could not be started: {exc}"
    # The output is read as it comes, for progress; a timer ends an import that runs past the deadline.
    timer = threading.Timer(max(1.0, deadline - time.monotonic()), process.kill)
    timer.start()
    tail: collections.deque[str] = collections.deque(maxlen=3)
    total = done = 0
    last = ""
    try:
        assert process.stdout is not None
        for raw in process.stdout:
            line = _COLOUR.sub("", raw.decode("utf-8", "replace")).strip()
            step = _STEP.match(line)
            if step is None:
                if line and not _PROGRESS.match(line):
                    tail.append(line)
                continue
            started = _TOTAL.match(step[1])
            if started is not None:
                total = total or int(started[1])
            elif total and not step[1].endswith("...") and step[1] != last and done < total:
                # The editor prints a step again when it lasts over a second: one asset, one count.
                done += 1
                progress(done, total)
            last = step[1]
        status = process.wait()
    finally:
        timer.cancel()
        process.kill()
        process.wait()
    if status != 0 and time.monotonic() >= deadline:
        return "the engine's import ran past the deadline"
    if status != 0:
        return f"the engine's import exited with status {status}: {' / '.join(tail)}"
    return None


def _bring_back(shadow: Path, root: Path) -> None:
    """Copy what the import made into the project: what it made in .godot/ (artefacts, the uid
    cache), and a .import file for an asset that has none (without it the engine cannot load the
    asset; the editor writes the same when it opens the project), said in the log.

    The user's own .import files stay as they are: the editor rewrites them with the parameters it
    adds since the file was written (a clone of tps-demo got 135 modified files from one read),
    but it imported with the values they hold, so the artefacts match them as they are. Nor are
    .uid files added beside shaders and scripts: the uid cache in .godot/ holds what a request needs.
    """
    written: list[str] = []
    for folder, _dirs, files in os.walk(shadow):
        here = Path(folder)
        relative = here.relative_to(shadow)
        for name in files:
            made = here / name
            if made.is_symlink():
                continue  # the project's own file, unchanged
            rel = relative / name
            target = root / rel
            new_import = name.endswith(".import") and not target.exists() and (root / rel).with_suffix("").exists()
            keep = (rel.parts[:2] == (".godot", "imported") or new_import
                    or (rel == Path(".godot/uid_cache.bin") and not target.exists())
                    or (rel == Path(".godot/.gdignore") and not target.exists()))
            if keep:
                _put(made, target)
            if new_import:
                written.append(rel.as_posix())
    if written:
        shown = ", ".join(written[:5]) + (f" and {len(written) - 5} more" if len(written) > 5 else "")
        log.warning("godot-bridge: wrote %d .import file(s) beside assets that had none, as the Godot editor "
                    "does: %s", len(written), shown)


def _put(made: Path, target: Path) -> None:
    """Write `made`'s bytes at `target` through a temp file renamed over it (skipped when equal)."""
    data = made.read_bytes()
    try:
        if target.read_bytes() == data:
            return
    except OSError:
        pass
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = target.with_name(f".{target.name}.bridge-{os.getpid()}.tmp")
    try:
        temp.write_bytes(data)
        os.replace(temp, target)
    finally:
        temp.unlink(missing_ok=True)
