"""The serving engine: warm workers per project, replies in input order, same-file requests in order.

Every request goes through here: `Bridge.run()` as a batch of one, `Bridge.batch()` and the
command line's `batch` as a stream. A batch given as a list is served by the caller's thread
alone; a stream that may block gets a second thread. Requests are prepared and finished by
gdres/requests/request.py; engines are gdres/engine/worker.py.

Two threads, besides the pipe threads of each engine (gdres/engine/process.py), which only move bytes.
The feeder only reads the input, which may block; the caller's thread, inside `map()`, does all
the rest as one event loop: it turns requests into engine messages (decoding,
validation, path checks) as fast as the engines take them, routes them to slots, keeps up to
`window` requests in flight on each slot's engine, so the engine never waits for Python, waits on
the one queue that every engine's output (and the feeder's wake-up) arrives on (gdres/engine/worker.py
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

Ctrl-C. While the loop's own code runs in the main thread, a SIGINT is noted and raised by the
loop at its next safe point (the top of a turn, before a reply is handed out), where its state is
whole: raised where it landed, it could cut a hand-over in two (a reply taken but its reader not let
read on, a lock released but its waiter not woken), and the requests in flight then waited out
their deadline before the batch stopped. Between replies, in the caller's code (which may be
blocked writing them out), and in the loop's long waits that hold no hand-over (a project's import,
another process's journal), it is raised at once, as Python raises it; so is a second one: whoever
presses Ctrl-C twice does not want to wait. One noted while the batch ended for another reason is
raised once the loop is done (but not by a generator the garbage collector closes, which Python
lets raise nothing). A warm host takes SIGTERM as a Ctrl-C (front/warm_host.py).
"""

from __future__ import annotations

import collections
import math
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from gdres.engine.worker import Inbox, Worker
from gdres.errors import BridgeError, InvalidRequest, RolledBack, SaveFailed, Skipped
from gdres.requests.request import Item, Job, Reply, Roots, prepare, refuse
from gdres.serving import journal
from gdres.serving.journal import Journal
from gdres.serving.ordering import FileUses
from gdres.serving.slot import SKIPPED, Result, Slot, Task
from gdres.serving.starter import ArgvFor, Settings, Starter

WINDOW = 32
"""Requests in flight per worker: enough queued engine work to cover Python's turn and a nap."""
NAP_SHARE = 1 / 3
"""Pause of the loop while every busy engine has three quarters of a window queued: this share of
the work the least busy one has queued (Slot.work_ahead(): its requests in flight at the time the
engine says each took it), so that one wake-up takes many replies and no engine runs dry. Each
wake-up of the loop also wakes a reader and a writer thread per busy engine, and pushes an engine
off its core. A fixed 4 ms pause took ~3 replies at once of a ~1.2 ms material_create, while an
engine serving ~0.15 ms resource_reads ran dry in it (2,559-2,757 reads/s, against 3,172-3,679
without a pause, `--jobs 1`, 2-core VM)."""
NAP_MAX = 0.010
"""The longest such pause, in seconds."""
NAP_UNKNOWN = 0.002
"""The pause while an engine has not said yet how long its requests take."""
IDLE_WAIT = 1.0
"""Longest wait for the feeder when no request is in flight (it wakes the loop sooner)."""



_LOOPS: list[Pool] = []
"""The pools whose loop was started in the main thread and is not done: one left suspended at a
reply by a caller that never closed it stays until it is closed, and notes no SIGINT meanwhile."""


def on_interrupt(signum: int, frame: object) -> None:
    """Python's own SIGINT handler, but while a pool's loop code runs in the main thread: note the
    interrupt there and wake the loop. A warm host takes SIGTERM so too (front/warm_host.py)."""
    pool = next((pool for pool in reversed(_LOOPS) if pool._in_loop), None)
    if pool is None or pool._interrupted:
        # Raised now, it answers any interrupt noted before it: two presses, one KeyboardInterrupt.
        for noted in _LOOPS:
            noted._interrupt_raised = noted._interrupt_raised or noted._interrupted
        raise KeyboardInterrupt
    pool._interrupted = True
    pool._inbox.wake()  # a SimpleQueue's put may be called from a signal handler


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


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
    reading: bool = True
    """The feeder waits for the input's next item, where nothing can wake it (a quiet pipe)."""


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
        self._inbox = Inbox()
        """Where every engine's output, and the feeder's wake-up, arrives."""
        self.starter = Starter(self.settings, self._inbox, argv_for)
        self._slots: dict[Path, list[Slot]] = {}
        self._roots = Roots(self.settings.relative_to, self._recover)
        self._files: FileUses[Slot] = FileUses()
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
        self._atomic = False
        self._failed_at: float = math.inf
        """In an atomic batch, the first request (by index) whose reply is an error: those after it are
        skipped, or, sent already, served and undone."""
        self._journal: Journal | None = None
        """The journal of the atomic batch being served, from its first request on; or of the move
        being served (a request that may write any file of its project is all-or-nothing alone)."""
        self._journaled_by: int | None = None
        """The request the journal is for, outside an atomic batch."""
        self._atomic_writes: set[int] = set()
        """The requests of the atomic batch that write files (by index): undone, they say so."""
        self._interrupted = False
        """A Ctrl-C came while the loop's code ran, which the loop is to raise (see on_interrupt())."""
        self._interrupt_raised = False
        """A KeyboardInterrupt answering it was raised (by the loop, or by a second Ctrl-C)."""
        self._in_loop = False
        """Whether the loop's own code runs in the main thread (not the caller's, between two replies)."""

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

    def _all_slots(self) -> list[Slot]:
        return [slot for group in self._slots.values() for slot in group]

    # ----- the caller's side: the event loop -------------------------------------------------

    def map(self, items: Iterable[Item], *, stop_on_error: bool = False) -> Iterator[Reply]:
        """Yield the reply to each request (a JSON text or a decoded object), in input order.

        A list or tuple is served in the caller's thread; any other iterable is read by a thread
        of its own, so an input that blocks never holds up the replies to what came before it.
        """
        if any(slot.inflight or slot.queue for slot in self._all_slots()):
            # A batch cut short while it stopped (a second Ctrl-C) left requests behind: their
            # replies must not be taken for this batch's, nor their writes made during it.
            self._abandon()
        self._results.clear()
        self._out.clear()
        self._inputs.clear()
        self._read = 0
        self._waiting = None
        self._files.clear()
        self._next_out = 0
        self._roots = Roots(self.settings.relative_to, self._recover)
        self._stop_on_error = stop_on_error
        self._stopped = self._cancelled = False
        self._failed_at = math.inf
        feed = _Feed()
        feeder: threading.Thread | None = None
        if isinstance(items, (list, tuple)):
            feed.items.extend(items)
            feed.total = len(items)
        else:
            feeder = threading.Thread(target=self._feed, args=(items, feed), name="pool-feeder", daemon=True)
            feeder.start()
        self._interrupted = self._interrupt_raised = False
        restore = self._note_interrupts()
        try:
            while True:
                self._in_loop = _main_thread()
                self._raise_if_interrupted()
                ended = self._take(feed)
                self._dispatch()
                slots = self._all_slots()
                # A request waiting for a lock that another slot's request let go takes it before
                # that slot's next request can take it again (in its turn, it would wait for them all).
                for slot in sorted(slots, key=Slot.waits_for_lock, reverse=True):
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
                        self._raise_if_interrupted()
                        self._in_loop = False
                        yield self._out.popleft()
                        self._in_loop = _main_thread()
                    continue
                if ended and self._next_out >= self._read and not self._inputs and self._waiting is None:
                    if feed.failure is not None:
                        raise feed.failure
                    return
                self._wait(feed, ended, slots)
        finally:
            self._in_loop = _main_thread()
            try:
                with feed.lock:
                    feed.cancelled = True
                    feed.lock.notify()
                    reading = feed.reading
                self._cancelled = True
                self._abandon()
                # A feeder waiting for the input's next item is left to it (a daemon, it ends once
                # one comes, taking it): joined, it held a cut-short batch until the input spoke.
                if feeder is not None and not reading:
                    feeder.join()
            finally:
                self._in_loop = False
                restore()
            if self._interrupted and not self._interrupt_raised:
                # Noted while the batch stopped for another reason (its end, an error, its caller
                # closing it). Only a generator the garbage collector closes cannot pass it on.
                self._interrupt_raised = True
                raise KeyboardInterrupt

    def atomic(self, items: Iterable[Item]) -> list[Reply]:
        """Serve `items` all-or-nothing, on one project: return every reply once all are served.

        The requests run in order on one engine, each seeing the writes of those before it. If one
        fails, every write of the batch is undone: each writing request before it that had
        succeeded gets `rolled_back`, and each after it `skipped`. Every write is noted in a
        journal first (gdres/serving/journal.py), so that a batch cut short by a kill is
        undone by the next command on the project.

        The engine is sent requests ahead of its replies, as in any batch: waiting for each reply
        before sending the next cost a third of the throughput. So the requests already sent when
        one fails are served, and undone with the rest; their replies do not count, and each says
        `skipped` (`rolled_back` where it wrote).
        """
        self._atomic = True
        wrote: set[int] = set()
        self._atomic_writes = wrote
        try:
            replies = list(self.map(items))
        except BaseException:
            self._end_atomic(keep=False)
            raise
        finally:
            self._atomic = False
        failed = next((number for number, reply in enumerate(replies, 1) if reply["result"] != "ok"), None)
        left = self._end_atomic(keep=failed is None)
        if failed is None:
            return replies
        cause = f"request {failed} of the atomic batch failed ({replies[failed - 1]['error']['code']})"
        undone: BridgeError = RolledBack(f"undone: {cause}, so none of its writes stayed")
        if left:
            undone = SaveFailed(f"{cause}, and {', '.join(left)} could not be put back as it was; the next "
                                "gdres command on the project tries again")
        void = Skipped(f"skipped: {cause}, so this one does not count")
        return [refuse(reply, undone) if index in wrote and reply["result"] == "ok"
                else refuse(reply, void) if index >= failed else reply
                for index, reply in enumerate(replies)]

    def _journaled(self, index: int, job: Job) -> Reply | None:
        """In an atomic batch, give a request that writes the batch's journal (begun with its first
        request, on that request's project); or the refusal of a request the batch cannot serve.
        Outside one, a move's journal is begun for it alone, and ended with its reply (finish())."""
        if self._journal is None:
            journal = Journal(job.root)
            try:
                journal.begin(time.monotonic() + self.settings.timeout)
            except BridgeError as exc:
                return refuse(job.request, exc)
            self._journal = journal
            self._journaled_by = None if self._atomic else index
            self.starter.journals[job.root] = journal
            for slot in self._group(job.root):
                slot.stop()  # its engine may not write the journal: the next one started may
        if job.root != self._journal.root:
            return refuse(job.request, InvalidRequest(f"an atomic batch works on one project; this request names "
                                                      f"{job.root}, the batch {self._journal.root}",
                                                      field="project_path"))
        if job.allows_scripts:
            return refuse(job.request, InvalidRequest("an atomic batch serves no allow_scripts request: project code "
                                                      "could change the files the batch would put back",
                                                      field="allow_scripts"))
        if job.written:
            # A dry run notes its temp file and folders too: a kill leaves nothing of it either.
            job.message["journal"] = str(self._journal.path)
            if self._atomic and not job.dry_run:
                self._atomic_writes.add(index)
        return None

    def _end_atomic(self, *, keep: bool) -> list[str]:
        """Keep every write of the atomic batch, or undo them all; return the files that could not be
        put back. Its engines end first (they could write the journal, and nothing may change the
        files while they are put back)."""
        journal, self._journal, self._journaled_by = self._journal, None, None
        if journal is None:
            return []
        self.starter.journals.pop(journal.root, None)
        for slot in self._group(journal.root):
            slot.stop()
        if keep:
            journal.commit()
            return []
        return journal.rollback()

    def ready(self) -> bool:
        """Return whether the next reply of `map()` is available without waiting."""
        return bool(self._out) or self._releasable(self._all_slots())

    def _releasable(self, slots: list[Slot]) -> bool:
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

    def _wait(self, feed: _Feed, ended: bool, slots: list[Slot]) -> None:
        """Wait for engine output, a deadline, the next try of a lock, or (while the input goes on) the feeder."""
        deadline = min([slot.deadline() for slot in slots if slot.inflight]
                       + [at for slot in slots if (at := slot.retry_at()) is not None], default=None)
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
            elif (nap := self._nap(slots)) > 0:
                # Every busy engine has most of a window still to serve: let replies gather, so
                # that one wake-up takes many. Waking per reply cost more than the reply itself
                # (bridge CPU per 5,000-request batch 1.11 s -> 0.71-0.78 s), and each wake-up of
                # this process pushes an engine off its core.
                time.sleep(min(nap, max(0.0, deadline - time.monotonic())))
            self._inbox.serve(deadline)
        if not ended:
            with feed.lock:
                feed.loop_sleeps = False
        now = time.monotonic()
        for slot in slots:
            slot.collect(now)

    def _nap(self, slots: list[Slot]) -> float:
        """How long to let replies gather before taking them (0: take them as they come)."""
        busy = [slot for slot in slots if slot.inflight]
        if not busy or any(len(slot.inflight) < self.window * 3 // 4 for slot in busy):
            return 0.0
        ahead = [work for slot in busy if (work := slot.work_ahead()) is not None]
        if len(ahead) < len(busy):
            return NAP_UNKNOWN
        return min(NAP_MAX, NAP_SHARE * min(ahead))

    def _note_interrupts(self) -> Callable[[], None]:
        """Have an interrupt noted for the loop to raise while its code runs (see the module's
        docstring), where this is the main thread: SIGINT's, where it raises KeyboardInterrupt (an
        application's own handler, or an ignored SIGINT, is left alone), and that of any signal
        handled by on_interrupt(); return what undoes it."""
        if not _main_thread():
            return lambda: None
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, on_interrupt)
        _LOOPS.append(self)

        def restore() -> None:
            if self in _LOOPS:
                _LOOPS.remove(self)
            # Only the main thread may set a handler: a loop finished in another thread leaves this
            # one, which acts as Python's own while no loop is in _LOOPS, until a later loop's end.
            if not _LOOPS and _main_thread() and signal.getsignal(signal.SIGINT) is on_interrupt:
                signal.signal(signal.SIGINT, signal.default_int_handler)

        return restore

    def _raise_if_interrupted(self) -> None:
        """Raise the KeyboardInterrupt of a Ctrl-C noted while the loop's code ran: a safe point."""
        if self._interrupted and not self._interrupt_raised:
            self._interrupt_raised = True
            raise KeyboardInterrupt

    def interruptible(self, wait: Callable[[], Result]) -> Result:
        """Return `wait()`, a long wait of the loop's that holds no hand-over (a project's import,
        another process's journal): a Ctrl-C during it is raised at once, not at its end."""
        self._raise_if_interrupted()
        was, self._in_loop = self._in_loop, False
        try:
            return wait()
        finally:
            self._in_loop = was

    def _recover(self, root: Path) -> None:
        self.interruptible(lambda: journal.recover(root))

    def _abandon(self) -> None:
        """Let the requests in flight finish (their files stay whole); send nothing more."""
        # Every queue first: a second Ctrl-C during the waits below leaves nothing to be sent later.
        for slot in self._all_slots():
            slot.queue.clear()
        for slot in self._all_slots():
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
            if self.skipping(index):
                self._results[index] = refuse(prepared.request if isinstance(prepared, Job) else prepared,
                                              Skipped(SKIPPED))
            elif not isinstance(prepared, Job):
                self._record(index, prepared)
            elif not self._atomic and prepared.reaches_project and self._journal is not None \
                    and self._journaled_by != index:
                return  # one move at a time: its journal is the pool's one
            elif (self._atomic or prepared.reaches_project) and (refused := self._journaled(index, prepared)) \
                    is not None:
                self._record(index, refused)
            else:
                slot = self._place(prepared)
                if slot is None:
                    return
                self._files.add(prepared.ordered, slot)
                slot.queue.append(Task(index, prepared))
                queued += 1
            self._waiting = None

    def _place(self, job: Job) -> Slot | None:
        """Return the slot for a request on these files, or None while it must wait.

        An allow_scripts request goes to the project's slot for those (each gets an engine of
        its own there), so the warm engines of the others stay as they are.
        """
        after = self._files.followed(job.ordered)
        group = self._group(job.root)
        trusted = group[-1]
        if job.allows_scripts:
            return trusted if after <= {trusted} else None
        if self._atomic:
            return group[0]  # one engine, which serves in order: each request sees the writes before it
        if len(after) > 1 or trusted in after:
            return None
        if after:
            return after.pop()
        return min(group[:-1], key=lambda slot: slot.pending())

    def _group(self, root: Path) -> list[Slot]:
        """The slots of a project: `jobs` of them, then the one for allow_scripts requests."""
        group = self._slots.get(root)
        if group is None:
            group = self._slots[root] = [Slot(self, root) for _ in range(self.jobs + 1)]
        return group

    def finish(self, task: Task, reply: Reply, slot: Slot) -> None:
        """Record the reply to `task` and forget its files; a move's journal ends with it: its writes
        stay, or (it failed: its engine undid them, unless it died) whatever is left is undone."""
        if self._journaled_by == task.index:
            left = self._end_atomic(keep=reply["result"] == "ok")
            if left:
                reply = refuse(task.job.request, SaveFailed(
                    f"the move failed, and {', '.join(left)} could not be put back as it was; the next gdres "
                    "command on the project tries again"))
        self._record(task.index, reply)
        self._files.remove(task.job.ordered, slot)

    # ----- the feeder ------------------------------------------------------------------------

    def _feed(self, items: Iterable[Item], feed: _Feed) -> None:
        # Bound the requests read ahead of the replies taken, so memory stays flat on an endless input.
        limit = max(256, 4 * self.jobs * self.window)
        count = 0
        try:
            for item in items:
                with feed.lock:
                    feed.reading = False
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
                    feed.reading = True
                count += 1
        except BaseException as exc:
            # Raised again in the caller's thread, after the replies to what was read before it.
            feed.failure = exc
        finally:
            with feed.lock:
                feed.reading = False
                feed.total = count
                if feed.loop_sleeps:
                    self._inbox.wake()

    def skipping(self, index: int) -> bool:
        """Return whether request `index`, not yet sent, is to be skipped: after an error (in an atomic
        batch, one before it), or abandoned."""
        return self._stopped or self._cancelled or index > self._failed_at

    def _record(self, index: int, reply: Reply) -> None:
        self._results[index] = reply
        if self._atomic and reply["result"] != "ok":
            self._failed_at = min(self._failed_at, index)
