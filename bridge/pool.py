"""Several warm workers for batch runs: replies in input order, same-file requests in order.

Three kinds of thread share one lock. The feeder reads the input, validates each request and
routes it to a slot; each slot owns one engine worker and keeps up to `window` requests in
flight on it, so the engine never waits for Python; the caller's thread takes the replies in
input order from `Pool.map()`.

Ordering. A worker serves its requests one after the other, so two requests that touch the same
file keep their order when they go to the same worker. A request that writes a file goes where
every earlier unfinished request touching that file went; a request that only reads a file goes
where the unfinished writes of it went (reads of one file may overlap). When those are on two
workers, the feeder waits until all but one have finished. A request's files are the res://
paths of its engine message; files that a property value names are not tracked.

Faults. When a worker crashes or runs past the deadline, the request it was serving gets the
`engine_crashed` or `timeout` reply (as `Bridge` gives it), the worker is replaced, and the
requests queued behind it, which the engine had not started, are sent to the replacement.
Like `Bridge`, the pool locks the files a scene edit rewrites, replaces worn-out workers between
requests, and imports a project once when a request needs imported assets, then serves that
request again on a fresh worker. Requests already in flight behind it on that worker have run
by then; those that also needed the import are served again too.
"""

from __future__ import annotations

import collections
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from queue import SimpleQueue
from typing import Any, Callable, Iterable, Iterator, Sequence

from . import engine as engines
from . import paths
from .api import (
    DEFAULT_TIMEOUT,
    MAX_REQUESTS,
    MAX_RSS,
    START_TIMEOUT,
    EngineHost,
    check_input,
    decode_request,
    engine_message,
    engine_reply,
    error_reply,
    hold_writes,
)
from .errors import BridgeError, EngineCrashed, Skipped, Timeout
from .models import AnyRequest, ResourceRead, parse_request
from .worker import Worker

WINDOW = 16
"""Requests in flight per worker: enough queued engine work to cover Python's turn, no more."""
WEAR_CHECK = 256
"""Sends between two checks of a worker's wear (measuring its memory costs a few system calls)."""

_FILE_KEYS = ("path", "save_path", "scene_path", "source_path", "dest_path", "shader_path")
_READ_KEYS = frozenset({"source_path", "shader_path"})
_READ, _WRITE = 0, 1
_ROOTS_CACHED = 64
_SKIPPED = "skipped: an earlier request failed and --stop-on-error is set"

ArgvFor = Callable[[Path, str], Sequence[str]]
"""Build the command line of a worker for a project root and a reply token."""

FileKey = tuple[Path, str]


@dataclass
class _Job:
    index: int
    request: AnyRequest
    message: dict[str, Any]
    files: list[tuple[FileKey, int]]
    sent_at: float = 0.0


class Pool(EngineHost):
    """Serve a stream of requests with `jobs` warm engine workers per project.

    `map()` yields one reply per input, in input order, while the input is still being read.
    With `stop_on_error`, a request goes to an engine only once every earlier one has succeeded,
    so every request after the first error reply gets `skipped` and none of them runs; that
    exactness costs the overlap of requests (one runs at a time, whatever `jobs` is).
    """

    def __init__(
        self,
        godot: str | None = None,
        *,
        jobs: int = 1,
        timeout: float = DEFAULT_TIMEOUT,
        verbose: bool = False,
        window: int = WINDOW,
        stop_on_error: bool = False,
        auto_import: bool = True,
        start_timeout: float = START_TIMEOUT,
        max_requests: int | None = MAX_REQUESTS,
        max_rss: int | None = MAX_RSS,
        argv_for: ArgvFor | None = None,
    ) -> None:
        if jobs < 1 or window < 1:
            raise ValueError("a pool needs at least one worker and a window of at least one")
        super().__init__(
            godot,
            timeout=timeout,
            verbose=verbose,
            auto_import=auto_import,
            start_timeout=start_timeout,
            max_requests=max_requests,
            max_rss=max_rss,
        )
        self.jobs = jobs
        self.window = window
        self.stop_on_error = stop_on_error
        self._argv_for = argv_for
        self._import_lock = threading.Lock()
        self._imports: dict[Path, int] = {}
        self._import_tried: set[Path] = set()
        # One lock, two conditions: the caller waits for its next reply, the feeder for room, a
        # turn or a file's previous request; a reply wakes only the one who can use it.
        lock = threading.RLock()
        self._cond = threading.Condition(lock)
        self._feeder_cond = threading.Condition(lock)
        self._slots: dict[Path, list[_Slot]] = {}
        self._roots: dict[str, Path | BridgeError] = {}
        self._files: dict[FileKey, dict[_Slot, list[int]]] = {}
        self._results: dict[int, dict[str, Any]] = {}
        self._admitted = 0
        self._next_out = 0
        self._total: int | None = None
        self._failure: BaseException | None = None
        self._stopped = False
        self._cancelled = False
        self._feeder_waits: str | None = None
        """What the feeder waits for: "room" (a reply taken by the caller), "finish" (a request done)."""

    def close(self) -> None:
        """Stop every slot thread and engine process of the pool."""
        with self._cond:
            self._cancelled = True
            slots = [slot for group in self._slots.values() for slot in group]
            self._slots = {}
            self._cond.notify_all()
            self._feeder_cond.notify_all()
        for slot in slots:
            slot.stop()

    def workers(self) -> list[Worker]:
        """Return the engine workers running now."""
        with self._cond:
            slots = [slot for group in self._slots.values() for slot in group]
        return [slot.worker for slot in slots if slot.worker is not None]

    # ----- the caller's side -----------------------------------------------------------------

    def map(self, items: Iterable[str | dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """Yield the reply to each request (a JSON text or a decoded object), in input order."""
        with self._cond:
            # A run that was abandoned may still be draining; its replies must not mix in.
            while any(slot.pending for group in self._slots.values() for slot in group):
                self._cond.wait()
            self._results.clear()
            self._admitted = self._next_out = 0
            self._total, self._failure = None, None
            self._stopped = self._cancelled = False
        feeder = threading.Thread(target=self._feed, args=(items,), name="pool-feeder", daemon=True)
        feeder.start()
        try:
            while True:
                with self._cond:
                    while self._next_out not in self._results:
                        if self._total is not None and self._next_out >= self._total:
                            if self._failure is not None:
                                raise self._failure
                            return
                        self._cond.wait()
                    # Take every reply that is ready at once: one lock round per burst, not per reply.
                    ready = []
                    while self._next_out in self._results:
                        reply = self._results.pop(self._next_out)
                        self._next_out += 1
                        ready.append(reply)
                        if self.stop_on_error and reply["result"] != "ok":
                            self._stopped = True
                    if self._feeder_waits == "room":
                        self._feeder_cond.notify()
                yield from ready
        finally:
            with self._cond:
                self._cancelled = True
                self._cond.notify_all()
                self._feeder_cond.notify_all()

    def ready(self) -> bool:
        """Return whether the next reply of `map()` is available without waiting."""
        return self._next_out in self._results

    # ----- the feeder ------------------------------------------------------------------------

    def _feed(self, items: Iterable[str | dict[str, Any]]) -> None:
        count = 0
        try:
            for item in items:
                if not self._admit():
                    return
                self._route(count, item)
                count += 1
        except BaseException as exc:
            # Raised again in the caller's thread, after the replies to what was read before it.
            self._failure = exc
        finally:
            with self._cond:
                self._total = count
                self._cond.notify_all()

    def _admit(self) -> bool:
        # Bound the replies held for reordering, so memory stays flat on an endless input.
        limit = max(256, 4 * self.jobs * self.window)
        with self._cond:
            while self._admitted - self._next_out >= limit and not self._cancelled:
                self._wait_as_feeder("room")
            self._admitted += 1
            return not self._cancelled

    def _route(self, index: int, item: str | dict[str, Any]) -> None:
        raw: Any = None
        try:
            raw = decode_request(item) if isinstance(item, str) else item
            undecoded: BridgeError | None = None
        except BridgeError as exc:
            undecoded = exc
        if self.stop_on_error:
            self._await_turn(index)
        if self._stopped:
            self._finish(index, error_reply(raw, Skipped(_SKIPPED)))
            return
        if undecoded is not None:
            self._finish(index, error_reply(None, undecoded))
            return
        try:
            check_input(raw)
            request = parse_request(raw)
        except BridgeError as exc:
            self._finish(index, error_reply(raw, exc))
            return
        try:
            root = self._root(request.project_path)
            message = engine_message(request, root)
        except BridgeError as exc:
            self._finish(index, error_reply(request, exc))
            return
        files = [
            ((root, message[key]), _READ if key in _READ_KEYS or isinstance(request, ResourceRead) else _WRITE)
            for key in _FILE_KEYS
            if key in message
        ]
        job = _Job(index, request, message, files)
        with self._cond:
            slot = self._place(root, files)
            while slot is None and not self._cancelled:
                self._wait_as_feeder("finish")
                slot = self._place(root, files)
            if slot is None:
                return
            for key, kind in files:
                self._files.setdefault(key, {}).setdefault(slot, [0, 0])[kind] += 1
            slot.pending += 1
        slot.inbox.put(job)

    def _await_turn(self, index: int) -> None:
        with self._cond:
            while self._next_out < index and not self._cancelled:
                self._wait_as_feeder("room")

    def _wait_as_feeder(self, what: str) -> None:
        """Wait for a reply to be taken ("room") or a request to finish ("finish") (lock held)."""
        self._feeder_waits = what
        self._feeder_cond.wait()
        self._feeder_waits = None

    def _place(self, root: Path, files: list[tuple[FileKey, int]]) -> _Slot | None:
        """Return the slot for a request on these files, or None while it must wait (lock held)."""
        after: set[_Slot] = set()
        for key, kind in files:
            for slot, uses in self._files.get(key, {}).items():
                if kind == _WRITE or uses[_WRITE]:
                    after.add(slot)
        if len(after) > 1:
            return None
        if after:
            return after.pop()
        group = self._slots.get(root)
        if group is None:
            group = self._slots[root] = [_Slot(self, root, n) for n in range(self.jobs)]
        return min(group, key=lambda slot: slot.pending)

    def _root(self, project_path: str) -> Path:
        known = self._roots.get(project_path)
        if known is None:
            if len(self._roots) >= _ROOTS_CACHED:
                self._roots.clear()
            try:
                known = paths.project_root(project_path)
            except BridgeError as exc:
                known = exc
            self._roots[project_path] = known
        if isinstance(known, BridgeError):
            raise known
        return known

    # ----- shared by the feeder and the slots ------------------------------------------------

    def _finish(self, index: int, reply: dict[str, Any], job: _Job | None = None, slot: _Slot | None = None) -> None:
        with self._cond:
            if job is not None and slot is not None:
                self._release(job, slot)
            self._results[index] = reply
            # Wake only who can use it: the caller waits for the next reply in order (or, after
            # an abandoned run, for the requests still in flight), the feeder for a request to end.
            if index == self._next_out or self._cancelled:
                self._cond.notify_all()
            if self._feeder_waits == "finish":
                self._feeder_cond.notify()

    def _release(self, job: _Job, slot: _Slot) -> None:
        slot.pending -= 1
        for key, kind in job.files:
            users = self._files[key]
            uses = users[slot]
            uses[kind] -= 1
            if not any(uses):
                del users[slot]
                if not users:
                    del self._files[key]

    def argv(self, root: Path, token: str) -> Sequence[str]:
        """Return the command line of a worker serving `root`."""
        if self._argv_for is not None:
            return self._argv_for(root, token)
        return engines.worker_argv(self.engine(), root, token)

    def new_worker(self, root: Path) -> Worker:
        """Return a started worker for `root`, configured as `Bridge` configures its own."""
        return self.start_worker(lambda token: self.argv(root, token))

    def imports(self, root: Path) -> int:
        """Return how many times the pool has imported `root` (workers started before are stale)."""
        return self._imports.get(root, 0)

    def import_for(self, root: Path, seen: int) -> tuple[bool, str | None]:
        """Import `root` once, for a worker that answered not_imported after `seen` imports.

        Return whether to serve the request again, and why the import failed (None if it did not).
        """
        with self._import_lock:
            if self.imports(root) > seen:
                return True, None
            if not self.auto_import or root in self._import_tried:
                return False, None
            self._import_tried.add(root)
            failure = self.import_assets(root)
            if failure is None:
                self._imports[root] = self.imports(root) + 1
            return failure is None, failure

    def skipping(self) -> bool:
        """Return whether requests not yet sent are to be skipped (after an error, or abandoned)."""
        return self._stopped or self._cancelled


class _Slot:
    """One worker and the thread that keeps its window of requests full."""

    def __init__(self, pool: Pool, root: Path, number: int) -> None:
        self.pool = pool
        self.root = root
        self.pending = 0
        self.inbox: SimpleQueue[_Job | None] = SimpleQueue()
        self.worker: Worker | None = None
        self._retry: collections.deque[_Job] = collections.deque()
        self._inflight: collections.deque[_Job] = collections.deque()
        self._idle_since = 0.0
        self._imports_seen = 0
        self._sends = 0
        self._thread = threading.Thread(target=self._serve, name=f"pool-slot-{number}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the slot's engine and end its thread."""
        self.inbox.put(None)
        worker = self.worker
        if worker is not None and self.pending:
            # The engine serves what it already has, then sees its input end; a slot thread
            # waiting for a reply is released either way, without waiting for the deadline.
            worker.close()
        elif worker is not None:
            # Idle, so every file it wrote is in place (a reply comes only after that); its
            # orderly exit would add ~0.1 s to the end of every batch and change nothing.
            worker.kill()
        self._thread.join()
        self._drop_worker()

    def _serve(self) -> None:
        while self._fill():
            if self._inflight:
                self._receive()
        while self._inflight:
            self._receive()
        for job in self._retry:
            self._finish(job, error_reply(job.request, Skipped("skipped: the batch was stopped")))

    def _fill(self) -> bool:
        """Send requests until the window is full; return False once the slot is to stop."""
        while len(self._inflight) < self.pool.window:
            if self._retry:
                job = self._retry.popleft()
            elif self._inflight and self.inbox.empty():
                return True
            else:
                got = self.inbox.get()
                if got is None:
                    return False
                job = got
            if self.pool.skipping():
                self._finish(job, error_reply(job.request, Skipped(_SKIPPED)))
                continue
            if not self._send(job):
                return True
        return True

    def _send(self, job: _Job) -> bool:
        """Send one request; return False to first take the replies in flight."""
        # Decided once: a worker that dies between two looks must not be replaced under
        # requests still in flight on it.
        usable = self._usable()
        if self._inflight and not usable:
            # Dead (the crash reply goes to the request it was serving), stale or worn out:
            # the replacement comes once the requests in flight are answered.
            self._retry.appendleft(job)
            return False
        try:
            worker = self.worker if usable and self.worker is not None else self._replace_worker()
            release = hold_writes(worker, self.root, job.message, time.monotonic() + self.pool.timeout)
            job.sent_at = time.monotonic()
            worker.send(job.message, release=release)
        except EngineCrashed as exc:
            if self._inflight:
                self._retry.appendleft(job)
                return False
            self._drop_worker()
            self._finish(job, error_reply(job.request, exc))
        except BridgeError as exc:
            self._finish(job, error_reply(job.request, exc))
        else:
            self._inflight.append(job)
            self._sends += 1
        return True

    def _usable(self) -> bool:
        worker = self.worker
        if worker is None or not worker.alive or self._imports_seen < self.pool.imports(self.root):
            return False
        return self._sends % WEAR_CHECK != 0 or not worker.worn_out()

    def _receive(self) -> None:
        head = self._inflight[0]
        assert self.worker is not None
        deadline = max(head.sent_at, self._idle_since) + self.pool.timeout
        try:
            answer = self.worker.receive(deadline)
        except (Timeout, EngineCrashed) as exc:
            self._inflight.popleft()
            self._finish(head, error_reply(head.request, exc))
            # The engine serves in order, so the requests behind the failed one never started.
            self._retry.extendleft(reversed(self._inflight))
            self._inflight.clear()
            self._drop_worker()
            return
        self._inflight.popleft()
        self._idle_since = time.monotonic()
        if (answer.get("error") or {}).get("code") == "not_imported":
            again, failure = self.pool.import_for(self.root, self._imports_seen)
            if again:
                self._retry.append(head)
                return
            if failure is not None:
                answer["error"]["message"] += f"; {failure}"
        self._finish(head, engine_reply(head.request, answer))

    def _replace_worker(self) -> Worker:
        self._drop_worker()
        self._imports_seen = self.pool.imports(self.root)
        self.worker = self.pool.new_worker(self.root)
        self._sends = 0
        self._idle_since = time.monotonic()
        return self.worker

    def _drop_worker(self) -> None:
        worker, self.worker = self.worker, None
        if worker is not None:
            worker.close()

    def _finish(self, job: _Job, reply: dict[str, Any]) -> None:
        self.pool._finish(job.index, reply, job, self)
