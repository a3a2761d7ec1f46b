"""The serving engine: warm workers per project, replies in input order, same-file requests in order.

Every request goes through here: `Bridge.run()` as a batch of one, `Bridge.batch()` and the
command line's `batch` as a stream. A batch given as a list is served by the caller's thread
alone; a stream that may block gets a second thread. Requests are prepared and finished by
godot_bridge/requests/request.py; engines are godot_bridge/engine/worker.py.

Two threads, besides the pipe threads of each engine (godot_bridge/engine/process.py), which only move bytes.
The feeder only reads the input, which may block; the caller's thread, inside `map()`, does all
the rest as one event loop: it turns requests into engine messages (decoding,
validation, path checks) as fast as the engines take them, routes them to slots, keeps up to
`window` requests in flight on each slot's engine, so the engine never waits for Python, waits on
the one queue that every engine's output (and the feeder's wake-up) arrives on (godot_bridge/engine/worker.py
`Inbox`), and yields the replies in input order.
Python's work on a request all happens in that one thread: a second thread doing part of it
would hold the interpreter lock just when a reply needs reading and an engine, more requests.

Ordering. A worker serves its requests one after the other, so two requests that touch the same
file keep their order when they go to the same worker. A request that writes a file goes where
every earlier unfinished request touching that file went; a request that only reads a file goes
where the unfinished writes of it went (reads of one file may overlap). When those are on two
workers, routing waits until all but one have finished. A request's files are the res:// paths
of its engine message; files that a property value names are not tracked.

Faults. When a worker crashes or runs past the deadline, the request it was serving gets the
`engine_crashed` or `timeout` reply (as `Bridge` gives it), the worker is replaced, and the
requests queued behind it, which the engine had not started, are sent to the replacement.
The pool locks the files a scene edit or an update in place rewrites, replaces worn-out workers
between requests, serves each allow_scripts request with an engine of its own (killed once it
answers: code that ran in it must not run on through later requests), and imports a project once
when a request needs imported assets, then serves that request again on a fresh worker. Requests
already in flight behind it on that worker have run by then; those that also needed the import are
served again too.
"""

from __future__ import annotations

import collections
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from godot_bridge.engine import godot as engines
from godot_bridge.engine import wall
from godot_bridge.engine.worker import MAX_REQUESTS, MAX_RSS, START_TIMEOUT, Inbox, Release, Worker
from godot_bridge.errors import BridgeError, EngineCrashed, Skipped, Timeout
from godot_bridge.requests.request import WRITE, Item, Job, Reply, Roots, finish, prepare, refuse
from godot_bridge.scripts import gdscript_dir
from godot_bridge.serving import imports, locks

WINDOW = 32
"""Requests in flight per worker: enough queued engine work to cover Python's turn and a nap."""
NAP = 0.004
"""Pause of the loop while every busy engine has three quarters of a window queued (~7 ms of work
or more for the bench's requests), so that its replies are taken in bursts. Each wake-up of the
loop also wakes a reader and a writer thread per busy engine, so the pause is twice what it was
with the poll loop those threads replaced: half the wake-ups (~860 -> ~420 per 2,000-request
batch, jobs 1)."""
WEAR_CHECK = 256
"""Sends between two checks of a busy worker's wear (measuring its memory costs a few system calls);
an idle worker is checked before every request."""
IDLE_WAIT = 1.0
"""Longest wait for the feeder when no request is in flight (it wakes the loop sooner)."""

IMPORT_PROGRESS_EVERY = 2.0
"""Seconds between two progress lines of an import (and one when the last asset is imported)."""

_SKIPPED = "skipped: an earlier request failed and --stop-on-error is set"

ArgvFor = Callable[[Path, str], Sequence[str]]
"""Build the command line of a worker for a project root and a reply token."""

log = logging.getLogger("godot_bridge")


@dataclass(frozen=True)
class Settings:
    """How engines are found, started, given deadlines and retired: the one copy of these settings."""

    godot: str | None = None
    """The Godot binary (None: found as godot_bridge/engine/godot.py find_godot says)."""
    timeout: float = engines.DEFAULT_TIMEOUT
    """Seconds one request may take before its engine is killed and replaced."""
    verbose: bool = False
    """Echo engine output to stderr."""
    auto_import: bool = True
    """Import a project whose request needs an asset not imported yet (else: not_imported)."""
    start_timeout: float = START_TIMEOUT
    """Seconds an engine may take to become ready."""
    max_requests: int | None = MAX_REQUESTS
    """Requests after which a worker is replaced."""
    max_rss: int | None = MAX_RSS
    """Resident bytes past which a worker is replaced."""
    relative_to: str | None = None
    """Folder a relative project_path is taken against (None: it must be absolute)."""


@dataclass
class _Task:
    """A prepared request on its way through the pool."""

    index: int
    job: Job
    sent_at: float = 0.0


@dataclass
class _Feed:
    """What the feeder hands to the loop; guarded by `lock`."""

    lock: threading.Condition = field(default_factory=threading.Condition)
    items: collections.deque[Item] = field(default_factory=collections.deque)
    total: int | None = None
    failure: BaseException | None = None
    taken: int = 0
    """Replies the caller has taken: the feeder reads at most `limit` lines ahead of them."""
    resume_at: int = sys.maxsize
    """Replies taken at which the waiting feeder is woken: it then reads half a limit at once."""
    loop_sleeps: bool = False
    cancelled: bool = False


class Pool:
    """Serve requests with up to `jobs` warm engine workers per project.

    `map()` yields one reply per input, in input order, while the input is still being read.
    With `stop_on_error`, a request goes to an engine only once every earlier one has succeeded,
    so every request after the first error reply gets `skipped` and none of them runs; that
    exactness costs the overlap of requests (one runs at a time, whatever `jobs` is).
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        jobs: int = 1,
        window: int = WINDOW,
        argv_for: ArgvFor | None = None,
    ) -> None:
        if jobs < 1 or window < 1:
            raise ValueError("a pool needs at least one worker and a window of at least one")
        self.settings = settings if settings is not None else Settings()
        self.jobs = jobs
        self.window = window
        self._argv_for = argv_for
        self._inbox = Inbox()
        """Where every engine's output, and the feeder's wake-up, arrives."""
        self._engine: engines.Engine | None = None
        self._packs: dict[str, Path] = {}
        self._imports: dict[Path, int] = {}
        self._import_tried: dict[Path, int | None] = {}
        """Each project's import stamp right after the pool last imported it."""
        self._slots: dict[Path, list[_Slot]] = {}
        self._roots = Roots(self.settings.relative_to)
        self._files: dict[str, dict[_Slot, list[int]]] = {}
        self._inputs: collections.deque[Item] = collections.deque()
        self._read = 0
        self._waiting: tuple[int, Job | Reply] | None = None
        self._results: dict[int, Reply] = {}
        self._out: collections.deque[Reply] = collections.deque()
        """Replies taken in order from `_results`, being yielded."""
        self._next_out = 0
        self._stop_on_error = False
        self._stopped = False
        self._cancelled = False

    def __enter__(self) -> Pool:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Stop every engine process of the pool."""
        slots = self._all_slots()
        self._slots = {}
        for slot in slots:
            slot.stop()

    def prewarm(self, project_path: str, count: int = 1, *, wait: bool = False) -> list[Worker]:
        """Start up to `count` of the engines that serve a project (those running already count);
        return them. Without `wait` they start while the caller goes on (a request sent meanwhile
        waits for its engine); raise the error a request for this project would get."""
        root = self._roots.resolve(project_path)
        started = []
        for slot in self._group(root)[: max(1, min(count, self.jobs))]:
            worker = slot.warm()
            if wait:
                worker.wait_ready()
            started.append(worker)
        return started

    def workers(self) -> list[Worker]:
        """Return the engine workers running now."""
        return [slot.worker for slot in self._all_slots() if slot.worker is not None]

    def _all_slots(self) -> list[_Slot]:
        return [slot for group in self._slots.values() for slot in group]

    # ----- the caller's side: the event loop -------------------------------------------------

    def map(self, items: Iterable[Item], *, stop_on_error: bool = False) -> Iterator[Reply]:
        """Yield the reply to each request (a JSON text or a decoded object), in input order.

        A list or tuple is served in the caller's thread; any other iterable is read by a thread
        of its own, so an input that blocks never holds up the replies to what came before it.
        """
        self._results.clear()
        self._out.clear()
        self._inputs.clear()
        self._read = 0
        self._waiting = None
        self._files.clear()
        self._next_out = 0
        self._roots = Roots(self.settings.relative_to)
        self._stop_on_error = stop_on_error
        self._stopped = self._cancelled = False
        feed = _Feed()
        feeder: threading.Thread | None = None
        if isinstance(items, (list, tuple)):
            feed.items.extend(items)
            feed.total = len(items)
        else:
            feeder = threading.Thread(target=self._feed, args=(items, feed), name="pool-feeder", daemon=True)
            feeder.start()
        try:
            while True:
                ended = self._take(feed)
                self._dispatch()
                slots = self._all_slots()
                for slot in slots:
                    slot.fill()
                while self._releasable(slots):
                    reply = self._results.pop(self._next_out)
                    self._next_out += 1
                    self._out.append(reply)
                    if self._stop_on_error and reply["result"] != "ok":
                        self._stopped = True
                if self._out:
                    with feed.lock:
                        feed.taken = self._next_out
                        if feed.taken >= feed.resume_at:
                            feed.lock.notify()
                    while self._out:
                        yield self._out.popleft()
                    continue
                if ended and self._next_out >= self._read and not self._inputs and self._waiting is None:
                    if feed.failure is not None:
                        raise feed.failure
                    return
                self._wait(feed, ended, slots)
        finally:
            with feed.lock:
                feed.cancelled = True
                feed.lock.notify()
            self._cancelled = True
            self._abandon()
            if feeder is not None:
                feeder.join()

    def ready(self) -> bool:
        """Return whether the next reply of `map()` is available without waiting."""
        return bool(self._out) or self._releasable(self._all_slots())

    def _releasable(self, slots: list[_Slot]) -> bool:
        """Return whether the next reply in input order may go to the caller now.

        None goes while a scene edit is in flight: the caller may then stop taking replies for as
        long as it likes (a full output pipe), and the edit's lock, which other processes wait for,
        goes only once its reply is read.
        """
        return self._next_out in self._results and not any(slot.locking() for slot in slots)

    def _take(self, feed: _Feed) -> bool:
        """Take what the feeder has read; return whether the input ended."""
        with feed.lock:
            self._inputs.extend(feed.items)
            feed.items.clear()
            return feed.total is not None

    def _wait(self, feed: _Feed, ended: bool, slots: list[_Slot]) -> None:
        """Wait for engine output, a deadline, or (while the input goes on) the feeder."""
        deadline = min((slot.deadline() for slot in slots if slot.inflight), default=None)
        # A wait elsewhere (while a worker stopped, say) may have taken replies from the inbox already.
        news = any(slot.worker is not None and slot.worker.news() for slot in slots)
        if not ended:
            with feed.lock:
                news = news or bool(feed.items) or feed.total is not None
                feed.loop_sleeps = not news
        if news:
            # Input or replies to take: take what the engines sent, without waiting for more. The
            # engines' threads are left alone until this thread next stops (see Inbox.flush);
            # the engines have their windows to work through meanwhile.
            self._inbox.poll()
        else:
            # The engines get what was sent, and their readers may read on, as this thread stops.
            self._inbox.flush()
            if deadline is None:
                deadline = time.monotonic() + IDLE_WAIT
            elif all(len(slot.inflight) >= self.window * 3 // 4 for slot in slots if slot.inflight):
                # Every busy engine has most of a window still to serve: let replies gather, so
                # that one wake-up takes many. Waking per reply cost more than the reply itself
                # (bridge CPU per 5,000-request batch 1.11 s -> 0.71-0.78 s), and each wake-up of
                # this process pushes an engine off its core.
                time.sleep(min(NAP, max(0.0, deadline - time.monotonic())))
            self._inbox.serve(deadline)
        if not ended:
            with feed.lock:
                feed.loop_sleeps = False
        now = time.monotonic()
        for slot in slots:
            slot.collect(now)

    def _abandon(self) -> None:
        """Let the requests in flight finish (their files stay whole); send nothing more."""
        for slot in self._all_slots():
            slot.queue.clear()
            # A wait for another slot may have taken this one's replies already.
            slot.collect(time.monotonic())
            while slot.inflight and slot.worker is not None:
                self._inbox.serve(slot.deadline())
                slot.collect(time.monotonic())
        self._results.clear()
        self._out.clear()
        self._files.clear()

    # ----- routing ---------------------------------------------------------------------------

    def _dispatch(self) -> None:
        """Prepare and route requests until every engine has two windows of work in front of it."""
        slots = self._all_slots()
        # Each project has one slot beside its `jobs` for allow_scripts requests: not counted here.
        budget = 2 * self.window * max(len(slots) - len(self._slots), self.jobs)
        queued = sum(slot.pending() for slot in slots)
        while queued < budget:
            if self._waiting is None:
                if not self._inputs:
                    return
                self._waiting = (self._read, prepare(self._inputs.popleft(), self._roots))
                self._read += 1
            index, prepared = self._waiting
            if self._stop_on_error and self._next_out < index:
                return
            if self._stopped or self._cancelled:
                self._results[index] = refuse(prepared.request if isinstance(prepared, Job) else prepared,
                                              Skipped(_SKIPPED))
            elif not isinstance(prepared, Job):
                self._results[index] = prepared
            else:
                slot = self._place(prepared)
                if slot is None:
                    return
                for key, role in prepared.files:
                    self._files.setdefault(key, {}).setdefault(slot, [0, 0])[role] += 1
                slot.queue.append(_Task(index, prepared))
                queued += 1
            self._waiting = None

    def _place(self, job: Job) -> _Slot | None:
        """Return the slot for a request on these files, or None while it must wait.

        An allow_scripts request goes to the project's slot for those (each gets an engine of
        its own there), so the warm engines of the others stay as they are.
        """
        after: set[_Slot] = set()
        for key, role in job.files:
            for slot, uses in self._files.get(key, {}).items():
                if role == WRITE or uses[WRITE]:
                    after.add(slot)
        group = self._group(job.root)
        trusted = group[-1]
        if job.allows_scripts:
            return trusted if after <= {trusted} else None
        if len(after) > 1 or trusted in after:
            return None
        if after:
            return after.pop()
        return min(group[:-1], key=lambda slot: slot.pending())

    def _group(self, root: Path) -> list[_Slot]:
        """The slots of a project: `jobs` of them, then the one for allow_scripts requests."""
        group = self._slots.get(root)
        if group is None:
            group = self._slots[root] = [_Slot(self, root) for _ in range(self.jobs + 1)]
        return group

    def finish(self, task: _Task, reply: Reply, slot: _Slot) -> None:
        """Record the reply to `task` and forget its files."""
        self._results[task.index] = reply
        for key, role in task.job.files:
            users = self._files.get(key)
            if users is None:
                continue
            uses = users[slot]
            uses[role] -= 1
            if not any(uses):
                del users[slot]
                if not users:
                    del self._files[key]

    # ----- the feeder ------------------------------------------------------------------------

    def _feed(self, items: Iterable[Item], feed: _Feed) -> None:
        # Bound the requests read ahead of the replies taken, so memory stays flat on an endless input.
        limit = max(256, 4 * self.jobs * self.window)
        count = 0
        try:
            for item in items:
                with feed.lock:
                    if count - feed.taken >= limit:
                        feed.resume_at = count - limit // 2
                        while feed.taken < feed.resume_at and not feed.cancelled:
                            feed.lock.wait()
                        feed.resume_at = sys.maxsize
                    if feed.cancelled:
                        return
                    feed.items.append(item)
                    if feed.loop_sleeps:
                        feed.loop_sleeps = False
                        self._inbox.wake()
                count += 1
        except BaseException as exc:
            # Raised again in the caller's thread, after the replies to what was read before it.
            feed.failure = exc
        finally:
            with feed.lock:
                feed.total = count
                if feed.loop_sleeps:
                    self._inbox.wake()

    # ----- engines ---------------------------------------------------------------------------

    def _found_engine(self) -> engines.Engine:
        """Return the Godot binary in use, found and version-checked once."""
        if self._engine is None:
            self._engine = engines.probe(engines.find_godot(self.settings.godot))
        return self._engine

    def _pack(self, flavour: str = "safe") -> Path:
        """Return the settings pack workers start with (built on first use, see engine.settings_pack):
        "trusted" for the engines that serve allow_scripts requests, "safe" for all others."""
        if flavour not in self._packs:
            self._packs[flavour] = engines.settings_pack(self._found_engine(), flavour)
        return self._packs[flavour]

    def new_worker(self, root: Path, *, trusted: bool = False) -> Worker:
        """Return a launched worker for `root` (`trusted`: for an allow_scripts request)."""
        if self._argv_for is not None:
            argv_for = self._argv_for

            def argv(token: str) -> Sequence[str]:
                return argv_for(root, token)
        else:
            engine, pack = self._found_engine(), self._pack("trusted" if trusted else "safe")
            reads = [*map(Path, wall.SYSTEM_READ), *wall.engine_reads(engine.path), gdscript_dir(), pack]

            def argv(token: str) -> Sequence[str]:
                return wall.argv(engines.worker_argv(engine, root, token, pack=pack, trusted=trusted),
                                 read=reads, write=[root])
        settings = self.settings
        worker = Worker(argv, verbose=settings.verbose, start_timeout=settings.start_timeout,
                        max_requests=settings.max_requests, max_rss=settings.max_rss, inbox=self._inbox)
        worker.launch()
        return worker

    def imports(self, root: Path) -> int:
        """Return how many times the pool has imported `root` (workers started before are stale)."""
        return self._imports.get(root, 0)

    def import_for(self, root: Path, seen: int, stamp: int | None) -> tuple[bool, str | None]:
        """Import `root` for a worker that answered not_imported, started after `seen` imports of the
        pool's and at import stamp `stamp` (godot_bridge/serving/imports.py); not again when the pool's own last
        import left the stamp as it is (it did not help, and would not again).

        Return whether to serve the request again, and why the import failed (None if it did not).
        """
        if self.imports(root) > seen:
            return True, None
        if not self.settings.auto_import:
            return False, ("the project's assets are not imported and --no-import (auto_import=False) keeps the "
                           "bridge from importing them: run without it, or open the project in the Godot editor once")
        if self._import_tried.get(root, -1) == imports.stamp(root):
            return False, None
        started = time.monotonic()
        shown = started

        def announce() -> None:
            log.warning("godot-bridge: importing the assets of %s (first use; %d with import settings; the "
                        "engine imports each texture, mesh and font once)", root, imports.assets(root))

        def progress(done: int, total: int) -> None:
            nonlocal shown
            now = time.monotonic()
            if now - shown >= IMPORT_PROGRESS_EVERY or done == total:
                shown = now
                log.warning("godot-bridge: importing: %d of %d assets, %.0f s", done, total, now - started)

        failure = imports.import_project(self._found_engine(), root, self._pack(),
                                         max(self.settings.timeout, imports.IMPORT_TIMEOUT), stamp, announce, progress)
        self._import_tried[root] = imports.stamp(root)
        if failure is None:
            self._imports[root] = self.imports(root) + 1
            log.warning("godot-bridge: imported the assets of %s in %.1f s", root, time.monotonic() - started)
        return failure is None, failure

    def skipping(self) -> bool:
        """Return whether requests not yet sent are to be skipped (after an error, or abandoned)."""
        return self._stopped or self._cancelled


def hold_writes(worker: Worker, job: Job, deadline: float) -> Release:
    """Lock the files a request rewrites in place (see godot_bridge/serving/locks.py), waiting until `deadline`.

    Return what `worker` is to run once it is done with the request. When its engine died before
    answering, that removes the temp files it left beside the files the request writes and, for a
    rewrite, puts those files back as they were (read under the lock before the request goes out):
    a shape saved and attached to a scene is written both or neither, even under SIGKILL.
    """
    written = job.written
    rewrites = [Path(path) for path in written] if job.rewrites else []
    held = locks.hold(rewrites, deadline)
    before = locks.snapshot(rewrites)

    def release(answered: bool) -> None:
        try:
            if not answered and worker.pid is not None:
                locks.sweep(written, worker.pid)
                locks.restore(before)
        finally:
            held.release()

    return release


class _Slot:
    """One worker and the requests routed to it: queued, then in flight (at most `window`)."""

    def __init__(self, pool: Pool, root: Path) -> None:
        self.pool = pool
        self.root = root
        self.worker: Worker | None = None
        self.queue: collections.deque[_Task] = collections.deque()
        self.inflight: collections.deque[_Task] = collections.deque()
        self._idle_since = 0.0
        self._imports_seen = 0
        self._stamp: int | None = None
        self._sends = 0

    def pending(self) -> int:
        """Return how many requests the slot has not answered yet."""
        return len(self.queue) + len(self.inflight)

    def locking(self) -> bool:
        """Return whether a request in flight holds file locks (one sent only to an idle engine)."""
        return bool(self.inflight) and self.inflight[0].job.rewrites

    def _one_shot(self) -> bool:
        """Whether the worker serves an allow_scripts request: it takes no other, and goes after it."""
        return bool(self.inflight) and self.inflight[0].job.allows_scripts

    def deadline(self) -> float:
        """Return when the request the engine is serving now runs out of time."""
        worker = self.worker
        if worker is not None and not worker.ready:
            return worker.start_deadline
        ready_at = worker.ready_at if worker is not None else 0.0
        return max(self.inflight[0].sent_at, self._idle_since, ready_at) + self.pool.settings.timeout

    def stop(self) -> None:
        """Stop the slot's engine."""
        worker, self.worker = self.worker, None
        if worker is None:
            return
        if self.inflight:
            # The engine serves what it already has, then sees its input end.
            worker.close()
        else:
            # Idle, so every file it wrote is in place (a reply comes only after that); its
            # orderly exit would add ~0.1 s to the end of every batch and change nothing.
            worker.kill()

    def warm(self) -> Worker:
        """Return the slot's worker, started now unless it has a usable one."""
        if self.worker is not None and self._usable():
            return self.worker
        return self._replace_worker()

    def fill(self) -> None:
        """Send queued requests until the window is full."""
        while self.queue and len(self.inflight) < self.pool.window:
            task = self.queue[0]
            if self.pool.skipping():
                self.queue.popleft()
                self.pool.finish(task, refuse(task.job.request, Skipped(_SKIPPED)), self)
                continue
            job = task.job
            if self.inflight and (job.rewrites or job.allows_scripts or self._one_shot() or not self._usable()):
                # A rewrite waits for its lock, which the replies in flight may hold; a dead,
                # stale or worn-out worker is replaced once the requests in flight are answered;
                # an allow_scripts request has an engine of its own.
                return
            if not self._send(task):
                return

    def _send(self, task: _Task) -> bool:
        """Send the head of the queue; return False to first take the replies in flight."""
        try:
            if task.job.allows_scripts:
                worker = self._replace_worker(trusted=True)
            else:
                worker = self.worker if self.worker is not None and self._usable() else self._replace_worker()
            release = hold_writes(worker, task.job, time.monotonic() + self.pool.settings.timeout)
            worker.send(task.job.message, release=release)
        except EngineCrashed as exc:
            if self.inflight:
                return False
            self.queue.popleft()
            self._drop_worker()
            self.pool.finish(task, refuse(task.job.request, exc), self)
            return True
        except BridgeError as exc:
            self.queue.popleft()
            self.pool.finish(task, refuse(task.job.request, exc), self)
            return True
        self.queue.popleft()
        task.sent_at = time.monotonic()
        self.inflight.append(task)
        self._sends += 1
        return True

    def _usable(self) -> bool:
        worker = self.worker
        if worker is None or not worker.alive or self._imports_seen < self.pool.imports(self.root):
            return False
        if self.inflight and self._sends % WEAR_CHECK:
            return True
        return not worker.worn_out()

    def collect(self, now: float) -> None:
        """Take the replies the engine sent; fail the request it was serving if it died or ran out of time."""
        worker = self.worker
        if worker is None:
            return
        again: list[_Task] = []
        while (answer := worker.take()) is not None:
            task = self.inflight.popleft()
            self._idle_since = now
            if task.job.allows_scripts:
                # Its engine may run the code it loaded: it serves nothing else, and is killed (it
                # has answered, so its files are in place; code it runs may hold up an orderly exit).
                self.worker = None
                worker.kill()
            if (answer.get("error") or {}).get("code") == "not_imported":
                retry, failure = self.pool.import_for(self.root, self._imports_seen, self._stamp)
                if retry:
                    again.append(task)
                    continue
                if failure is not None:
                    answer["error"]["message"] += f"; {failure}"
            self.pool.finish(task, finish(task.job, answer), self)
        self.queue.extendleft(reversed(again))
        if not self.inflight:
            if worker.ended:
                self._drop_worker()
            return
        if worker.ended or now >= self.deadline():
            head = self.inflight.popleft()
            if worker.ended:
                error: BridgeError = worker.crash()
            elif worker.ready:
                worker.kill()
                error = Timeout(f"the request ran past its deadline of {self.pool.settings.timeout:g} s; the engine "
                                f"(pid {worker.pid}) was killed and the next request gets a fresh one")
            else:
                error = worker.expire()
            self.pool.finish(head, refuse(head.job.request, error), self)
            # The engine serves in order, so the requests behind the failed one never started.
            self.queue.extendleft(reversed(self.inflight))
            self.inflight.clear()
            self._drop_worker()

    def _replace_worker(self, *, trusted: bool = False) -> Worker:
        self._drop_worker()
        worker = self.pool.new_worker(self.root, trusted=trusted)
        self._imports_seen = self.pool.imports(self.root)
        self._stamp = imports.stamp(self.root)
        self.worker = worker
        self._sends = 0
        self._idle_since = time.monotonic()
        return worker

    def _drop_worker(self) -> None:
        worker, self.worker = self.worker, None
        if worker is not None:
            worker.close()
