"""Process control of one engine: spawn it with three pipes, each served by a thread of its own,
end it and every process it started, and say how it ended.

Threads, because they are the one way to wait on pipes that Linux, macOS and Windows share. Each
output pipe has a reader thread that reads what comes as it comes and hands it to `deliver(stream,
data)` (the worker puts it on the queue its owner waits on), and b"" once the pipe ended; the input
pipe has a writer thread that writes what `write()` queued, in order, so that a caller never blocks
on an engine that does not read. Each thread owns its pipe and closes it, so no file descriptor is
ever closed under a thread that uses it. A reader hands over at most CREDIT chunks that its owner
has not taken yet (`taken()`), so a flood of output costs no memory, and what the engine prints
meanwhile gathers in the pipe, to be read in one piece. Nothing here knows the
protocol (frames.py and worker.py beside it do). Every wait is bounded by a deadline its caller
passes down, so a stop has one time budget however many stages it takes. What differs by system
is gdres/platform.py.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from typing import IO, TYPE_CHECKING

from gdres import platform
from gdres.errors import EngineCrashed

if TYPE_CHECKING:
    # Imported where used: psutil costs ~25 ms to import, on the way to a `run`'s engine launch.
    import psutil

Spawn = Callable[..., "subprocess.Popen[bytes]"]
Deliver = Callable[[int, bytes], None]
"""Receives (stream, data) from the pipe threads: output as it comes, b"" once a stream ended
(for STDIN: once the engine's input was lost)."""

STDIN, STDOUT, STDERR = 0, 1, 2
"""The engine's streams, as `deliver` names them."""
READ_SIZE = 1 << 16
"""Bytes read from one pipe at once: what a pipe holds on Linux and macOS. A bigger read returns no
more, and its buffer costs ~40 us per read here (it is past malloc's threshold for mmap)."""
CREDIT = 1
"""Chunks a reader hands over before its owner has taken them (at most CREDIT * READ_SIZE bytes)."""
MIN_WAIT = 0.2
"""Shortest wait for a killed process to be reaped, even when the budget is spent."""


class EngineProcess:
    """A spawned engine and its pipes: stdin (requests, written in order), stdout and stderr (read
    as they come and handed to `deliver`). With `keep_stdout` off, stdout is read and dropped
    (only its end is delivered)."""

    def __init__(self, argv: Sequence[str], deliver: Deliver, spawn: Spawn = subprocess.Popen, *,
                 keep_stdout: bool = True) -> None:
        system = platform.current()
        try:
            self._proc = spawn(list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               bufsize=0, **system.popen_options())
        except OSError as exc:
            raise EngineCrashed(f"the engine could not be started ({argv[0]}): {exc}") from None
        proc = self._proc
        self._group = system.contain(proc)
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self.outputs = {STDOUT, STDERR}
        """The output streams whose end its owner has not seen yet."""
        self._credits = {STDOUT: threading.Semaphore(CREDIT), STDERR: threading.Semaphore(CREDIT)}
        self._pending: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._input_open = True
        self._info: psutil.Process | None = None
        name = f"engine-{proc.pid}"
        for stream, pipe, credit in ((STDOUT, proc.stdout, self._credits[STDOUT] if keep_stdout else None),
                                     (STDERR, proc.stderr, self._credits[STDERR])):
            threading.Thread(target=_read, args=(pipe, stream, deliver, credit), name=f"{name}-{stream}",
                             daemon=True).start()
        threading.Thread(target=_write, args=(proc.stdin, self._pending, deliver), name=f"{name}-in",
                         daemon=True).start()

    @property
    def pid(self) -> int:
        return self._proc.pid

    @property
    def input_open(self) -> bool:
        """Whether the engine's input takes more (it was not closed, nor found gone)."""
        return self._input_open

    def running(self) -> bool:
        return self._proc.poll() is None

    def returncode(self) -> int | None:
        return self._proc.poll()

    def write(self, data: bytes) -> bool:
        """Queue `data` for the engine's input; return False when the input is closed."""
        if not self._input_open:
            return False
        self._pending.put(data)
        return True

    def close_input(self) -> None:
        """End the engine's input once what is queued was written."""
        if self._input_open:
            self._input_open = False
            self._pending.put(None)

    def input_lost(self) -> None:
        """Note that the writer found the input gone (see Deliver)."""
        self._input_open = False

    def taken(self, stream: int) -> None:
        """Note that the owner took one chunk of `stream` (its reader may read another)."""
        self._credits[stream].release()

    def ended(self, stream: int) -> None:
        """Stop listening to an output stream (its end was seen, or it is no longer wanted)."""
        self.outputs.discard(stream)

    def terminate(self) -> None:
        with contextlib.suppress(OSError):
            self._proc.terminate()

    def wait(self, deadline: float) -> int | None:
        """Wait for the engine to exit until `deadline` (at least MIN_WAIT); return its exit status."""
        try:
            return self._proc.wait(max(MIN_WAIT, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            return None

    def kill_tree(self, deadline: float) -> None:
        """Kill the engine and every process it started; reap them until `deadline`."""
        import psutil

        proc = self._proc
        if proc.returncode is not None:
            return
        try:
            children = psutil.Process(proc.pid).children(recursive=True)
        except psutil.Error:
            children = []
        for victim in children:
            with contextlib.suppress(psutil.Error):
                victim.kill()
        with contextlib.suppress(OSError):
            proc.kill()
        # The group reaches the processes that left the engine's tree too.
        self._group.kill()
        # Only Popen may reap the engine itself, or its exit status would be lost.
        psutil.wait_procs(children, timeout=max(MIN_WAIT, deadline - time.monotonic()))
        self.wait(deadline)

    def release(self) -> None:
        """Let go of the engine's process group (it is dead, or being abandoned)."""
        self._group.close()

    def rss(self) -> int:
        """The engine's resident memory in bytes (0 once it is gone)."""
        import psutil

        try:
            if self._info is None:
                self._info = psutil.Process(self.pid)
            return int(self._info.memory_info().rss)
        except psutil.Error:
            return 0

    def status(self, deadline: float) -> str:
        """How the engine ended ("exit code 3", "killed by SIGKILL"), waiting until `deadline`."""
        code = self.returncode()
        if code is None:
            code = self.wait(deadline)
        if code is None:
            self.kill_tree(deadline)
            code = self.returncode()
        if code is not None and code < 0 and -code in signal.valid_signals():
            return f"killed by {signal.Signals(-code).name}"
        return f"exit code {code}"


def _read(pipe: IO[bytes], stream: int, deliver: Deliver, credit: threading.Semaphore | None) -> None:
    """Hand over what `pipe` gives until it ends (without `credit`: drop it), then b""; close it."""
    fd = pipe.fileno()
    try:
        while True:
            if credit is not None:
                credit.acquire()
            try:
                data = os.read(fd, READ_SIZE)
            except OSError:
                data = b""
            if not data:
                break
            if credit is not None:
                deliver(stream, data)
    finally:
        _close(pipe)
        deliver(stream, b"")


def _write(pipe: IO[bytes], pending: queue.SimpleQueue[bytes | None], deliver: Deliver) -> None:
    """Write what is queued, in order, until None comes or the engine's input is gone (then tell
    `deliver`); close the pipe. What queued up meanwhile goes in one write."""
    fd = pipe.fileno()
    try:
        closing = False
        while not closing:
            first = pending.get()
            if first is None:
                break
            chunks = [first]
            while True:
                try:
                    more = pending.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    closing = True
                    break
                chunks.append(more)
            view = memoryview(b"".join(chunks) if len(chunks) > 1 else first)
            while view:
                view = view[os.write(fd, view):]
    except (OSError, ValueError):
        deliver(STDIN, b"")
    finally:
        _close(pipe)


def _close(stream: IO[bytes] | None) -> None:
    if stream is not None:
        with contextlib.suppress(OSError, ValueError):
            stream.close()
