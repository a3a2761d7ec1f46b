"""A batch served by several bridge processes: one Python process keeps only a few engines busy.

All of a pool's Python work on a request (decoding, validation, confinement, framing, the reply)
runs in one thread, ~0.15-0.3 ms of CPU a request, while an engine spends ~1-1.5 ms on it: one
process feeds about four engines, and a batch on more cores waits for it. So `batch --jobs J` on
more than ENGINES_PER_PROCESS engines starts several `gdres batch` processes (the parts),
each a whole bridge with a share of the engines, and this process only routes lines to them and
merges their replies back into input order. A part does everything a lone bridge does, and several
bridges on one project are already safe together: each write is atomic, rewrites take file locks,
an import takes the project's import lock.

    lines ──decode, route──▶ part 1 (gdres batch --jobs 4) ──▶ engines
                       └───▶ part 2 ...
    replies ◀── merged in input order ◀── each part's replies, in its own input order

Ordering. Requests that touch one file keep their order across parts as a pool keeps them across
engines (ordering.py): a line goes to the part that has the unfinished requests it must follow,
and waits while they are on two. The router names files without preparing the request (that is
the parts' work): by the real path of its folder (cached) and its name, a link followed, case and
Unicode form folded, so that two names of one file always meet (two files may share a name here,
which only costs overlap). A request whose files it cannot name that way (a uid:// that does not
resolve yet, a project it cannot read) is a barrier: it waits for every part to finish, runs
alone, and holds the next line back until it is answered.

Lines that are no JSON object get their error reply here, as a pool would give it. A part that
ends before answering (killed, say) fails the requests it had with `engine_crashed`; later lines go
to the parts still running.
"""

from __future__ import annotations

import collections
import contextlib
import os
import queue
import stat
import subprocess
import threading
import time
from collections.abc import Callable, Generator, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gdres import platform
from gdres.errors import BridgeError, EngineCrashed
from gdres.requests import paths, uids
from gdres.requests.models import REQUEST_MODELS
from gdres.requests.request import READ, WRITE, Reply, decode, refuse
from gdres.serving import locks
from gdres.serving.ordering import FileUses

AHEAD = 2048
"""Lines routed ahead of the replies written, so memory stays flat on an endless input."""
_SEND_EVERY = 16
"""Lines gathered for a part before one write to its pipe (all are written before the router waits)."""
_CACHED = 4096
"""Folders whose real paths the router keeps."""
_EXIT_WAIT = 5.0
"""Seconds a part whose output ended is given to exit, for its exit status."""
_ORPHAN_GRACE = 0.5
"""Seconds the files of a part that died owing replies stay taken: twice the engine's heartbeat
period (a quarter second), after which an engine whose bridge is gone has ended (on Windows, at
once: the part's Job Objects end its engines with it)."""

Files = tuple[tuple[str, int], ...]


def shares(jobs: int, processes: int) -> list[int]:
    """Split `jobs` engines over `processes` parts, as evenly as they go."""
    base, extra = divmod(jobs, processes)
    return [base + (part < extra) for part in range(processes)]


class Router:
    """Name the files a decoded request touches, for ordering only (the part checks them all again).

    `None` means the router cannot tell: the request is then a barrier."""

    def __init__(self, cwd: str) -> None:
        self._cwd = cwd
        self._roots: dict[str, str | None] = {}
        self._folders: dict[str, str] = {}

    def files(self, raw: dict[str, Any]) -> Files | None:
        named = self._named(raw)
        if named is None:
            return None
        return tuple((paths.loosely_folded(whole), role) for whole, role in named)

    def root(self, raw: dict[str, Any]) -> str | None:
        """The real path of the project `raw` names, or None where it names none."""
        return self._root(raw.get("project_path"))

    def reaches_project(self, raw: dict[str, Any]) -> bool:
        """Whether `raw` may write any file of its project (a move): every line on it must be served where it is."""
        model = REQUEST_MODELS.get(raw.get("op"))  # type: ignore[arg-type]
        return model is not None and model.reaches_project

    def written(self, raw: Any) -> list[str]:
        """The real paths of the files `raw` may write (none where the router cannot tell)."""
        named = self._named(raw) if isinstance(raw, dict) else None
        return [whole for whole, role in named or () if role == WRITE]

    def _named(self, raw: dict[str, Any]) -> Files | None:
        op = raw.get("op")
        model = REQUEST_MODELS.get(op) if isinstance(op, str) else None
        if model is None:
            return ()  # refused by the part, unread: it touches nothing
        if model.reaches_project:
            return None  # it may write any file of its project (a move): it runs alone
        named: list[tuple[str, int]] = []
        for member, role in model.files.items():
            for name in (member, *model.spellings.get(member, ())):
                value = raw.get(name)
                if value is None:
                    continue
                if not isinstance(value, str):
                    return ()  # refused by validation: the request touches nothing
                root = self._root(raw.get("project_path"))
                if root is None:
                    return None
                if value.startswith(uids.PREFIX):
                    try:
                        value = uids.resolve(Path(root), value, field=name)
                    except BridgeError:
                        return None  # it may name a file that an earlier line makes
                try:
                    relative = paths.normalise(value, field=name)
                except BridgeError:
                    return ()  # normalise() looks at no file: the part refuses the whole request too
                named.append((self._identity(root, relative), WRITE if role.writes else READ))
        return tuple(named)

    def _root(self, project_path: Any) -> str | None:
        if not isinstance(project_path, str):
            return None
        if project_path not in self._roots:
            if len(self._roots) >= _CACHED:
                self._roots.clear()
            try:
                self._roots[project_path] = paths.project_root(project_path, self._cwd)
            except BridgeError:
                self._roots[project_path] = None
        return self._roots[project_path]

    def _identity(self, root: str, relative: str) -> str:
        """The file's real path: its folder resolved once per batch, the file itself if a link."""
        folder, _, name = relative.rpartition("/")
        key = f"{root}/{folder}"
        real = self._folders.get(key)
        if real is None:
            if len(self._folders) >= _CACHED:
                self._folders.clear()
            real = self._folders[key] = os.path.realpath(key)
        whole = f"{real}/{name}"
        with contextlib.suppress(OSError):
            if stat.S_ISLNK(os.lstat(whole).st_mode):
                whole = os.path.realpath(whole)
        return whole


@dataclass(eq=False)
class _Part:
    """One bridge process of the fleet and what it owes."""

    number: int
    process: subprocess.Popen[bytes]
    replies: collections.deque[str] = field(default_factory=collections.deque)
    """Its replies not yet merged, each with its status mark (`+` ok, `-` error) in front."""
    unsent: list[bytes] = field(default_factory=list)
    owed: int = 0
    """Lines routed to it (sent or gathered) and not yet answered."""
    closed: bool = False
    """Its output ended: it is sent nothing more, and its files stay taken until it has `ended`."""
    ended: bool = False
    """What it owes beyond `replies` never comes, and no engine of its still writes."""


@dataclass
class _Line:
    """One input line in the order of replies: the part serving it, or its reply made here."""

    part: _Part | None
    files: Files | None
    raw: Any
    reply: Reply | None = None


class Fleet:
    """Serve a batch of JSON lines through one `gdres batch --part` process per share of engines.

    `argv(jobs)` is the command line of a part serving with `jobs` engines; `cwd` is where relative
    project paths are taken from (the parts run there too). A part marks each reply line with its
    status, `+` for ok and `-` for an error, so that no reply is decoded here.

    Three kinds of thread share the state below, under one lock held only for moments: the caller's
    (merging), the router's, and a reader per part. A thread that must wait says so under the lock
    and waits on a queue of its own, which another puts a token on once it changed what it waits
    for. The caller's thread never waits on a condition, and holds the lock only for moments: Ctrl-C,
    raised in it wherever it is, could leave a condition's lock held inside its wait (a known CPython
    hazard; seen here in a first version), and the other threads waiting behind it.
    """

    def __init__(self, argv: Callable[[int], list[str]], engine_shares: Sequence[int], cwd: str) -> None:
        self._lock = threading.Lock()
        self._merger_wake: queue.SimpleQueue[None] = queue.SimpleQueue()
        self._router_wake: queue.SimpleQueue[None] = queue.SimpleQueue()
        self._merger_waits = False
        self._router_waits = False
        self._cwd = cwd
        self._router = Router(cwd)
        self._uses: FileUses[_Part] = FileUses()
        self._order: collections.deque[_Line] = collections.deque()
        self._routed = 0
        self._written = 0
        self._input_done = False
        self._failure: BaseException | None = None
        self._cancelled = False
        self.interrupted = False
        """Set by the caller on Ctrl-C: the parts had it from the terminal too, and get no second one."""
        env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
        self._parts = [_Part(number, subprocess.Popen(argv(jobs), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                                      cwd=cwd, env=env))
                       for number, jobs in enumerate(engine_shares, 1)]
        self._readers = [threading.Thread(target=self._read, args=(part,), name=f"fleet-part-{part.number}",
                                          daemon=True) for part in self._parts]
        for reader in self._readers:
            reader.start()

    def map(self, lines: Iterable[str], *, eager: bool) -> Generator[tuple[bool, Reply | str], None, None]:
        """Yield (ok, reply) for each line in input order: the reply as a part wrote it (JSON text
        ending in a newline), or one made here. `eager`: hand each line to its part at once (for an
        input that may pause); otherwise a few are gathered per write."""
        router = threading.Thread(target=self._route, args=(lines, eager), name="fleet-router", daemon=True)
        router.start()
        finished = signalled = False
        try:
            while True:
                with self._lock:
                    answerable = self._answerable()
                    ended = answerable and not self._order
                    if answerable and not ended:
                        out = self._answer(self._order.popleft())
                        self._written += 1
                    self._merger_waits = not answerable
                    wake_router = answerable and self._router_waits
                    if wake_router:
                        self._router_waits = False
                if not answerable:
                    self._merger_wake.get()
                    continue
                if wake_router:
                    self._router_wake.put(None)
                if ended:
                    break
                yield out
            finished = True
            if self._failure is not None:
                raise self._failure
        except KeyboardInterrupt:
            # Ctrl-C in a terminal reaches every process of the group: each part stops on its own, and a
            # second interrupt would cut short what it does to stop cleanly.
            signalled = True
            raise
        finally:
            self._cancelled = True
            self._router_wake.put(None)
            if finished:
                router.join()
            # Else the router may be waiting for input that never comes: it is left, as a daemon.
            self.close(interrupt=not finished and not signalled and not self.interrupted)

    def ready(self) -> bool:
        """Whether the next reply of `map()` is there without waiting."""
        with self._lock:
            return bool(self._order) and self._answerable()

    def close(self, *, interrupt: bool = False) -> None:
        """End every part: its input closes, so it finishes what it was sent and exits; with
        `interrupt` it stops as on Ctrl-C (what its engines are serving still finishes whole)."""
        for part in self._parts:
            if interrupt and part.process.poll() is None:
                platform.current().interrupt(part.process)
            with contextlib.suppress(OSError, ValueError):
                assert part.process.stdin is not None
                part.process.stdin.close()
        for part in self._parts:
            part.process.wait()
        for reader in self._readers:
            reader.join()

    # ----- merging, in the caller's thread ---------------------------------------------------

    def _answerable(self) -> bool:
        """Whether the next reply is there, or the batch has ended (with the lock held)."""
        if not self._order:
            return self._input_done
        head = self._order[0]
        return head.part is None or bool(head.part.replies) or head.part.ended

    def _answer(self, line: _Line) -> tuple[bool, Reply | str]:
        part = line.part
        if part is None:
            assert line.reply is not None
            return False, line.reply
        part.owed -= 1
        self._uses.remove(line.files or (), part)
        if part.replies:
            marked = part.replies.popleft()
            return marked.startswith("+"), f"{marked[1:]}\n"
        status = part.process.poll()
        return False, refuse(line.raw, EngineCrashed(
            f"the bridge process serving this request ended before it answered (pid {part.process.pid}, exit "
            f"status {status if status is not None else 'unknown'}); a file it was writing is whole or not written"))

    def _read(self, part: _Part) -> None:
        """Take a part's replies as they come, in chunks: one wake-up of the merge for many. A line
        that is not a marked reply in UTF-8 ends the part: nothing it says after can be matched."""
        assert part.process.stdout is not None
        fd = part.process.stdout.fileno()
        pending: list[bytes] = []
        """The start of a line not yet ended, in pieces (joined once, whatever its length)."""
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                chunk = b""
            end = chunk.rfind(b"\n")
            if chunk and end < 0:
                pending.append(chunk)
                continue
            complete: list[str] = []
            garbled = False
            if chunk:
                pending.append(chunk[:end])
                for line in b"".join(pending).split(b"\n"):
                    try:
                        # A part on Windows writes its stdout in text mode: \r\n.
                        text = line.removesuffix(b"\r").decode("utf-8")
                    except UnicodeDecodeError:
                        text = ""
                    if text[:1] not in ("+", "-"):
                        garbled = True
                        break
                    complete.append(text)
                pending = [chunk[end + 1:]]
            ended = not chunk or garbled
            if garbled:
                part.process.kill()
            if ended:
                with self._lock:
                    part.closed = True
                try:
                    self._after_death(part, len(complete))
                finally:
                    self._hand_over(part, complete, ended=True)
                return
            self._hand_over(part, complete, ended=False)

    def _hand_over(self, part: _Part, replies: list[str], *, ended: bool) -> None:
        """Give the merger a part's `replies`, and whether the part has `ended`."""
        with self._lock:
            part.replies.extend(replies)
            part.ended = ended
            wake, self._merger_waits = self._merger_waits, False
        if wake:
            self._merger_wake.put(None)

    def _after_death(self, part: _Part, answered: int) -> None:
        """Wait for the exit status of a part whose output ended (for the replies to what it owed,
        `answered` of its replies being still unmerged), and clean up after it if it died owing replies."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            part.process.wait(_EXIT_WAIT)
        with self._lock:
            orphans = part.owed > len(part.replies) + answered
        if orphans:
            # An engine of its may still be finishing a write, until its next heartbeat meets the
            # broken pipe (gdscript/main.gd). Its files stay taken till then, so that no later write of
            # theirs can be overtaken by that one. An engine that pipe ended between its temp file and
            # the rename left the temp file, which the part would have removed.
            time.sleep(_ORPHAN_GRACE)
            locks.sweep_ended(self._owed_writes(part), _EXIT_WAIT)

    def _owed_writes(self, part: _Part) -> list[str]:
        """The files that the lines still owed by `part` may write (a router of its own: this is
        not the router's thread)."""
        with self._lock:
            owed = [line.raw for line in self._order if line.part is part]
        router = Router(self._cwd)
        written: list[str] = []
        for raw in owed:
            with contextlib.suppress(OSError, ValueError):  # a path no file system call takes: see _route()
                written += router.written(raw)
        return written

    # ----- routing, in a thread of its own ---------------------------------------------------

    def _route(self, lines: Iterable[str], eager: bool) -> None:
        try:
            for text in lines:
                raw: Any = None
                try:
                    raw = decode(text)
                except BridgeError as exc:
                    self._queue(_Line(None, (), raw, refuse(raw, exc)))
                    continue
                try:
                    files = self._router.files(raw)
                except (OSError, ValueError):
                    # A path no file system call takes (a lone surrogate, say): the part refuses the
                    # request; a barrier keeps that safe whatever it touches.
                    files = None
                part = self._place(files)
                if part is None:
                    return
                self._queue(_Line(part, files, raw))
                part.unsent.append(text.encode("utf-8") if text.endswith("\n") else f"{text}\n".encode())
                if eager or len(part.unsent) >= _SEND_EVERY:
                    self._send(part)
                if files is None:
                    self._wait_for(lambda: self._owed() == 0)  # a barrier runs alone
        except BaseException as exc:
            # Raised again in the caller's thread, after the replies to what was read before it.
            self._failure = exc
        finally:
            self._send_all()
            with self._lock:
                self._input_done = True
                wake, self._merger_waits = self._merger_waits, False
            if wake:
                self._merger_wake.put(None)

    def _queue(self, line: _Line) -> None:
        self._wait_for(lambda: self._routed - self._written < AHEAD)
        with self._lock:
            self._order.append(line)
            self._routed += 1
            wake, self._merger_waits = self._merger_waits, False
        if wake:
            self._merger_wake.put(None)

    def _place(self, files: Files | None) -> _Part | None:
        """The part for a request on `files`, counted there, once it may go; None once cancelled."""
        chosen: list[_Part] = []

        def placed() -> bool:
            part = self._choose(files)
            if part is not None:
                self._uses.add(files or (), part)
                part.owed += 1
                chosen.append(part)
            return part is not None

        self._wait_for(placed)
        return chosen[0] if chosen else None

    def _choose(self, files: Files | None) -> _Part | None:
        """The part a request on `files` may go to now, or None while it must wait."""
        if files is None:
            after: set[_Part] = set()
            if self._owed():
                return None
        else:
            after = self._uses.followed(files)
            # A part that ended answers what it owed engine_crashed: then the file is free again.
            if len(after) > 1 or any(part.closed for part in after):
                return None
        if after:
            return after.pop()
        running = [part for part in self._parts if not part.closed] or self._parts
        return min(running, key=lambda part: part.owed)

    def _owed(self) -> int:
        return sum(part.owed for part in self._parts)

    def _wait_for(self, done: Callable[[], bool]) -> None:
        """Wait until `done()` holds (it is called with the lock held), every gathered line sent first."""
        while True:
            with self._lock:
                if self._cancelled or done():
                    return
                gathered = any(part.unsent for part in self._parts)
                self._router_waits = not gathered
            if gathered:
                self._send_all()
            else:
                self._router_wake.get()

    def _send_all(self) -> None:
        for part in self._parts:
            self._send(part)

    def _send(self, part: _Part) -> None:
        if not part.unsent:
            return
        data, part.unsent = b"".join(part.unsent), []
        assert part.process.stdin is not None
        with contextlib.suppress(OSError, ValueError):
            # A part that ended: what it owes is answered engine_crashed in its turn.
            part.process.stdin.write(data)
            part.process.stdin.flush()


def part_argv(options: Sequence[str]) -> Callable[[int], list[str]]:
    """The command line of a part with `jobs` engines: this command with the same global options,
    run from the same installation of the bridge as this process (platform.own_python(): a part runs
    in the folder the command was given in, relative project paths being taken from there)."""
    start = platform.own_python("from gdres.front.cli import entry; entry()")

    def argv(jobs: int) -> list[str]:
        return [*start, *options, "batch", "--jobs", str(jobs), "--no-progress", "--part", "-"]
    return argv
