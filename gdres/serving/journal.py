"""The journal of an atomic batch: every write of the batch lands, or none does, even if the bridge
is killed half-way.

A rollback journal, as SQLite keeps one. Before the engine changes anything in the project for a
line of the batch, it appends to the journal what it is about to do (gdscript/files/saving.gd
`_note()`): "stage" (the temp file it will write and the folders it will make for it), then
"commit" (the file it will replace or remove, with the bytes it holds now or none, and the sha256
of what it will hold or none); a move notes "move" (the file, and where it goes) and "rmdir" (a
folder it empties and removes). The journal is a JSON Lines file in the user's cache,
`~/.cache/gdres/journals/<project hash>/journal.jsonl`, beside a lock file that the batch
holds from its first line to its end; the engines of an atomic batch may write that one file, and
nothing else outside the project (engine/wall.py), and they end before the bridge undoes anything.
A file is put back only if it still holds what the batch wrote, through a fresh temp file renamed
over it; only paths inside the project, outside the engine's own files, are touched.

- The batch succeeds: the journal is deleted. That unlink is the moment the batch is done.
- A line fails: the bridge undoes every entry, newest first (a replaced file gets its old bytes
  back, a created one goes, temp files and the folders made go), then deletes the journal.
- The bridge dies (SIGKILL, a closed terminal): its lock goes with it. The next request on the
  project (a `run`, a `batch`, an MCP call or a `Bridge` call: each batch looks when it first names
  the project) finds the journal, takes the lock, waits for the batch's
  engines to be gone (each ends within a quarter second of its bridge, engine/worker.py), and
  undoes it. A line's entry is written and flushed before the change it describes, so the files of
  the batch are then all as they were before it.

Durability is the operating system's: the entries are flushed to it, not synced to the disk, so a
kill of the bridge or its engines is covered, a crash of the machine itself is not.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import logging
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gdres.errors import SaveFailed
from gdres.requests import paths
from gdres.serving import locks
from gdres.settings import cache_dir

if TYPE_CHECKING:
    import filelock

log = logging.getLogger("gdres")

RECOVERY_WAIT = 60.0
"""Seconds a command waits for another one that is undoing a batch on the same project."""
ENGINES_GONE_WITHIN = 5.0
"""Seconds a recovery waits for a dead batch's engines to end by themselves before it ends them."""
_POLL = 0.02


def folder_of(root: Path) -> Path:
    """The folder of the journal of the project at `root` (a real path)."""
    return Path(cache_dir(), "journals", hashlib.sha256(os.fsencode(root)).hexdigest()[:32])


class Journal:
    """The journal of one atomic batch on the project at `root`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.folder = folder_of(root)
        self.path = self.folder / "journal.jsonl"
        self._lock: filelock.FileLock | None = None

    def begin(self, deadline: float) -> None:
        """Take the project's batch lock (another atomic batch on it holds it until it ends; wait
        until `deadline`), undo what a dead batch left, and start an empty journal."""
        import filelock

        try:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            lock = filelock.FileLock(self.folder / "lock", mode=0o600, thread_local=False)
            lock.acquire(timeout=max(0.0, deadline - time.monotonic()))
        except filelock.Timeout:
            raise SaveFailed(f"another atomic batch on {self.root} held it until the deadline passed") from None
        except OSError as exc:
            raise SaveFailed(f"the journal of the atomic batch could not be made in {self.folder}: "
                             f"{exc.strerror or exc}") from None
        self._lock = lock
        left = _undo(self.root, self.path)[1]
        if left:
            self._release()
            raise SaveFailed(f"an earlier atomic batch on {self.root} was cut short, and {', '.join(left)} could not "
                             "be put back as it was; see to that file, then run the batch again")
        self._append({"project": str(self.root), "bridge": os.getpid()})

    def engine_started(self, pid: int) -> None:
        """Note an engine that serves the batch: a recovery waits for it to be gone."""
        # psutil is imported where used, as in engine/process.py: it costs ~15-25 ms, and a `run`
        # imports this module on its way to its engine's launch, where no journal is left to undo.
        import psutil

        with contextlib.suppress(psutil.Error):
            self._append({"engine": pid, "started": psutil.Process(pid).create_time()})

    def note_rewrite(self, path: Path, old: bytes, new: bytes) -> None:
        """Note that the bridge itself is about to make `path` hold `new` instead of `old` (an import
        that rewrites a .import): undone with the engines' writes."""
        self._append({"commit": str(path), "old": base64.b64encode(old).decode(),
                      "new": hashlib.sha256(new).hexdigest(), "mode": -1})

    def commit(self) -> None:
        """The batch is done: every write stays."""
        self.path.unlink(missing_ok=True)
        self._release()

    def rollback(self) -> list[str]:
        """Undo every write of the batch (its engines have ended); return the files that could not
        be put back (project-relative): then the journal stays, for the next command to try again."""
        left = _undo(self.root, self.path, wait=False)[1]
        self._release()
        return left

    def _append(self, entry: dict[str, Any]) -> None:
        # Never through a link: the engines may write this file (and nothing else outside the project).
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as file:
            file.write(json.dumps(entry) + "\n")

    def _release(self) -> None:
        lock, self._lock = self._lock, None
        if lock is not None:
            lock.release()


def recover(root: Path) -> list[str]:
    """Undo the atomic batch a dead bridge left on the project at `root`, if it left one; return the
    files put back or removed. A live batch's journal is left alone; one that another command is
    undoing (its bridge is dead, its lock held) is waited for."""
    folder = folder_of(root)
    journal = folder / "journal.jsonl"
    if not journal.exists():
        return []
    import filelock

    lock = filelock.FileLock(folder / "lock", mode=0o600, thread_local=False)
    try:
        lock.acquire(timeout=0 if _owner_alive(journal) else RECOVERY_WAIT)
    except (filelock.Timeout, OSError):
        return []
    try:
        undone, left = _undo(root, journal)
    finally:
        lock.release()
    if undone:
        shown = ", ".join(undone[:10]) + (f" and {len(undone) - 10} more" if len(undone) > 10 else "")
        log.warning("gdres: an atomic batch or a move on %s was cut short; its writes were undone: %s", root, shown)
    if left:
        log.warning("gdres: %s could not be put back as they were before the atomic batch; the next "
                    "command on the project tries again", ", ".join(left))
    return undone


def _owner_alive(journal: Path) -> bool:
    """Whether the bridge that began the batch of `journal` still runs (its first entry names it)."""
    entries = _entries(journal)
    pid = entries[0].get("bridge") if entries else None
    if not isinstance(pid, int):
        return False
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _undo(root: Path, journal: Path, *, wait: bool = True) -> tuple[list[str], list[str]]:
    """Undo the entries of `journal`, newest first, then delete it, unless a file could not be put
    back. `wait`: its engines may still be running (their bridge died): wait for them to end first.
    Return the files put back or removed, and those that could not be (project-relative)."""
    entries = _entries(journal)
    if wait:
        _wait_for_engines([(entry["engine"], entry.get("started")) for entry in entries
                           if isinstance(entry.get("engine"), int)])
        # Read again: an engine may have gone on noting (and making) changes until it ended.
        entries = _entries(journal)
    undone: list[str] = []
    left: list[str] = []
    for entry in reversed(entries):
        if "move" in entry:
            back = _move_back(_inside(root, entry["move"]), _inside(root, entry.get("to")))
            if back is not None:
                (undone if back[1] else left).append(back[0].relative_to(root).as_posix())
        elif "rmdir" in entry:
            folder = _inside(root, entry["rmdir"])
            if folder is not None:
                with contextlib.suppress(OSError):
                    folder.mkdir()
        elif "commit" in entry:
            path = _inside(root, entry["commit"])
            if path is None:
                continue
            done = _put_back(path, entry.get("old"), entry.get("mode", -1), entry.get("new"))
            if done is not None:
                (undone if done else left).append(path.relative_to(root).as_posix())
        elif "stage" in entry:
            temp = _inside(root, entry.get("temp", ""))
            if temp is not None:
                with contextlib.suppress(OSError):
                    temp.unlink(missing_ok=True)
            for made in reversed(entry.get("folders", [])):
                folder = _inside(root, made)
                if folder is not None:
                    with contextlib.suppress(OSError):
                        folder.rmdir()  # only if empty: nothing else is ever removed
    if not left:
        journal.unlink(missing_ok=True)
    return sorted(set(undone)), sorted(set(left))


def _entries(journal: Path) -> list[dict[str, Any]]:
    try:
        lines = journal.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    entries: list[dict[str, Any]] = []
    for line in lines:
        try:
            entries.append(json.loads(line))
        except ValueError:
            continue  # the last entry, cut short by a kill: the change it announced was not made
    return entries


def _inside(root: Path, path: Any) -> Path | None:
    """`path` (an absolute real path, as the engine wrote it) if it lies in the project and is none
    of the engine's own files, else None: a journal names nothing else, and nothing else is touched."""
    if not isinstance(path, str) or not os.path.isabs(path):
        return None
    candidate = Path(os.path.realpath(os.path.dirname(path))) / os.path.basename(path)
    try:
        relative = candidate.relative_to(root)
    except ValueError:
        return None
    # A move rewrites the settings and the uid cache that name the files it moves (saving.gd).
    inside = relative.as_posix()
    if not relative.parts or (paths.is_engine_file(inside) and inside not in paths.SETTINGS_FILES):
        return None
    return candidate


def put_back(root: Path, path: Any, old: Any, new: Any) -> bool:
    """Give the project file `path` (an absolute real path, as the engine names it) its `old` bytes
    (base64) if it still holds `new` (sha256): a write the engine made that is not to stay (an
    import_update whose import was refused). Whether it was put back."""
    inside = _inside(root, path)
    return inside is not None and isinstance(old, str) and bool(_put_back(inside, old, -1, new))


def _move_back(origin: Path | None, moved: Path | None) -> tuple[Path, bool] | None:
    """Move the file the batch moved from `origin` to `moved` back, if it is there and nothing is at
    `origin`: (origin, whether it was moved back); None: nothing to do."""
    if origin is None or moved is None or not moved.is_file() or os.path.lexists(origin):
        return None
    try:
        os.rename(moved, origin)
        return origin, True
    except OSError as exc:
        log.warning("gdres: %s could not be moved back to %s: %s", moved, origin, exc)
        return origin, False


def _put_back(path: Path, old: Any, mode: Any, new: Any) -> bool | None:
    """Give `path` its old bytes (base64 text; None: no file), atomically, if it still holds what the
    batch wrote (`new`, its sha256; None: the batch removed it, and it is still not there): a file
    another program changed since, or that the batch never replaced (killed between noting and
    renaming), is left as it is. Whether it was put back (None: nothing to do)."""
    try:
        now = path.read_bytes() if path.is_file() else None
    except OSError:
        return False
    if (now is not None or os.path.lexists(path)) if new is None else (
            now is None or hashlib.sha256(now).hexdigest() != new):
        return None
    try:
        if old is None:
            path.unlink()
        else:
            locks.replace(path, base64.b64decode(old), mode if isinstance(mode, int) else -1)
        return True
    except (OSError, ValueError) as exc:
        log.warning("gdres: %s could not be put back as it was before the atomic batch: %s", path, exc)
        return False


def _wait_for_engines(engines: list[tuple[int, Any]]) -> None:
    """Wait until the engines of a dead batch (pid, start time) are gone (each ends within a quarter
    second of its bridge, when it next writes to the pipe its bridge no longer reads); end those
    that are not. A pid now held by another process (its start time differs) is left alone, and a
    zombie is gone (an engine whose bridge died is reaped by whoever adopted it, maybe never)."""
    import psutil

    deadline = time.monotonic() + ENGINES_GONE_WITHIN
    for pid, started in engines:
        try:
            process = psutil.Process(pid)
            if not isinstance(started, (int, float)) or abs(process.create_time() - started) > 0.01:
                continue
            while process.status() != psutil.STATUS_ZOMBIE:
                if time.monotonic() >= deadline:
                    process.kill()
                    deadline += ENGINES_GONE_WITHIN
                time.sleep(_POLL)
        except psutil.Error:
            continue
