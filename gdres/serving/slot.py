"""One slot of a pool: a worker for one project and the requests routed to it, queued and then in
flight; its engine's life (started, replaced when dead, stale or worn out, killed after an
allow_scripts request) and the locks of the files its requests rewrite."""

from __future__ import annotations

import collections
import functools
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

from gdres.engine.worker import Release, Worker
from gdres.errors import BridgeError, EngineCrashed, Skipped, Timeout
from gdres.requests.request import Job, Reply, finish, refuse
from gdres.serving import imports, journal, locks
from gdres.serving.starter import Starter

WEAR_CHECK = 256
"""Sends between two checks of a busy worker's wear (measuring its memory costs a few system calls);
an idle worker is checked before every request."""

SKIPPED = "skipped: an earlier request failed and --stop-on-error is set"


@dataclass
class Task:
    """A prepared request on its way through the pool."""

    index: int
    job: Job
    sent_at: float = 0.0
    locked_until: float = 0.0
    """When it stops waiting for a lock that another request holds (0: it has not waited)."""
    import_time_at_send: float = 0.0
    """The pool's Starter.import_time when it was sent."""


Result = TypeVar("Result")


class Host(Protocol):
    """What a slot needs of the pool it serves."""

    window: int
    """Requests in flight per worker."""
    starter: Starter

    def skipping(self, index: int) -> bool:
        """Whether request `index`, not yet sent (or to be sent again), is to be skipped."""

    def finish(self, task: Task, reply: Reply, slot: Slot) -> None:
        """Record the reply to `task`."""

    def interruptible(self, wait: Callable[[], Result]) -> Result:
        """Return `wait()`, a long wait that holds no hand-over: a Ctrl-C during it is raised at once."""


def release_writes(worker: Worker, job: Job, held: locks.Held) -> Release:
    """Return what `worker` is to run once it is done with a request whose rewrites (see
    gdres/serving/locks.py) are locked by `held`, read as they are before it goes out.

    That lets the locks go. When its engine died before answering, it first removes the temp files
    the engine left beside the files the request writes and, for a rewrite, puts those files back
    as they were: a shape saved and attached to a scene is written both or neither, even under SIGKILL.
    """
    written = job.written
    before = locks.snapshot(held.targets)

    def release(answered: bool) -> None:
        try:
            if not answered and worker.pid is not None:
                locks.sweep(written, worker.pid)
                locks.restore(before)
        finally:
            held.release()

    return release


def _rewrites(job: Job) -> list[Path]:
    return [Path(path) for path in job.written] if job.rewrites else []


class Slot:
    """One worker and the requests routed to it: queued, then in flight (at most `window`)."""

    def __init__(self, pool: Host, root: Path) -> None:
        self.pool = pool
        self.root = root
        self.worker: Worker | None = None
        self.queue: collections.deque[Task] = collections.deque()
        self.inflight: collections.deque[Task] = collections.deque()
        self._idle_since = 0.0
        self._import_time_at_start = 0.0
        self._imports_seen = 0
        self._stamp: int | None = None
        self._sends = 0
        self._pace: float | None = None
        """Seconds the engine takes per request, as its replies say (a moving average)."""

    def pending(self) -> int:
        """Return how many requests the slot has not answered yet."""
        return len(self.queue) + len(self.inflight)

    def locking(self) -> bool:
        """Return whether a request in flight holds file locks (one sent only to an idle engine)."""
        return bool(self.inflight) and self.inflight[0].job.rewrites

    def _one_shot(self) -> bool:
        """Whether the worker serves an allow_scripts request: it takes no other, and goes after it."""
        return bool(self.inflight) and self.inflight[0].job.allows_scripts

    def work_ahead(self) -> float | None:
        """Seconds of work the engine has in flight, at its pace (None before it has one)."""
        return None if self._pace is None else len(self.inflight) * self._pace

    def deadline(self) -> float:
        """Return when the request the engine is serving now runs out of time."""
        worker = self.worker
        # Time the pool's thread spent in an import does not count: it read no reply meanwhile.
        import_time = self.pool.starter.import_time
        if worker is not None and not worker.ready:
            return worker.start_deadline + import_time - self._import_time_at_start
        head = self.inflight[0]
        ready_at = worker.ready_at if worker is not None else 0.0
        since = max(head.sent_at, self._idle_since, ready_at)
        return since + self.pool.starter.settings.timeout + import_time - head.import_time_at_send

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
            if self.pool.skipping(task.index):
                self.queue.popleft()
                self.pool.finish(task, refuse(task.job.request, Skipped(SKIPPED)), self)
                continue
            job = task.job
            if self.inflight and (job.rewrites or job.allows_scripts or self._one_shot() or not self._usable()):
                # A rewrite waits for its lock, which the replies in flight may hold; a dead,
                # stale or worn-out worker is replaced once the requests in flight are answered;
                # an allow_scripts request has an engine of its own.
                return
            if not self._send(task):
                return

    def _send(self, task: Task) -> bool:
        """Send the head of the queue; return False to first take the replies in flight, or to try
        its locks again later."""
        try:
            held = locks.try_hold(_rewrites(task.job))
        except locks.Busy as busy:
            # Waiting here would also stop the replies that let locks go from being read (see
            # gdres/serving/locks.py): the loop tries again after a pause (retry_at()).
            now = time.monotonic()
            if not task.locked_until:
                task.locked_until = now + self.pool.starter.settings.timeout
            elif now >= task.locked_until:
                self.queue.popleft()
                self.pool.finish(task, refuse(task.job.request, busy.timeout()), self)
                return True
            return False
        except BridgeError as exc:
            self.queue.popleft()
            self.pool.finish(task, refuse(task.job.request, exc), self)
            return True
        handed = False  # the locks, to the worker: it lets them go, whatever happens to the request
        try:
            task.locked_until = 0.0  # sent again after an import, it waits anew
            if task.job.allows_scripts:
                self.pool.interruptible(functools.partial(self.pool.starter.trusted_import, self.root))
                worker = self._replace_worker(trusted=True)
            else:
                worker = self.worker if self.worker is not None and self._usable() else self._replace_worker()
            if type(task.job.request).importer_options:
                task.job.message["importers"] = str(self.pool.interruptible(self.pool.starter.importer_options))
            release = release_writes(worker, task.job, held)
            handed = True
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
        finally:
            if not handed:
                held.release()
        self.queue.popleft()
        task.sent_at = time.monotonic()
        task.import_time_at_send = self.pool.starter.import_time
        self.inflight.append(task)
        self._sends += 1
        return True

    def waits_for_lock(self) -> bool:
        """Return whether the head of the queue waits for a lock that another request holds."""
        return bool(self.queue) and bool(self.queue[0].locked_until)

    def retry_at(self) -> float | None:
        """Return when to try again the locks the head of the queue waits for (None: it waits for none)."""
        if not self.waits_for_lock():
            return None
        return min(time.monotonic() + locks.POLL, self.queue[0].locked_until)

    def _usable(self) -> bool:
        worker = self.worker
        if worker is None or not worker.alive or self._imports_seen < self.pool.starter.imports(self.root):
            return False
        if self.inflight and self._sends % WEAR_CHECK:
            return True
        return not worker.worn_out()

    def collect(self, now: float) -> None:
        """Take the replies the engine sent; fail the request it was serving if it died or ran out of time."""
        worker = self.worker
        if worker is None:
            return
        again: list[Task] = []
        while (answer := worker.take()) is not None:
            busy = answer.pop("busy_us", None)
            if type(busy) is int and busy >= 0:
                seconds = busy / 1e6
                self._pace = seconds if self._pace is None else 0.9 * self._pace + 0.1 * seconds
            task = self.inflight.popleft()
            self._idle_since = now
            if task.job.allows_scripts:
                # Its engine may run the code it loaded: it serves nothing else, and is killed (it
                # has answered, so its files are in place; code it runs may hold up an orderly exit).
                self.worker = None
                worker.kill()
            if again or (self.queue and self.queue[0].index < task.index):
                # A request sent before this one is to run again, after the import it waited for:
                # this one ran ahead of it, so it runs again after it and sees its write (a line
                # of a batch sees the lines before it); what it answered does not count.
                again.append(task)
                continue
            assets = (answer.get("error") or {}).pop("assets", None)
            carried = (answer.get("error") or {}).pop("carried", None)
            if (answer.get("error") or {}).get("code") == "not_imported":
                if task.job.dry_run:
                    answer["error"]["message"] += ("; a dry run does not import the project's assets (that would "
                                                   "change its .godot/ folder): serve one request for real first")
                elif not self.pool.skipping(task.index):
                    retry, failure = self.pool.interruptible(functools.partial(
                        self.pool.starter.import_for, self.root, self._imports_seen, self._stamp, _asset_paths(assets)))
                    if retry:
                        if isinstance(carried, dict):
                            # What the request did before it met the asset, for its next pass.
                            task.job.message["carried"] = carried
                        again.append(task)
                        continue
                    if failure is not None:
                        answer["error"]["message"] += f"; {failure}"
                    elif isinstance(carried, dict):
                        answer["error"]["message"] += "; it was imported again and still is not as asked"
                    undo = carried.get("undo") if isinstance(carried, dict) else None
                    if isinstance(undo, dict) and journal.put_back(self.root, undo.get("path"), undo.get("old"),
                                                                   undo.get("new")):
                        # Nothing stays of a request that fails: its settings go back as they were.
                        answer["error"]["message"] += "; its .import was put back as it was"
            self.pool.finish(task, finish(task.job, answer), self)
        self._put_back(again)
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
                timeout = self.pool.starter.settings.timeout
                error = Timeout(f"the request ran past its deadline of {timeout:g} s; the engine (pid {worker.pid}) "
                                "was killed and the next request gets a fresh one")
            else:
                error = worker.expire()
            self.pool.finish(head, refuse(head.job.request, error), self)
            # The engine serves in order, so the requests behind the failed one never started.
            self._put_back(self.inflight)
            self.inflight.clear()
            self._drop_worker()

    def _put_back(self, tasks: Collection[Task]) -> None:
        """Queue sent requests to be sent again: in input order, among any put back before, and
        before those never sent."""
        if tasks:
            self.queue = collections.deque(sorted([*tasks, *self.queue], key=lambda task: task.index))

    def _replace_worker(self, *, trusted: bool = False) -> Worker:
        self._drop_worker()
        worker = self.pool.starter.new_worker(self.root, trusted=trusted)
        self._imports_seen = self.pool.starter.imports(self.root)
        self._stamp = imports.stamp(self.root)
        self.worker = worker
        self._sends = 0
        self._idle_since = time.monotonic()
        self._import_time_at_start = self.pool.starter.import_time
        return worker

    def _drop_worker(self) -> None:
        worker, self.worker = self.worker, None
        if worker is not None:
            worker.close()


def _asset_paths(named: object) -> tuple[str, ...]:
    """The res:// paths of the assets an engine's not_imported reply names (every asset when it names
    none: an engine of an older bridge, or a refusal outside the gate)."""
    if isinstance(named, list) and named and all(isinstance(path, str) and path.startswith("res://")
                                                 for path in named):
        return tuple(named)
    return imports.EVERY_ASSET
