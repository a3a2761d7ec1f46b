"""One engine process: spawn it, exchange framed messages, enforce deadlines, stop it in stages.

Framing. Requests go to the engine's stdin as `<byte length in 15 digits>\\n<JSON bytes>`; the engine reads the
payload with `OS.read_buffer_from_stdin(n)`, so no line buffer can split it. Replies come back on
the engine's *stderr* as `<token> <byte length> <JSON>\\n`: Godot always flushes stderr, while stdout
stays buffered when a project sets `flush_stdout_on_print` off. The token is random per process, so
nothing a project script or the engine prints can be taken for a reply; everything else read from
either stream is chatter, kept as a tail for error messages and echoed only when verbose.
"""

from __future__ import annotations

import collections
import json
import os
import queue
import secrets
import subprocess
import sys
import threading
import time
from typing import IO, Any, Callable, Sequence

import psutil

from .errors import EngineCrashed, Timeout

Spawn = Callable[..., "subprocess.Popen[bytes]"]

_TAIL_LINES = 30
_STOP_WAIT = 2.0
_DEBUG = os.environ.get("GODOT_BRIDGE_DEBUG") == "1"


class _Closed:
    """Marks the end of the reply stream."""


class Worker:
    """A warm engine process that answers one framed request at a time, in order."""

    def __init__(
        self,
        argv_for_token: Callable[[str], Sequence[str]],
        *,
        start_timeout: float = 30.0,
        verbose: bool = False,
        spawn: Spawn = subprocess.Popen,
        log: IO[str] | None = None,
    ) -> None:
        self.token = secrets.token_hex(16)
        self._argv = list(argv_for_token(self.token))
        self._start_timeout = start_timeout
        self._verbose = verbose
        self._spawn = spawn
        self._log = log if log is not None else sys.stderr
        self._replies: queue.Queue[dict[str, Any] | _Closed] = queue.Queue()
        self._tail: collections.deque[str] = collections.deque(maxlen=_TAIL_LINES)
        self._seq = 0
        self._pending = 0
        self._dead: str | None = None
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
        assert self.proc.stdout is not None and self.proc.stderr is not None
        for target, stream in ((self._read_replies, self.proc.stderr), (self._drain, self.proc.stdout)):
            threading.Thread(target=target, args=(stream,), daemon=True).start()
        self._pending = 1
        try:
            ready = self.receive(time.monotonic() + self._start_timeout, starting=True)
        except Timeout:
            self.kill()
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
        """Return the resident memory of the engine process tree, in bytes."""
        if not self.alive or self.pid is None:
            return 0
        try:
            root = psutil.Process(self.pid)
            return sum(p.memory_info().rss for p in [root, *root.children(recursive=True)])
        except psutil.Error:
            return 0

    def close(self) -> None:
        """Stop the engine: end of input, then terminate, then kill the whole tree."""
        proc = self.proc
        if proc is None or proc.poll() is not None:
            self._reap()
            return
        try:
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(_STOP_WAIT)
        except (OSError, subprocess.TimeoutExpired):
            try:
                proc.terminate()
                proc.wait(_STOP_WAIT)
            except (OSError, subprocess.TimeoutExpired):
                self.kill()
        self._reap()

    def kill(self) -> None:
        """Kill the engine and every process it started, at once."""
        if self.proc is None:
            return
        try:
            root = psutil.Process(self.proc.pid)
            victims = [*root.children(recursive=True), root]
        except psutil.Error:
            victims = []
        for victim in victims:
            try:
                victim.kill()
            except psutil.Error:
                pass
        psutil.wait_procs(victims, timeout=_STOP_WAIT)
        self._dead = self._dead or "killed"
        self._reap()

    def _reap(self) -> None:
        if self.proc is None:
            return
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        try:
            self.proc.wait(_STOP_WAIT)
        except subprocess.TimeoutExpired:
            pass

    # ----- messages --------------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> int:
        """Write one request; return its sequence number. Replies come back in sending order."""
        if not self.alive:
            raise self._crashed("before the request was sent")
        assert self.proc is not None and self.proc.stdin is not None
        self._seq += 1
        payload = json.dumps({**message, "seq": self._seq}, ensure_ascii=False, allow_nan=False)
        data = payload.encode("utf-8")
        if _DEBUG:
            self._log.write(f"[bridge -> {self.pid}] {payload[:2000]}\n")
        try:
            self.proc.stdin.write(b"%015d\n" % len(data))
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (OSError, ValueError):
            self._dead = self._dead or "its input closed"
            raise self._crashed("while the request was being sent") from None
        self._pending += 1
        return self._seq

    def receive(self, deadline: float, *, starting: bool = False) -> dict[str, Any]:
        """Return the next reply, or raise Timeout (engine killed) or EngineCrashed."""
        remaining = deadline - time.monotonic()
        try:
            item = self._replies.get(timeout=max(remaining, 0.0))
        except queue.Empty:
            self.kill()
            self._dead = "timed out"
            raise Timeout("the request ran past its deadline; the engine was stopped") from None
        if isinstance(item, _Closed):
            self._replies.put(item)
            raise self._crashed("while serving the request" if not starting else "during start-up")
        self._pending -= 1
        if not starting:
            self.served += 1
        return item

    def call(self, message: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Send one request and return its reply within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        self.send(message)
        return self.receive(deadline)

    # ----- streams ---------------------------------------------------------------------------

    def _read_replies(self, stream: IO[bytes]) -> None:
        marker = self.token.encode("ascii")
        try:
            for line in iter(stream.readline, b""):
                at = line.find(marker)
                if at < 0:
                    self._chatter(line)
                    continue
                if at > 0:
                    self._chatter(line[:at])
                reply = self._frame(line[at + len(marker) + 1 :], stream)
                if reply is None:
                    self._dead = "it sent a garbled reply"
                    break
                self._replies.put(reply)
        except (OSError, ValueError):
            pass
        finally:
            if self._dead is None and self.proc is not None:
                try:
                    self.proc.wait(_STOP_WAIT)
                except subprocess.TimeoutExpired:
                    pass
            self._replies.put(_Closed())

    def _frame(self, rest: bytes, stream: IO[bytes]) -> dict[str, Any] | None:
        size_text, _, body = rest.partition(b" ")
        try:
            size = int(size_text)
        except ValueError:
            return None
        while len(body) < size:
            more = stream.readline()
            if not more:
                return None
            body += more
        if body[size:].strip():
            self._chatter(body[size:])
        try:
            reply = json.loads(body[:size])
        except ValueError:
            return None
        if _DEBUG:
            self._log.write(f"[bridge <- {self.pid}] {body[:2000].decode('utf-8', 'replace')}\n")
        return reply if isinstance(reply, dict) else None

    def _drain(self, stream: IO[bytes]) -> None:
        try:
            for line in iter(stream.readline, b""):
                self._chatter(line, keep=False)
        except (OSError, ValueError):
            pass

    def _chatter(self, raw: bytes, *, keep: bool = True) -> None:
        text = raw.decode("utf-8", "replace").rstrip()
        if not text:
            return
        if keep:
            self._tail.append(text)
        if self._verbose:
            self._log.write(f"[godot {self.pid}] {text}\n")
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
        why = f"; {self._dead}" if self._dead and self._dead != "killed" else ""
        return EngineCrashed(
            f"the engine (pid {self.pid}) stopped {when}, exit code {code}{why}{self._tail_text()}"
        )

    def _tail_text(self) -> str:
        return "; its last output: " + " | ".join(self._tail) if self._tail else ""
