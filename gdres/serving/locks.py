"""Per-file locks around a scene edit or a resource_update, and removal of the temp files a killed
engine left.

Editing a scene or updating a resource in place is read-modify-write inside the engine, so two
bridge processes (or two workers of one) changing the same file could lose an update. Such a
request therefore holds an exclusive lock on the files it writes, from before it is sent until
its reply arrives or its engine is dead. Every other write replaces its file whole by a rename,
which needs no lock (decisions.md §6). The pool takes those locks with `try_hold()`, which never
waits: the thread that would wait is the one that reads the replies that let locks go, its own
and (through another process doing the same) other processes' too.
Lock files live in the user's cache (`~/.cache/gdres/locks/`): nothing is ever created in
the project for them. A file's lock is one of `SLOTS` lock files, chosen by a hash of its real path,
so that the cache keeps no more of them however many files were edited (one per file grew without
end: filelock leaves a lock file in place on Linux and macOS, where removing it safely would need
more than it offers). The locks are filelock's: `flock` on Linux and macOS, `msvcrt.locking` on
Windows.

The engine saves through a temp file beside the target (named by gdscript/files/temp_name.json) and
renames it over the target (gdscript/files/saving.gd). An engine killed between the two leaves the
temp behind; once that engine is dead, `sweep()` removes the temps its pid left beside the files it
was writing (the name is made in gdscript/files/atomic_write.gd from the same template);
`sweep_ended()` those of engines whose bridge died.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from gdres.errors import SaveFailed, Timeout
from gdres.requests import paths
from gdres.scripts import temp_name
from gdres.settings import cache_dir

if TYPE_CHECKING:
    import filelock

POLL = 0.005
"""Pause between two tries of a lock that another request holds."""
SLOTS = 16**3
"""Lock files for the files of rewrites, at most. Two files may share one: a rewrite of one then
waits for a rewrite of the other as for one of the same file, which costs a request's time, for
1 pair in 4,096. A pool never waits blocked (try_hold()), so this holds within one process too."""


def lock_dir() -> Path:
    """Return the folder of the lock files: XDG_CACHE_HOME (or ~/.cache)/gdres/locks."""
    return Path(cache_dir(), "locks")


def lock_file(target: Path) -> Path:
    """Return the lock file that guards rewrites of `target` (a real path)."""
    return lock_dir() / f"file-{int(_hash(target), 16) % SLOTS:03x}.lock"


def _hash(target: Path) -> str:
    return hashlib.sha256(os.fsencode(target)).hexdigest()


class Held:
    """Exclusive locks on the files one request rewrites (`targets`); `release()` drops them."""

    def __init__(self, targets: list[Path], held: list[filelock.FileLock]) -> None:
        self.targets = targets
        self._held = held

    def release(self) -> None:
        """Drop the locks (idempotent)."""
        held, self._held = self._held, []
        for lock in held:
            lock.release()


class Busy(Exception):
    """`try_hold()` found a target locked by another request."""

    def __init__(self, target: Path) -> None:
        super().__init__(target)
        self.target = target

    def timeout(self) -> Timeout:
        """The reply of a request that waited for this lock until its deadline."""
        return Timeout(f"{self.target} stayed locked by another gdres request (one rewriting it, or a "
                       "file that shares its lock file) until the deadline passed")


def hold_import(root: Path, deadline: float) -> Held:
    """Take the lock of importing project `root` (a real path), waiting until `deadline`: else
    raise Timeout, or SaveFailed as try_hold() does.

    Its own lock file, one per project, shared with no file's: it is waited for in the pool's
    thread, which a lock held by a request in flight there would stop until the deadline."""
    files = {root: lock_dir() / f"import-{_hash(root)[:40]}.lock"}
    while True:
        try:
            return _take(files)
        except Busy:
            if time.monotonic() >= deadline:
                raise Timeout(f"another gdres process importing {root} held the import lock until the "
                              "deadline passed") from None
        time.sleep(POLL)


def try_hold(targets: Iterable[Path]) -> Held:
    """Lock every target (a real path) now, or raise holding none: Busy when another request holds
    one, or SaveFailed when the lock files cannot be made (the write cannot be made safely either)."""
    return _take({target: lock_file(target) for target in targets})


def _take(files: dict[Path, Path]) -> Held:
    """Take the lock file of each target (target -> its lock file), each once."""
    if not files:
        return Held([], [])
    guarded: dict[Path, Path] = {}  # each lock file, once, with the first target it guards
    for target in sorted(files):
        guarded.setdefault(files[target], target)
    taken: list[filelock.FileLock] = []
    try:
        lock_dir().mkdir(parents=True, exist_ok=True)
        # One global order (sorted lock files) so that two requests locking the same files cannot deadlock.
        for lock in sorted(guarded):
            taken.append(_lock(lock, guarded[lock]))
        return Held(sorted(files), taken)
    except OSError as exc:
        Held([], taken).release()
        target = min(files)
        raise SaveFailed(f"the lock that guards {target} could not be taken in {lock_dir()}: "
                         f"{exc.strerror or exc}") from None
    except BaseException:
        Held([], taken).release()
        raise


def _lock(file: Path, target: Path) -> filelock.FileLock:
    # Imported here: it takes ~20 ms, and only scene edits and updates in place take a lock.
    import filelock

    # Not thread-local: the lock may be let go by another thread than the one that took it (the
    # MCP server runs its calls on a pool of threads).
    lock = filelock.FileLock(file, mode=0o600, thread_local=False)
    try:
        lock.acquire(blocking=False)  # OSError: see _take()
    except filelock.Timeout:
        raise Busy(target) from None
    return lock


def sweep(targets: Iterable[str], pid: int) -> list[str]:
    """Remove the temp files that the dead engine `pid` left beside `targets`; return them."""
    return [temp for temp, owner in _temps(targets) if owner == pid and _unlink(temp)]


def sweep_ended(targets: Iterable[str], wait: float) -> list[str]:
    """Remove the temp files beside `targets` of every engine that has ended; return them.

    For the engines of a bridge process that died (a fleet's part): which engines those were died
    with it, but each temp file names its engine. One named by a Godot still running is given `wait`
    seconds to end (its next heartbeat meets the broken pipe); a temp file of any process that runs
    on stays. Never raises: a file that cannot be removed stays."""
    import psutil  # here: only a fleet whose part died needs it

    removed: list[str] = []
    deadline = time.monotonic() + wait
    for temp, owner in _temps(targets):
        try:
            engine = psutil.Process(owner)
            if "godot" in engine.name().lower():
                engine.wait(max(0.0, deadline - time.monotonic()))
            alive = psutil.pid_exists(owner)
        except psutil.NoSuchProcess:
            alive = False
        except (psutil.Error, ValueError, OverflowError):
            alive = True
        if not alive and _unlink(temp):
            removed.append(temp)
    return removed


def _temp_pattern(template: str) -> re.Pattern[str]:
    """The names `template` (temp_name.json) makes: {file} any name, {pid} and {n} decimal numbers (0-9
    only, few enough for a pid: str.isdigit() takes '²', which int() refuses), {ext} no dot."""
    fields = {"file": "(?P<file>.+)", "pid": "(?P<pid>[0-9]{1,10})", "n": "(?P<n>[0-9]{1,10})", "ext": "(?P<ext>[^.]*)"}
    parts = re.split(r"\{(\w+)\}", template)
    return re.compile("".join(fields[part] if at % 2 else re.escape(part) for at, part in enumerate(parts)))


_TEMP = _temp_pattern(temp_name())
"""An engine temp file's name."""


def _temps(targets: Iterable[str]) -> Iterable[tuple[str, int]]:
    """Each engine temp file beside `targets` (gdscript/files/atomic_write.gd), with its engine's pid:
    each folder read once, however many of its files are named. Names are compared folded (NFC, case),
    as the engine names a temp file after the name the folder stores, which on a file system that
    ignores case may be spelled otherwise than the request spelled it."""
    folders: dict[str, set[str]] = {}
    for target in targets:
        folder, name = os.path.split(target)
        folders.setdefault(folder or ".", set()).add(paths.loosely_folded(name))
    for folder, names in folders.items():
        try:
            entries = [entry.name for entry in os.scandir(folder)]
        except OSError:
            continue
        for entry in entries:
            found = _TEMP.fullmatch(entry)
            if (found is not None and paths.loosely_folded(found["file"]) in names
                    and found["ext"] == (found["file"].rpartition(".")[2] if "." in found["file"] else "")):
                yield os.path.join(folder, entry), int(found["pid"])


def _unlink(path: str) -> bool:
    """Remove a file; whether it was removed (one gone already, or that cannot be removed, stays)."""
    try:
        os.unlink(path)
    except OSError:
        return False
    return True


Snapshot = dict[Path, "bytes | None"]
"""Files as they were: their bytes, or None for a file that did not exist."""


def snapshot(paths: Iterable[Path]) -> Snapshot:
    """Return the current bytes of each file (None where there is none)."""
    taken: Snapshot = {}
    for path in paths:
        try:
            taken[path] = path.read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            taken[path] = None
        except OSError:
            continue  # a folder or an unreadable file: nothing the engine could have replaced
    return taken


def restore(taken: Snapshot) -> list[Path]:
    """Put back every file that differs from `taken`, each atomically; return those put back.

    Best effort, and it never raises: it runs among the releases of a dead engine's requests,
    and one file that cannot be put back (its folder removed meanwhile) must not stop the others.
    """
    restored: list[Path] = []
    for path, old in taken.items():
        if snapshot([path]).get(path, old) == old:
            continue
        try:
            if old is None:
                path.unlink(missing_ok=True)
            else:
                replace(path, old)
        except OSError:
            continue
        restored.append(path)
    return restored


def replace(path: Path, data: bytes, mode: int = -1) -> None:
    """Make `data` the whole file at `path` at once (with permissions `mode` when >= 0): written to a
    fresh temp file beside it and renamed over it. The temp file is made new (O_EXCL), so a link
    planted at a name the bridge might use is never written through, and the rename replaces a link
    at `path` itself rather than following it. Nothing of the temp file stays, whatever fails."""
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".bridge.tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            if mode >= 0 and hasattr(os, "fchmod"):
                os.fchmod(file.fileno(), mode)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
