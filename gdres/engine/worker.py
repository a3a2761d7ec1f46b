"""One warm engine: requests framed out, replies correlated in, deadlines, and a bounded stop.

Framing. Requests go to the engine's stdin as `<byte length in 15 digits>\\n<JSON bytes>`; the engine
reads the payload with `OS.read_buffer_from_stdin(n)`, so no line buffer can split it. Replies come
back on its *stderr* (Godot always flushes stderr, while stdout stays buffered when a project sets
`flush_stdout_on_print` off), framed with a token random per process (gdres/engine/frames.py scans them).
Each request carries a sequence number and its reply must carry the same one: the engine answers
in order, so any other number means the stream cannot be trusted, and the engine goes.

No call that can hang. Threads of gdres/engine/process.py serve the pipes, the same on every system:
the reader threads put what the engine prints on an `Inbox`, one queue that a worker has for
itself or shares with the other workers of a pool. Whoever waits for a reply (`receive()`, or a
pool waiting on all its workers at once) waits on that queue with a deadline, hands each piece of
output to its worker (`feed()`), and kills the whole process tree when the deadline passes.
`send()` queues a request and returns. The threads are woken only as the waiting thread stops
(`flush()`): it then hands every request queued by then to the engine's writer thread at once,
and lets each reader whose last piece it took read the next. So a flood of chatter costs neither
memory nor a stalled reply, output gathers in the pipe while this thread works, and no thread is
woken only to wait for the interpreter lock this one holds. Everything but the pipe threads runs
in the thread that waits; one thread uses a worker (or the workers of one inbox) at a time.

A request may come with a `release` callback (the file locks its writes hold). It runs once: with
True when the request's reply is read, or with False once the engine is found gone without
answering, so the caller can clean up after a killed write before anyone else may touch those files.
"""

from __future__ import annotations

import collections
import json
import os
import queue
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from typing import IO, Any

from gdres.engine.frames import Garbled, ReplyScanner
from gdres.engine.process import STDERR, STDIN, STDOUT, EngineProcess, Spawn
from gdres.errors import EngineCrashed, InvalidRequest, Timeout
from gdres.settings import START_TIMEOUT

Release = Callable[[bool], None]
"""Called once per request when the engine is done with it: True when its reply arrived, False
when the engine died (or was never reached) without answering."""

_TAIL_LINES = 30
_TAIL_CHARS = 400
STOP_BUDGET = 4.0
"""Seconds a stop may take in all: end of input, then terminate, then kill (half, then the rest)."""
KILL_BUDGET = 2.0
"""Seconds a kill may take to reap the engine and read what it left in its pipes."""
_WAIT_MAX = 3600.0
"""Longest single wait on the inbox (a deadline further away is waited for in pieces)."""
_BATCH = 256
"""Most pieces of output handed to workers per wait, so that a flood cannot keep a wait from its deadline."""
_DEBUG = os.environ.get("GDRES_DEBUG") == "1"
_REPLY = json.JSONDecoder(strict=False)
"""The decoder of replies, made once (json.loads() with an option makes one per call). strict=False:
the engine's JSON writer leaves control characters unescaped (all but backspace, form feed, new
line, carriage return and tab), and a request may well quote one back."""


class Worker:
    """A warm engine process that answers framed requests one at a time, in sending order.

    `max_requests` and `max_rss` (bytes) say when the worker is worn out (see `worn_out`); the
    owner then replaces it between two requests, which no caller notices.
    """

    def __init__(
        self,
        argv_for_token: Callable[[str], Sequence[str]],
        *,
        start_timeout: float = START_TIMEOUT,
        verbose: bool = False,
        spawn: Spawn = subprocess.Popen,
        log: IO[str] | None = None,
        max_requests: int | None = None,
        max_rss: int | None = None,
        inbox: Inbox | None = None,
    ) -> None:
        self.token = os.urandom(16).hex()
        self._argv = list(argv_for_token(self.token))
        self._scanner = ReplyScanner(self.token.encode("ascii"))
        self._start_timeout = start_timeout
        self._verbose = verbose
        self._spawn = spawn
        self._log = log if log is not None else sys.stderr
        self._max_requests = max_requests
        self._max_rss = max_rss
        self._inbox = inbox if inbox is not None else Inbox()
        self._process: EngineProcess | None = None
        self._replies: collections.deque[dict[str, Any]] = collections.deque()
        self._waiting: collections.deque[tuple[int, Release | None]] = collections.deque()
        """Sequence number and release of each request sent and not answered, in sending order."""
        self._unsent: list[bytes] = []
        """Requests sent and not yet handed to the engine's writer thread (see `flush()`)."""
        self._owed: list[int] = []
        """Streams whose reader waits for its last chunk to be taken, until `flush()` says so."""
        self._held = False
        """Whether the inbox will flush this worker (it has something in `_unsent` or `_owed`)."""
        self._tail: collections.deque[str] = collections.deque(maxlen=_TAIL_LINES)
        self._closing = False
        self._ended = False
        self._seq = 0
        self._dead: str | None = None
        self.ready = False
        self.start_deadline = 0.0
        self.ready_at = 0.0
        """When the ready message was read: a request's time starts no earlier."""
        self.served = 0
        self.version = ""

    # ----- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        """Spawn the engine and wait, within the start-up deadline, for its ready message."""
        self.launch()
        self.wait_ready()

    def launch(self) -> None:
        """Spawn the engine without waiting; `ready` turns True once its ready message is read.

        Requests may be sent at once: the engine reads them when it is ready.
        """
        self._process = EngineProcess(self._argv, self._inbox.deliverer(self), self._spawn,
                                      keep_stdout=self._verbose)
        self.start_deadline = time.monotonic() + self._start_timeout

    def wait_ready(self) -> None:
        """Wait, within the start-up deadline, for the ready message of an engine `launch()` spawned."""
        self._wait_until(lambda: self.ready, self.start_deadline)

    def _wait_until(self, done: Callable[[], bool], deadline: float) -> None:
        """Serve the pipes until `done()`; raise EngineCrashed once the engine is gone, or kill it
        and raise (see `expire`) once `deadline` passes."""
        while not done():
            if self._ended:
                raise self.crash()
            if time.monotonic() >= deadline:
                raise self.expire()
            self._inbox.serve(deadline)

    def expire(self) -> EngineCrashed | Timeout:
        """Kill the engine for running past a deadline; return the error that says so."""
        self._dead = self._dead or "timed out"
        self.kill()
        if not self.ready:
            return EngineCrashed(
                f"the engine (pid {self.pid}) did not become ready within {self._start_timeout:g} s{self._tail_text()}"
            )
        return Timeout(f"the engine (pid {self.pid}) did not answer in time; it was killed and will be replaced")

    def crash(self) -> EngineCrashed:
        """Return the error of an engine that is gone: its pid, exit status and last output."""
        return self._crashed("while serving the request" if self.ready else "during start-up")

    @property
    def pid(self) -> int | None:
        """Return the engine's process id."""
        return self._process.pid if self._process is not None else None

    @property
    def alive(self) -> bool:
        """Return whether the engine can take another request."""
        process = self._process
        return process is not None and self._dead is None and not self._ended and process.running()

    @property
    def ended(self) -> bool:
        """Return whether the engine is gone and every reply it sent has been read."""
        return self._ended

    def rss(self) -> int:
        """Return the resident memory of the engine process, in bytes (0 once it is gone)."""
        return self._process.rss() if self.alive and self._process is not None else 0

    def worn_out(self) -> bool:
        """Return whether the worker has served its quota of requests or grown past its memory limit."""
        if self._max_requests is not None and self.served >= self._max_requests:
            return True
        return self._max_rss is not None and self.rss() > self._max_rss

    def close(self) -> None:
        """Stop the engine within STOP_BUDGET: end of input, then terminate, then kill the whole tree."""
        process = self._process
        if process is None:
            return
        self._dead = self._dead or "closed"
        deadline = time.monotonic() + STOP_BUDGET
        if process.running():
            # The engine serves what it was sent, then sees its input end and quits.
            self._closing = True
            self.flush()
            process.close_input()
            if not self._drain(deadline - STOP_BUDGET / 2):
                process.terminate()
                self._drain(deadline)
        self._stop(deadline)

    def kill(self) -> None:
        """Kill the engine and every process it started, then read what it left in its pipes."""
        if self._process is not None:
            self._dead = self._dead or "killed"
            self._stop(time.monotonic() + KILL_BUDGET)

    def _stop(self, deadline: float) -> None:
        process = self._process
        assert process is not None
        process.kill_tree(deadline)
        self._drain(deadline)
        for stream in list(process.outputs):
            # Held open by a process that escaped the kill: stop listening to it.
            self._end_output(stream)
        process.close_input()
        process.release()

    def _drain(self, deadline: float) -> bool:
        """Read the engine's output until it ends or `deadline` passes; return whether it ended."""
        process = self._process
        while process is not None and process.outputs and time.monotonic() < deadline:
            self._inbox.serve(deadline)
        return process is None or not process.outputs

    # ----- messages --------------------------------------------------------------------------

    def send(self, message: dict[str, Any], *, release: Release | None = None) -> int:
        """Queue one request; return its sequence number. Replies come back in sending order.

        The request goes to the engine at the next wait on the inbox (or `flush()`). Never blocks:
        an engine that does not read shows up as a timeout in `receive()`.
        `release` runs when the engine is done with this request (see the module docstring).
        """
        try:
            if self._closing or self._process is None or not self._process.input_open or not self.alive:
                raise self._crashed("before the request was sent")
            payload = self._encode(message, self._seq + 1)
        except (EngineCrashed, InvalidRequest):
            if release is not None:
                release(False)
            raise
        self._seq += 1
        self._waiting.append((self._seq, release))
        self._unsent.append(b"%015d\n" % len(payload) + payload)
        self._hold()
        return self._seq

    def _hold(self) -> None:
        if not self._held:
            self._held = True
            self._inbox.hold(self)

    def flush(self) -> None:
        """Hand the requests sent so far to the engine's writer and let its readers read again: one
        wake-up of each, just before this thread waits (a thread woken while this one holds the
        interpreter lock waits for it, which costs far more than the wake-up itself)."""
        self._held = False
        unsent, self._unsent = self._unsent, []
        owed, self._owed = self._owed, []
        process = self._process
        if process is None:
            return
        if unsent:
            process.write(b"".join(unsent) if len(unsent) > 1 else unsent[0])
        for stream in owed:
            process.taken(stream)

    def _encode(self, message: dict[str, Any], seq: int) -> bytes:
        try:
            payload = json.dumps({**message, "seq": seq}, ensure_ascii=False, allow_nan=False).encode("utf-8")
        except (ValueError, TypeError, RecursionError) as exc:
            raise InvalidRequest(f"the request cannot be sent as JSON: {exc}") from None
        if _DEBUG:
            self._log.write(f"[bridge -> {self.pid}] {payload[:2000].decode('utf-8', 'replace')}\n")
        return payload

    def news(self) -> bool:
        """Return whether a reply waits in `take()` or the engine is gone (its owner has to look)."""
        return bool(self._replies) or self._ended

    def take(self) -> dict[str, Any] | None:
        """Return the next reply already read, or None."""
        if not self._replies:
            return None
        self.served += 1
        return self._replies.popleft()

    def receive(self, deadline: float) -> dict[str, Any]:
        """Return the next reply, or raise Timeout (engine killed) or EngineCrashed."""
        self._wait_until(lambda: bool(self._replies), deadline)
        reply = self.take()
        assert reply is not None
        return reply

    # ----- pipes (output handed over by the inbox) ------------------------------------------

    def feed(self, stream: int, data: bytes) -> None:
        """Take what a pipe thread of this worker's engine delivered (see process.Deliver)."""
        process = self._process
        if process is None:
            return
        if stream == STDIN:
            self._input_lost()
            return
        self._owed.append(stream)
        self._hold()
        if stream not in process.outputs:
            return
        if not data:
            self._end_output(stream)
        elif stream == STDERR:
            self._scan(data)
        elif stream == STDOUT and self._verbose:
            self._chatter(data, keep=False)

    def _input_lost(self) -> None:
        process = self._process
        assert process is not None
        process.input_lost()
        if process.wait(time.monotonic() + KILL_BUDGET / 8) is None:
            # Alive but its input is closed: it can never get another request.
            self._dead = self._dead or "it closed its input"
            process.kill_tree(time.monotonic() + KILL_BUDGET)

    def _end_output(self, stream: int) -> None:
        process = self._process
        assert process is not None
        reply_stream = stream == STDERR and stream in process.outputs
        process.ended(stream)
        if reply_stream:
            self._reply_stream_ended()

    def _reply_stream_ended(self) -> None:
        """Make sure the engine is gone, then release the requests it never answered."""
        process = self._process
        assert process is not None
        self._chatter(self._scanner.end())
        if process.running() and process.wait(time.monotonic() + KILL_BUDGET) is None:
            self._dead = self._dead or "it closed its output"
            process.kill_tree(time.monotonic() + KILL_BUDGET)
        self._ended = True
        pending, self._waiting = self._waiting, collections.deque()
        for _, release in pending:
            if release is not None:
                release(False)

    # ----- the reply stream ------------------------------------------------------------------

    def _scan(self, data: bytes) -> None:
        garbled = None
        try:
            frames, chatter = self._scanner.feed(data)
        except Garbled as exc:
            garbled, frames, chatter = exc, exc.frames, exc.chatter
        for piece in chatter:
            self._chatter(piece)
        for body in frames:
            if not self._frame(body):
                return
        if garbled is not None:
            self._garbled("it sent a garbled reply")

    def _frame(self, body: bytes) -> bool:
        """Take one reply frame; return False when it cannot be trusted (the engine is then gone)."""
        try:
            reply = _REPLY.decode(body.decode("utf-8", "surrogatepass"))
        except ValueError:
            reply = None
        if not isinstance(reply, dict):
            self._garbled("it sent a garbled reply")
            return False
        if _DEBUG:
            self._log.write(f"[bridge <- {self.pid}] {body[:2000].decode('utf-8', 'replace')}\n")
        if not self.ready:
            self.ready = True
            self.ready_at = time.monotonic()
            self.version = str(reply.get("version", ""))
            return True
        seq = reply.get("seq")
        # -1: the engine could not read the request at all (it then cannot know its number).
        expected = self._waiting[0][0] if self._waiting else None
        if expected is None or (seq != expected and not (seq == -1 and reply.get("ok") is False)):
            self._garbled(f"it answered request {seq!r} when {expected!r} was due")
            return False
        _, release = self._waiting.popleft()
        if release is not None:
            release(True)
        self._replies.append(reply)
        return True

    def _garbled(self, why: str) -> None:
        """A reply that cannot be read or placed: nothing after it can be trusted, so the engine goes."""
        process = self._process
        assert process is not None
        self._dead = self._dead or why
        process.kill_tree(time.monotonic() + KILL_BUDGET)
        self._end_output(STDERR)

    def _chatter(self, raw: bytes, *, keep: bool = True) -> None:
        if not raw.strip():
            return
        lines = raw.split(b"\n")
        if keep:
            for line in lines[-_TAIL_LINES:]:
                if line.strip():
                    self._tail.append(line[: _TAIL_CHARS * 4].decode("utf-8", "replace").rstrip()[:_TAIL_CHARS])
        if self._verbose:
            for line in lines:
                if line.strip():
                    self._log.write(f"[godot {self.pid}] {line.decode('utf-8', 'replace').rstrip()}\n")
            self._log.flush()

    # ----- errors ----------------------------------------------------------------------------

    def _crashed(self, when: str) -> EngineCrashed:
        status = self._process.status(time.monotonic() + KILL_BUDGET) if self._process is not None else "not started"
        why = f"; {self._dead}" if self._dead and self._dead not in ("killed", "closed") else ""
        return EngineCrashed(f"the engine (pid {self.pid}) stopped {when}, {status}{why}{self._tail_text()}")

    def _tail_text(self) -> str:
        return "; its last output: " + " | ".join(self._tail) if self._tail else ""


class Inbox:
    """The one queue that the pipe threads of one or more workers' engines put their output on, and
    that a pool's input thread wakes the pool through: whoever waits for replies waits here.

    A wait hands over whatever arrived, for any worker of the inbox, so a waiter first looks at what
    its workers hold already (`Worker.news()`): a wait for one worker may have read another's reply.
    """

    def __init__(self) -> None:
        self._events: queue.SimpleQueue[tuple[Worker | None, int, bytes]] = queue.SimpleQueue()
        self._held: dict[Worker, None] = {}
        """The workers with something to hand to their engines' threads at the next `flush()`."""

    def deliverer(self, worker: Worker) -> Callable[[int, bytes], None]:
        """Return what the pipe threads of `worker`'s engine hand their output to."""
        put = self._events.put

        def deliver(stream: int, data: bytes) -> None:
            put((worker, stream, data))

        return deliver

    def wake(self) -> None:
        """End the wait in `serve()` now (safe from any thread)."""
        self._events.put((None, STDIN, b""))

    def hold(self, worker: Worker) -> None:
        """Note that `worker` has something to hand to its engine's threads at the next `flush()`."""
        self._held[worker] = None

    def flush(self) -> None:
        """Hand every request sent so far to its engine's writer thread, and let the readers whose
        output was taken read on (see `Worker.flush`)."""
        held, self._held = self._held, {}
        for worker in held:
            worker.flush()

    def serve(self, deadline: float) -> None:
        """Flush; wait until output arrives, `wake()` is called, or `deadline` passes; hand what
        arrived (a bounded batch of it) to the workers it came from."""
        self.flush()
        try:
            event = self._events.get(timeout=min(_WAIT_MAX, max(0.0, deadline - time.monotonic())))
        except queue.Empty:
            return
        self._hand_over(event)

    def poll(self) -> None:
        """Hand what arrived already (a bounded batch of it) to its workers; wait for nothing."""
        try:
            event = self._events.get_nowait()
        except queue.Empty:
            return
        self._hand_over(event)

    def _hand_over(self, event: tuple[Worker | None, int, bytes]) -> None:
        for handled in range(1, _BATCH + 1):
            worker, stream, data = event
            if worker is not None:
                worker.feed(stream, data)
            if handled == _BATCH:
                return
            try:
                event = self._events.get_nowait()
            except queue.Empty:
                return
