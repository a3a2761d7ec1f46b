"""One engine process: spawn it, exchange framed messages, enforce deadlines, stop it in stages.

Framing. Requests go to the engine's stdin as `<byte length in 15 digits>\\n<JSON bytes>`; the engine reads the
payload with `OS.read_buffer_from_stdin(n)`, so no line buffer can split it. Replies come back on
the engine's *stderr* as `<token> <byte length> <JSON>\\n`: Godot always flushes stderr, while stdout
stays buffered when a project sets `flush_stdout_on_print` off. The token is random per process, so
nothing a project script or the engine prints can be taken for a reply; everything else read from
either stream is chatter, kept as a short tail for error messages and echoed only when verbose.

No call can hang. `send()` writes to the engine's stdin only what the pipe takes at once and leaves
the rest to a writer thread, so it returns at once even when the engine stops reading; `receive()` waits on a deadline and kills the whole process tree when it passes. Output is
read in bounded pieces, so a flood of chatter costs neither memory nor a stalled reply.

A request may come with a `release` callback (the file locks its writes hold). It runs once: with
True when the request's reply arrives, or with False once the engine is gone without answering, so
the caller can clean up after a killed write before anyone else may touch those files.
"""

from __future__ import annotations

import collections
import json
import os
import queue
import re
import secrets
import select
import signal
import subprocess
import sys
import threading
import time
from typing import IO, Any, Callable, Sequence

import psutil

from .errors import EngineCrashed, InvalidRequest, Timeout

Spawn = Callable[..., "subprocess.Popen[bytes]"]
Release = Callable[[bool], None]
"""Called once per request when the engine is done with it: True when its reply arrived, False
when the engine died (or was never reached) without answering."""

_TAIL_LINES = 30
_TAIL_CHARS = 400
_PIECE = 1 << 20
"""Longest piece of one output line read at once: a line without end costs no more memory."""
_HEAD = re.compile(rb" (\d{1,15}) ")
_STOP_WAIT = 2.0
_DEBUG = os.environ.get("GODOT_BRIDGE_DEBUG") == "1"


class _Closed:
    """Marks the end of the reply stream."""


class Worker:
    """A warm engine process that answers framed requests one at a time, in sending order.

    `max_requests` and `max_rss` (bytes) say when the worker is worn out (see `worn_out`); the
    owner then replaces it between two requests, which no caller notices.
    """

    def __init__(
        self,
        argv_for_token: Callable[[str], Sequence[str]],
        *,
        start_timeout: float = 30.0,
        verbose: bool = False,
        spawn: Spawn = subprocess.Popen,
        log: IO[str] | None = None,
        max_requests: int | None = None,
        max_rss: int | None = None,
    ) -> None:
        self.token = secrets.token_hex(16)
        self._argv = list(argv_for_token(self.token))
        self._start_timeout = start_timeout
        self._verbose = verbose
        self._spawn = spawn
        self._log = log if log is not None else sys.stderr
        self._max_requests = max_requests
        self._max_rss = max_rss
        self._replies: queue.SimpleQueue[dict[str, Any] | _Closed] = queue.SimpleQueue()
        self._outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._writer_busy = False
        self._input: int | None = None
        self._releases: collections.deque[Release | None] = collections.deque()
        self._sending = threading.Lock()
        self._tail: collections.deque[str] = collections.deque(maxlen=_TAIL_LINES)
        self._threads: list[threading.Thread] = []
        self._ready = False
        self._ended = False
        self._seq = 0
        self._dead: str | None = None
        self._process: psutil.Process | None = None
        self.served = 0
        self.version = ""
        self.proc: subprocess.Popen[bytes] | None = None

    # ----- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        """Spawn the engine and wait, within the start-up deadline, for its ready message."""
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
        self._input = self.proc.stdin.fileno()
        os.set_blocking(self._input, False)
        for target, stream in (
            (self._read_replies, self.proc.stderr),
            (self._drain, self.proc.stdout),
            (self._write, self.proc.stdin),
        ):
            thread = threading.Thread(target=target, args=(stream,), daemon=True)
            thread.start()
            self._threads.append(thread)
        try:
            ready = self.receive(time.monotonic() + self._start_timeout, starting=True)
        except Timeout:
            raise EngineCrashed(
                f"the engine (pid {self.pid}) did not become ready within {self._start_timeout:g} s"
                f"{self._tail_text()}"
            ) from None
        self.version = str(ready.get("version", ""))

    @property
    def pid(self) -> int | None:
        """Return the engine's process id."""
        return self.proc.pid if self.proc else None

    @property
    def alive(self) -> bool:
        """Return whether the engine can take another request."""
        return self.proc is not None and self._dead is None and self.proc.poll() is None

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
            self._outbox.put(None)
            try:
                proc.wait(_STOP_WAIT)
            except subprocess.TimeoutExpired:
                try:
                    proc.terminate()
                    proc.wait(_STOP_WAIT)
                except (OSError, subprocess.TimeoutExpired):
                    pass
        self.kill()

    def kill(self) -> None:
        """Kill the engine and every process it started, then wait for its streams to end."""
        proc = self.proc
        if proc is None:
            return
        self._dead = self._dead or "killed"
        if proc.returncode is None:
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
        self._outbox.put(None)
        # The reply reader runs the pending releases before it ends; wait for it, bounded, so
        # whoever sees this worker dead also sees its files cleaned up.
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(_STOP_WAIT)

    # ----- messages --------------------------------------------------------------------------

    def send(self, message: dict[str, Any], *, release: Release | None = None) -> int:
        """Queue one request; return its sequence number. Replies come back in sending order.

        Never blocks: an engine that does not read shows up as a timeout in `receive()`.
        `release` runs when the engine is done with this request (see the module docstring).
        """
        queued = False
        try:
            with self._sending:
                if not self._ended and self.alive:
                    seq = self._seq + 1
                    payload = self._encode(message, seq)
                    self._seq = seq
                    self._releases.append(release)
                    queued = True
                    self._put(b"%015d\n" % len(payload) + payload)
        finally:
            if not queued and release is not None:
                release(False)
        if not queued:
            raise self._crashed("before the request was sent")
        return seq

    def _put(self, data: bytes) -> None:
        """Write `data` to the engine if the pipe takes all of it now, else queue the rest (lock held)."""
        if not self._writer_busy and self._input is not None:
            # Written here, a request costs no hand-off to the writer thread.
            try:
                written = os.write(self._input, data)
            except OSError:
                # A full pipe, or an engine gone: the writer thread waits, or finds out why.
                written = 0
            if written == len(data):
                return
            data = data[written:]
            self._writer_busy = True
        self._outbox.put(data)

    def _encode(self, message: dict[str, Any], seq: int) -> bytes:
        try:
            payload = json.dumps({**message, "seq": seq}, ensure_ascii=False, allow_nan=False).encode("utf-8")
        except (ValueError, TypeError, RecursionError) as exc:
            raise InvalidRequest(f"the request cannot be sent as JSON: {exc}") from None
        if _DEBUG:
            self._log.write(f"[bridge -> {self.pid}] {payload[:2000].decode('utf-8', 'replace')}\n")
        return payload

    def receive(self, deadline: float, *, starting: bool = False) -> dict[str, Any]:
        """Return the next reply, or raise Timeout (engine killed) or EngineCrashed."""
        remaining = deadline - time.monotonic()
        try:
            item = self._replies.get(timeout=max(remaining, 0.0))
        except queue.Empty:
            self._dead = self._dead or "timed out"
            self.kill()
            raise Timeout(
                f"the engine (pid {self.pid}) did not answer in time; it was killed and will be replaced"
            ) from None
        if isinstance(item, _Closed):
            self._replies.put(item)
            raise self._crashed("during start-up" if starting else "while serving the request")
        if not starting:
            self.served += 1
        return item

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

    # ----- streams ---------------------------------------------------------------------------

    def _write(self, stdin: IO[bytes]) -> None:
        fd = stdin.fileno()
        try:
            while (data := self._outbox.get()) is not None:
                while data:
                    select.select([], [fd], [])
                    try:
                        data = data[os.write(fd, data) :]
                    except BlockingIOError:
                        pass
                with self._sending:
                    self._writer_busy = not self._outbox.empty()
        except (OSError, ValueError):
            proc = self.proc
            try:
                if proc is not None:
                    proc.wait(_STOP_WAIT / 4)
            except subprocess.TimeoutExpired:
                # Alive but its input is closed: it can never get another request.
                self._dead = self._dead or "it closed its input"
                self.kill()
        finally:
            # Under the send lock: `send()` must never write to the number of a closed descriptor.
            with self._sending:
                self._input = None
                try:
                    stdin.close()
                except (OSError, ValueError):
                    pass

    def _read_replies(self, stream: IO[bytes]) -> None:
        marker = self.token.encode("ascii")
        carry = b""
        try:
            while piece := stream.readline(_PIECE):
                line, carry = carry + piece, b""
                at = line.find(marker)
                if at < 0:
                    if not line.endswith(b"\n"):
                        # A piece of a longer line: its end may hold the start of a token.
                        line, carry = line[: -len(marker)], line[-len(marker) :]
                    self._chatter(line)
                    continue
                self._chatter(line[:at])
                reply = self._frame(line[at + len(marker) :], stream)
                if reply is None:
                    self._dead = self._dead or "it sent a garbled reply"
                    break
                self._deliver(reply)
        except (OSError, ValueError):
            pass
        finally:
            self._chatter(carry)
            self._finish(stream)

    def _frame(self, head: bytes, stream: IO[bytes]) -> dict[str, Any] | None:
        if b"\n" not in head and len(head) < 32:
            head += stream.readline(32)
        match = _HEAD.match(head)
        if match is None:
            return None
        size = int(match[1])
        body = head[match.end() :]
        if len(body) < size:
            body += stream.read(size - len(body))
            if len(body) < size:
                return None
            after = stream.readline(_PIECE)
        else:
            after = body[size:]
        if after.strip():
            self._chatter(after)
        try:
            # strict=False: the engine's JSON writer leaves control characters other than
            # \b \f \n \r \t unescaped, and a request may well quote one back.
            reply = json.loads(body[:size], strict=False)
        except ValueError:
            return None
        if _DEBUG:
            self._log.write(f"[bridge <- {self.pid}] {body[:2000].decode('utf-8', 'replace')}\n")
        return reply if isinstance(reply, dict) else None

    def _deliver(self, reply: dict[str, Any]) -> None:
        if self._ready:
            release = self._releases.popleft() if self._releases else None
            if release is not None:
                release(True)
        self._ready = True
        self._replies.put(reply)

    def _finish(self, stream: IO[bytes]) -> None:
        """The reply stream ended: make sure the engine is gone, release its requests, tell receivers."""
        try:
            proc = self.proc
            if proc is not None:
                try:
                    proc.wait(_STOP_WAIT)
                except subprocess.TimeoutExpired:
                    self._dead = self._dead or "it closed its output"
                    self.kill()
            with self._sending:
                self._ended = True
                pending, self._releases = self._releases, collections.deque()
            for release in pending:
                if release is not None:
                    release(False)
        finally:
            try:
                stream.close()
            except (OSError, ValueError):
                pass
            self._replies.put(_Closed())

    def _drain(self, stream: IO[bytes]) -> None:
        try:
            while piece := stream.readline(_PIECE):
                if self._verbose:
                    self._chatter(piece, keep=False)
        except (OSError, ValueError):
            pass
        finally:
            try:
                stream.close()
            except (OSError, ValueError):
                pass

    def _chatter(self, raw: bytes, *, keep: bool = True) -> None:
        if not raw.strip():
            return
        if keep:
            self._tail.append(raw[: _TAIL_CHARS * 4].decode("utf-8", "replace").rstrip()[:_TAIL_CHARS])
        if self._verbose:
            self._log.write(f"[godot {self.pid}] {raw.decode('utf-8', 'replace').rstrip()}\n")
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
