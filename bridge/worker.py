"""One engine process: spawn it, exchange framed messages, enforce deadlines, stop it in stages.

Framing. Requests go to the engine's stdin as `<byte length in 15 digits>\\n<JSON bytes>`; the engine reads the
payload with `OS.read_buffer_from_stdin(n)`, so no line buffer can split it. Replies come back on
the engine's *stderr* as `<token> <byte length> <JSON>\\n`: Godot always flushes stderr, while stdout
stays buffered when a project sets `flush_stdout_on_print` off. The token is random per process, so
nothing a project script or the engine prints can be taken for a reply; everything else read from
either stream is chatter, kept as a short tail for error messages and echoed only when verbose.

No threads, and no call that can hang. The engine's three pipes are non-blocking. `send()` writes
what the engine's input takes at once and queues the rest; whoever waits for a reply (`receive()`,
or a pool waiting on several workers at once with `wait_any()`) polls the pipes, writes what is
queued, reads what the engine printed, and kills the whole process tree when the deadline passes.
Output is read in bounded pieces, so a flood of chatter costs neither memory nor a stalled reply.
One thread uses a worker at a time.

A request may come with a `release` callback (the file locks its writes hold). It runs once: with
True when the request's reply is read, or with False once the engine is found gone without
answering, so the caller can clean up after a killed write before anyone else may touch those files.
"""

from __future__ import annotations

import collections
import json
import math
import os
import re
import select
import signal
import subprocess
import sys
import time
from typing import IO, Any, Callable, Iterable, Sequence

import psutil

from .errors import EngineCrashed, InvalidRequest, Timeout

Spawn = Callable[..., "subprocess.Popen[bytes]"]
Release = Callable[[bool], None]
"""Called once per request when the engine is done with it: True when its reply arrived, False
when the engine died (or was never reached) without answering."""

_TAIL_LINES = 30
_TAIL_CHARS = 400
_PIECE = 1 << 20
"""Longest piece of output kept while waiting for its line to end: a line without end costs no more memory."""
_READ = 1 << 18
"""Bytes read from one pipe at once."""
_HEAD = re.compile(rb" (\d{1,15}) ")
_HEAD_MAX = 18
_STOP_WAIT = 2.0
_POLL_MAX_MS = 3_600_000
START_TIMEOUT = 30.0
"""Seconds an engine may take to become ready."""
MAX_REQUESTS = 10_000
"""A worker is replaced after this many requests (memory the engine never gives back)."""
MAX_RSS = 512 << 20
"""A worker is replaced once its resident memory passes this many bytes (idle: ~130 MB; a 30 MB
request leaves it at ~380 MB, memory the engine keeps)."""
_DEBUG = os.environ.get("GODOT_BRIDGE_DEBUG") == "1"


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
    ) -> None:
        self.token = os.urandom(16).hex()
        self._marker = self.token.encode("ascii")
        self._argv = list(argv_for_token(self.token))
        self._start_timeout = start_timeout
        self._verbose = verbose
        self._spawn = spawn
        self._log = log if log is not None else sys.stderr
        self._max_requests = max_requests
        self._max_rss = max_rss
        self._replies: collections.deque[dict[str, Any]] = collections.deque()
        self._releases: collections.deque[Release | None] = collections.deque()
        self._unsent: collections.deque[memoryview] = collections.deque()
        self._input: IO[bytes] | None = None
        self._outputs: dict[int, IO[bytes]] = {}
        self._reply_fd = -1
        self._scan = b""
        self._body: list[bytes] = []
        self._need = 0
        self._tail: collections.deque[str] = collections.deque(maxlen=_TAIL_LINES)
        self._closing = False
        self._ended = False
        self._seq = 0
        self._dead: str | None = None
        self._process: psutil.Process | None = None
        self.ready = False
        self.start_deadline = 0.0
        self.served = 0
        self.version = ""
        self.proc: subprocess.Popen[bytes] | None = None

    # ----- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        """Spawn the engine and wait, within the start-up deadline, for its ready message."""
        self.launch()
        self.wait_ready()

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
            wait_any([self], deadline)

    def launch(self) -> None:
        """Spawn the engine without waiting; `ready` turns True once its ready message is read.

        Requests may be sent at once: the engine reads them when it is ready.
        """
        try:
            self.proc = self._spawn(
                self._argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            raise EngineCrashed(f"the engine could not be started ({self._argv[0]}): {exc}") from None
        assert self.proc.stdin is not None and self.proc.stdout is not None
        assert self.proc.stderr is not None
        self.start_deadline = time.monotonic() + self._start_timeout
        self._input = self.proc.stdin
        self._reply_fd = self.proc.stderr.fileno()
        self._outputs = {self.proc.stdout.fileno(): self.proc.stdout, self._reply_fd: self.proc.stderr}
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            os.set_blocking(stream.fileno(), False)

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
        return self.proc.pid if self.proc else None

    @property
    def alive(self) -> bool:
        """Return whether the engine can take another request."""
        return self.proc is not None and self._dead is None and not self._ended and self.proc.poll() is None

    @property
    def ended(self) -> bool:
        """Return whether the engine is gone and every reply it sent has been read."""
        return self._ended

    def rss(self) -> int:
        """Return the resident memory of the engine process, in bytes (0 once it is gone)."""
        if not self.alive or self.pid is None:
            return 0
        try:
            if self._process is None:
                self._process = psutil.Process(self.pid)
            return int(self._process.memory_info().rss)
        except psutil.Error:
            return 0

    def worn_out(self) -> bool:
        """Return whether the worker has served its quota of requests or grown past its memory limit."""
        if self._max_requests is not None and self.served >= self._max_requests:
            return True
        return self._max_rss is not None and self.rss() > self._max_rss

    def close(self) -> None:
        """Stop the engine: end of input, then terminate, then kill the whole tree."""
        proc = self.proc
        if proc is None:
            return
        self._dead = self._dead or "closed"
        if proc.poll() is None:
            # The engine serves what it was sent, then sees its input end and quits.
            self._closing = True
            self._flush()
            if not self._drain(time.monotonic() + _STOP_WAIT):
                try:
                    proc.terminate()
                except OSError:
                    pass
                self._drain(time.monotonic() + _STOP_WAIT)
        self.kill()

    def kill(self) -> None:
        """Kill the engine and every process it started, then read what it left in its pipes."""
        proc = self.proc
        if proc is None:
            return
        self._dead = self._dead or "killed"
        self._kill_tree()
        self._drain(time.monotonic() + _STOP_WAIT)
        for fd in list(self._outputs):
            # Held open by a process that escaped the kill: stop listening to it.
            self._end_output(fd)
        self._close_input()

    def _kill_tree(self) -> None:
        proc = self.proc
        if proc is None or proc.returncode is not None:
            return
        try:
            children = psutil.Process(proc.pid).children(recursive=True)
        except psutil.Error:
            children = []
        for victim in children:
            try:
                victim.kill()
            except psutil.Error:
                pass
        try:
            proc.kill()
            # The engine leads its own session: this reaches children that left the tree too.
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        # Only Popen may reap the engine itself, or its exit status would be lost.
        psutil.wait_procs(children, timeout=_STOP_WAIT)
        try:
            proc.wait(_STOP_WAIT)
        except subprocess.TimeoutExpired:
            pass

    def _drain(self, deadline: float) -> bool:
        """Read the engine's output until it ends or `deadline` passes; return whether it ended."""
        while self._outputs and time.monotonic() < deadline:
            wait_any([self], deadline)
        return not self._outputs

    # ----- messages --------------------------------------------------------------------------

    def send(self, message: dict[str, Any], *, release: Release | None = None) -> int:
        """Queue one request; return its sequence number. Replies come back in sending order.

        Never blocks: an engine that does not read shows up as a timeout in `receive()`.
        `release` runs when the engine is done with this request (see the module docstring).
        """
        try:
            if self._closing or self._input is None or not self.alive:
                raise self._crashed("before the request was sent")
            payload = self._encode(message, self._seq + 1)
        except (EngineCrashed, InvalidRequest):
            if release is not None:
                release(False)
            raise
        self._seq += 1
        self._releases.append(release)
        self._unsent.append(memoryview(b"%015d\n" % len(payload) + payload))
        self._flush()
        return self._seq

    def _encode(self, message: dict[str, Any], seq: int) -> bytes:
        try:
            payload = json.dumps({**message, "seq": seq}, ensure_ascii=False, allow_nan=False).encode("utf-8")
        except (ValueError, TypeError, RecursionError) as exc:
            raise InvalidRequest(f"the request cannot be sent as JSON: {exc}") from None
        if _DEBUG:
            self._log.write(f"[bridge -> {self.pid}] {payload[:2000].decode('utf-8', 'replace')}\n")
        return payload

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

    def call(self, message: dict[str, Any], timeout: float, *, release: Release | None = None) -> dict[str, Any]:
        """Send one request and return its reply within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        self.send(message, release=release)
        try:
            return self.receive(deadline)
        except Timeout:
            raise Timeout(
                f"the request ran past its deadline of {timeout:g} s; the engine (pid {self.pid}) "
                "was killed and the next request gets a fresh one"
            ) from None

    # ----- pipes -----------------------------------------------------------------------------

    def _flush(self) -> None:
        """Write as much of the queued input as the engine's pipe takes now."""
        while self._unsent and self._input is not None:
            data = self._unsent[0]
            try:
                written = os.write(self._input.fileno(), data)
            except BlockingIOError:
                return
            except (OSError, ValueError):
                self._input_lost()
                return
            if written == len(data):
                self._unsent.popleft()
            else:
                self._unsent[0] = data[written:]
        if self._closing:
            self._close_input()

    def _input_lost(self) -> None:
        self._unsent.clear()
        self._close_input()
        proc = self.proc
        try:
            if proc is not None:
                proc.wait(_STOP_WAIT / 4)
        except subprocess.TimeoutExpired:
            # Alive but its input is closed: it can never get another request.
            self._dead = self._dead or "it closed its input"
            self._kill_tree()

    def _close_input(self) -> None:
        stream, self._input = self._input, None
        if stream is not None:
            try:
                stream.close()
            except (OSError, ValueError):
                pass

    def _read(self, fd: int) -> None:
        try:
            data = os.read(fd, _READ)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._end_output(fd)
        elif fd == self._reply_fd:
            self._parse(data)
        elif self._verbose:
            self._chatter(data, keep=False)

    def _end_output(self, fd: int) -> None:
        stream = self._outputs.pop(fd, None)
        if stream is not None:
            try:
                stream.close()
            except (OSError, ValueError):
                pass
        if fd == self._reply_fd:
            self._reply_stream_ended()

    def _reply_stream_ended(self) -> None:
        """Make sure the engine is gone, then release the requests it never answered."""
        self._reply_fd = -1
        self._chatter(self._scan)
        self._scan = b""
        proc = self.proc
        if proc is not None and proc.poll() is None:
            try:
                proc.wait(_STOP_WAIT)
            except subprocess.TimeoutExpired:
                self._dead = self._dead or "it closed its output"
                self._kill_tree()
        self._ended = True
        pending, self._releases = self._releases, collections.deque()
        for release in pending:
            if release is not None:
                release(False)

    # ----- the reply stream ------------------------------------------------------------------

    def _parse(self, data: bytes) -> None:
        while data and self._reply_fd >= 0:
            if self._need:
                piece = data[: self._need]
                self._body.append(piece)
                self._need -= len(piece)
                data = data[len(piece) :]
                if not self._need:
                    body, self._body = b"".join(self._body), []
                    self._frame(body)
                continue
            scan, self._scan = self._scan + data, b""
            data = b""
            at = scan.find(self._marker)
            if at < 0:
                cut = scan.rfind(b"\n") + 1
                rest = scan[cut:]
                if len(rest) > _PIECE:
                    # A piece of a longer line: its end may hold the start of a token.
                    cut, rest = len(scan) - len(self._marker), scan[-len(self._marker) :]
                self._chatter(scan[:cut])
                self._scan = rest
                return
            self._chatter(scan[:at])
            head = scan[at + len(self._marker) :]
            match = _HEAD.match(head)
            if match is None:
                if len(head) < _HEAD_MAX and re.fullmatch(rb" ?\d*", head):
                    self._scan = scan[at:]
                    return
                self._garbled()
                return
            self._need = int(match[1])
            data = head[match.end() :]
            if not self._need:
                self._frame(b"")

    def _frame(self, body: bytes) -> None:
        try:
            # strict=False: the engine's JSON writer leaves control characters other than
            # \b \f \n \r \t unescaped, and a request may well quote one back.
            reply = json.loads(body, strict=False)
        except ValueError:
            reply = None
        if not isinstance(reply, dict):
            self._garbled()
            return
        if _DEBUG:
            self._log.write(f"[bridge <- {self.pid}] {body[:2000].decode('utf-8', 'replace')}\n")
        if not self.ready:
            self.ready = True
            self.version = str(reply.get("version", ""))
            return
        release = self._releases.popleft() if self._releases else None
        if release is not None:
            release(True)
        self._replies.append(reply)

    def _garbled(self) -> None:
        """A reply that cannot be read: nothing after it can be trusted, so the engine goes."""
        self._dead = self._dead or "it sent a garbled reply"
        self._kill_tree()
        self._end_output(self._reply_fd)

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
        code = self.proc.poll() if self.proc else None
        if code is None and self.proc is not None:
            try:
                code = self.proc.wait(_STOP_WAIT)
            except subprocess.TimeoutExpired:
                self.kill()
                code = self.proc.poll()
        status = f"exit code {code}"
        if code is not None and code < 0:
            status = f"killed by {signal.Signals(-code).name}" if -code in signal.valid_signals() else status
        why = f"; {self._dead}" if self._dead and self._dead not in ("killed", "closed") else ""
        return EngineCrashed(
            f"the engine (pid {self.pid}) stopped {when}, {status}{why}{self._tail_text()}"
        )

    def _tail_text(self) -> str:
        return "; its last output: " + " | ".join(self._tail) if self._tail else ""


def wait_any(workers: Iterable[Worker], deadline: float, wake: int | None = None) -> bool:
    """Wait until a worker's pipe is ready, `wake` is readable, or `deadline` passes; serve the pipes.

    Writes queued input the engines now take and reads what they printed (replies then wait in
    `take()`). Return whether `wake` became readable (the caller drains it).
    """
    poller = select.poll()
    owners: dict[int, Worker] = {}
    for worker in workers:
        for fd in worker._outputs:
            poller.register(fd, select.POLLIN)
            owners[fd] = worker
        if worker._unsent and worker._input is not None:
            fd = worker._input.fileno()
            poller.register(fd, select.POLLOUT)
            owners[fd] = worker
    if wake is not None:
        poller.register(wake, select.POLLIN)
    if not owners and wake is None:
        return False
    # poll() takes a 32-bit count of milliseconds: a deadline days away is waited for in pieces.
    timeout = min(_POLL_MAX_MS, max(0, math.ceil((deadline - time.monotonic()) * 1000)))
    woken = False
    for fd, _ in poller.poll(timeout):
        if fd == wake:
            woken = True
            continue
        worker = owners[fd]
        if fd in worker._outputs:
            worker._read(fd)
        else:
            worker._flush()
    return woken
