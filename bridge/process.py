"""Process control of one engine: spawn it with three non-blocking pipes, read and write them
without ever blocking, end it and every process it started, and say how it ended.

Nothing here knows the protocol (bridge/frames.py and bridge/worker.py do). Every wait is bounded
by a deadline its caller passes down, so a stop has one time budget however many stages it takes.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from typing import IO

import psutil

from .errors import EngineCrashed

Spawn = Callable[..., "subprocess.Popen[bytes]"]

READ_SIZE = 1 << 18
"""Bytes read from one pipe at once."""
MIN_WAIT = 0.2
"""Shortest wait for a killed process to be reaped, even when the budget is spent."""


class EngineProcess:
    """A spawned engine and its pipes: stdin (requests), stdout and stderr (read as they come)."""

    def __init__(self, argv: Sequence[str], spawn: Spawn = subprocess.Popen) -> None:
        try:
            self._proc = spawn(
                list(argv),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            raise EngineCrashed(f"the engine could not be started ({argv[0]}): {exc}") from None
        proc = self._proc
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self._input: IO[bytes] | None = proc.stdin
        self.outputs: dict[int, IO[bytes]] = {proc.stdout.fileno(): proc.stdout, proc.stderr.fileno(): proc.stderr}
        """The output pipes still open, by file descriptor."""
        self.stderr_fd = proc.stderr.fileno()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            os.set_blocking(stream.fileno(), False)
        self._info: psutil.Process | None = None

    @property
    def pid(self) -> int:
        return self._proc.pid

    @property
    def input_fd(self) -> int | None:
        """The engine's stdin, while it is open."""
        return self._input.fileno() if self._input is not None else None

    def running(self) -> bool:
        return self._proc.poll() is None

    def returncode(self) -> int | None:
        return self._proc.poll()

    def write(self, data: memoryview) -> int | None:
        """Write what the engine's input takes now; return the bytes written (0: full), or None
        when the input is gone."""
        if self._input is None:
            return None
        try:
            return os.write(self._input.fileno(), data)
        except BlockingIOError:
            return 0
        except (OSError, ValueError):
            return None

    def read(self, fd: int) -> bytes | None:
        """Read what an output pipe has; None when it has nothing now, b"" once it ended."""
        try:
            return os.read(fd, READ_SIZE)
        except BlockingIOError:
            return None
        except OSError:
            return b""

    def close_output(self, fd: int) -> None:
        _close(self.outputs.pop(fd, None))

    def close_input(self) -> None:
        stream, self._input = self._input, None
        _close(stream)

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
        try:
            proc.kill()
            # The engine leads its own session: this reaches children that left the tree too.
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        # Only Popen may reap the engine itself, or its exit status would be lost.
        psutil.wait_procs(children, timeout=max(MIN_WAIT, deadline - time.monotonic()))
        self.wait(deadline)

    def rss(self) -> int:
        """The engine's resident memory in bytes (0 once it is gone)."""
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


def _close(stream: IO[bytes] | None) -> None:
    if stream is not None:
        with contextlib.suppress(OSError, ValueError):
            stream.close()
