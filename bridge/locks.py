"""Per-file locks around a request's writes, and removal of the temp files a killed engine left.

Editing a scene is read-modify-write inside the engine, so two bridge processes (or two workers of
one) editing the same file could lose an update. Each request therefore holds an exclusive `flock`
on every file it writes, from before it is sent until its reply arrives or its engine is dead.
Lock files live in the user's cache (`~/.cache/godot-bridge/locks/`), one per target, named by a
hash of the target's real path: nothing is ever created in the project for them.

The engine saves through a temp file `.<file>.<pid>-<n>.tmp.<ext>` beside the target and renames it
over the target (gdscript/saving.gd). An engine killed between the two leaves the temp behind;
whoever holds the target's lock removes the temps whose engine process no longer runs.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import re
import time
from pathlib import Path
from typing import Iterable

from .errors import Timeout

_TEMP = re.compile(r"(\d+)(?:-\d+)?\.tmp\.[^./]+")
"""After `.<file>.`: the writer's pid, a random number, `.tmp.` and the extension. A name with one
number only (an older engine-side writer's random number) is read the same way: under the lock no
live request can be writing it."""
_POLL = (0.001, 0.05)
"""First and longest pause between two tries of a lock that another process holds."""


def lock_dir() -> Path:
    """Return the folder of the lock files: XDG_CACHE_HOME (or ~/.cache)/godot-bridge/locks."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "godot-bridge" / "locks"


class Held:
    """Exclusive locks on the files one request writes; `release()` sweeps stale temps, then unlocks."""

    def __init__(self, targets: list[Path], fds: list[int]) -> None:
        self.targets = targets
        self._fds = fds

    def release(self) -> None:
        """Remove temps that dead engines left beside the targets, then drop the locks (idempotent)."""
        fds, self._fds = self._fds, []
        try:
            if fds:
                for target in self.targets:
                    sweep(target)
        finally:
            for fd in fds:
                os.close(fd)


def hold(targets: Iterable[Path], deadline: float) -> Held:
    """Lock every target (a real path) before `deadline`, or raise Timeout holding none."""
    unique = sorted(set(targets))
    if not unique:
        return Held([], [])
    folder = lock_dir()
    folder.mkdir(parents=True, exist_ok=True)
    fds: list[int] = []
    try:
        # One global order (sorted paths) so that two requests locking the same files cannot deadlock.
        for target in unique:
            fds.append(_lock(folder, target, deadline))
        held = Held(unique, fds)
        for target in unique:
            sweep(target)
        return held
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise


def _lock(folder: Path, target: Path, deadline: float) -> int:
    name = hashlib.sha256(os.fsencode(target)).hexdigest()[:40] + ".lock"
    fd = os.open(folder / name, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    pause = _POLL[0]
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                os.close(fd)
                raise
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            os.close(fd)
            raise Timeout(
                f"{target} stayed locked by another godot-bridge request until the deadline passed"
            )
        time.sleep(min(pause, remaining))
        pause = min(pause * 2, _POLL[1])


def sweep(target: Path) -> list[Path]:
    """Remove the temp files of `target` whose engine process has ended; return what was removed."""
    prefix = f".{target.name}."
    removed: list[Path] = []
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return removed
    for entry in entries:
        if not entry.name.startswith(prefix):
            continue
        match = _TEMP.fullmatch(entry.name[len(prefix) :])
        if match is None or _running(int(match[1])):
            continue
        try:
            os.unlink(entry.path)
            removed.append(Path(entry.path))
        except FileNotFoundError:
            pass
    return removed


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
