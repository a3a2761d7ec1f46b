"""What differs by operating system, in one place: how an engine is started away from the terminal's
Ctrl-C, and what holds it and every process it starts together, so that all of them can be killed
at once and none outlives the bridge.

POSIX (Linux, macOS): the engine leads a session of its own, so a Ctrl-C in the terminal reaches the
bridge and not the engines (the bridge then stops them in order), and one `killpg` reaches every
process the engine started, those that left its tree included. A bridge that is gone, however it
ended, breaks the pipe of the engine's heartbeat, and SIGPIPE ends the engine (gdscript/main.gd).

Windows: the engine starts in a process group of its own (a console's Ctrl-C is not sent to it)
and inside a Job Object that kills every process in it when its last handle closes. The bridge
holds that handle, and the system closes it when the bridge ends, however it ended: Windows has no
SIGPIPE, and a failed heartbeat write does not end the engine there.

Everything else (reader and writer threads on the pipes, finding a tree's processes with psutil)
is the same code on every system. `current()` says which of the two runs here; tests replace it
to force either.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any, Protocol, cast

_CREATE_NEW_PROCESS_GROUP = 0x0000_0200
_JOB_OBJECT_EXTENDED_LIMIT_INFORMATION = 9
_JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x0000_2000
_PROCESS_SET_QUOTA = 0x0100
_PROCESS_TERMINATE = 0x0001


class Group(Protocol):
    """The engine and every process it starts, held together."""

    def kill(self) -> None:
        """Kill every process of the group that is still running (best effort, never raises)."""

    def close(self) -> None:
        """Let go of the group once the engine is reaped (processes left in it may be killed)."""


class System(Protocol):
    """How this operating system starts an engine and holds its processes together."""

    name: str

    def popen_options(self) -> dict[str, Any]:
        """Return the extra `subprocess.Popen` arguments that start an engine in a group of its own."""

    def contain(self, process: subprocess.Popen[bytes]) -> Group:
        """Return the group of a just started engine."""

    def interrupt(self, process: subprocess.Popen[bytes]) -> None:
        """Ask a child bridge process (a part of a batch, serving/fleet.py) to stop as Ctrl-C stops it:
        what its engines are serving finishes, nothing more is sent."""


class Posix:
    """Linux and macOS: a session per engine; SIGPIPE ends an engine whose bridge is gone."""

    name = "posix"

    def popen_options(self) -> dict[str, Any]:
        return {"start_new_session": True}

    def contain(self, process: subprocess.Popen[bytes]) -> Group:
        return _Session(process.pid)

    def interrupt(self, process: subprocess.Popen[bytes]) -> None:
        with contextlib.suppress(OSError):
            process.send_signal(signal.SIGINT)


class _Session:
    """The session an engine leads: its id is the engine's pid."""

    def __init__(self, leader: int) -> None:
        self._leader = leader

    def kill(self) -> None:
        if sys.platform != "win32":
            with contextlib.suppress(OSError):
                os.killpg(self._leader, signal.SIGKILL)

    def close(self) -> None:
        pass


class Kernel32(Protocol):
    """The five calls of Windows' kernel32 that a Job Object takes (a stand-in replaces them in tests)."""

    def CreateJobObjectW(self, attributes: None, name: None) -> int | None: ...
    def SetInformationJobObject(self, job: int, kind: int, info: Any, size: int) -> int: ...
    def OpenProcess(self, access: int, inherit: bool, pid: int) -> int | None: ...
    def AssignProcessToJobObject(self, job: int, process: int) -> int: ...
    def TerminateJobObject(self, job: int, exit_code: int) -> int: ...
    def CloseHandle(self, handle: int) -> int: ...


class Windows:
    """Windows: a process group and a Job Object per engine; the Job ends the engine with the bridge."""

    name = "windows"

    def __init__(self, kernel32: Kernel32 | None = None) -> None:
        self._kernel32 = kernel32

    def popen_options(self) -> dict[str, Any]:
        return {"creationflags": _CREATE_NEW_PROCESS_GROUP}

    def contain(self, process: subprocess.Popen[bytes]) -> Group:
        if self._kernel32 is None:
            self._kernel32 = _load_kernel32()
        return _Job(self._kernel32, process.pid)

    def interrupt(self, process: subprocess.Popen[bytes]) -> None:
        # A console's Ctrl-C cannot be sent to one process of the console's group. The part's input
        # closes next (Fleet.close): it serves the lines it has read, and ends.
        pass


class _BasicLimits(ctypes.Structure):
    _fields_ = (
        ("PerProcessUserTimeLimit", ctypes.c_int64),
        ("PerJobUserTimeLimit", ctypes.c_int64),
        ("LimitFlags", ctypes.c_uint32),
        ("MinimumWorkingSetSize", ctypes.c_size_t),
        ("MaximumWorkingSetSize", ctypes.c_size_t),
        ("ActiveProcessLimit", ctypes.c_uint32),
        ("Affinity", ctypes.c_size_t),
        ("PriorityClass", ctypes.c_uint32),
        ("SchedulingClass", ctypes.c_uint32),
    )


class _IoCounters(ctypes.Structure):
    _fields_ = tuple((name, ctypes.c_uint64) for name in (
        "ReadOperationCount", "WriteOperationCount", "OtherOperationCount",
        "ReadTransferCount", "WriteTransferCount", "OtherTransferCount"))


class ExtendedLimits(ctypes.Structure):
    """JOBOBJECT_EXTENDED_LIMIT_INFORMATION."""

    _fields_ = (
        ("BasicLimitInformation", _BasicLimits),
        ("IoInfo", _IoCounters),
        ("ProcessMemoryLimit", ctypes.c_size_t),
        ("JobMemoryLimit", ctypes.c_size_t),
        ("PeakProcessMemoryUsed", ctypes.c_size_t),
        ("PeakJobMemoryUsed", ctypes.c_size_t),
    )


class _Job:
    """A Job Object that kills its processes when its last handle closes, with the engine in it.

    When the job cannot be made (an old Windows that nests no jobs), the engine runs without one:
    it then ends with its bridge only once it next reads its input, which is closed.
    """

    def __init__(self, kernel32: Kernel32, pid: int) -> None:
        self._kernel32 = kernel32
        self._handle: int | None = kernel32.CreateJobObjectW(None, None)
        if not self._handle:
            return
        limits = ExtendedLimits()
        limits.BasicLimitInformation.LimitFlags = _JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
        joined = bool(kernel32.SetInformationJobObject(self._handle, _JOB_OBJECT_EXTENDED_LIMIT_INFORMATION,
                                                       ctypes.byref(limits), ctypes.sizeof(limits)))
        process = kernel32.OpenProcess(_PROCESS_SET_QUOTA | _PROCESS_TERMINATE, False, pid)
        if process is not None:
            joined = joined and bool(kernel32.AssignProcessToJobObject(self._handle, process))
            kernel32.CloseHandle(process)
        if process is None or not joined:
            self.close()

    def kill(self) -> None:
        if self._handle:
            self._kernel32.TerminateJobObject(self._handle, 1)

    def close(self) -> None:
        handle, self._handle = self._handle, None
        if handle:
            self._kernel32.CloseHandle(handle)


def _load_kernel32() -> Kernel32:
    """Return kernel32 with the argument and result types of the calls a Job Object takes."""
    if sys.platform != "win32":
        raise OSError("Job Objects exist only on Windows")
    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
    handle, dword, boolean = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int
    signatures: dict[str, tuple[Any, list[Any]]] = {
        "CreateJobObjectW": (handle, [ctypes.c_void_p, ctypes.c_wchar_p]),
        "SetInformationJobObject": (boolean, [handle, ctypes.c_int, ctypes.c_void_p, dword]),
        "OpenProcess": (handle, [dword, boolean, dword]),
        "AssignProcessToJobObject": (boolean, [handle, handle]),
        "TerminateJobObject": (boolean, [handle, ctypes.c_uint]),
        "CloseHandle": (boolean, [handle]),
    }
    for name, (result, arguments) in signatures.items():
        function = getattr(kernel32, name)
        function.restype, function.argtypes = result, arguments
    return cast("Kernel32", kernel32)


_SYSTEM: System = Windows() if sys.platform == "win32" else Posix()


def own_python(code: str) -> list[str]:
    """The command line of this Python running `code` with this installation of the bridge first on
    its import path. Not `python -m`: that puts the current folder first, and a `gdres` folder there
    (a checkout, or anything a project ships: a project's folder may be the current one, or hold the
    cache folder a warm host runs in) would be imported instead: another version, or the project's code."""
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    # In the place of the current folder, which `-c` puts first; first where it puts none
    # (PYTHONSAFEPATH, or -P): the user's own first entry stays.
    first = f"sys.path[0:0 if sys.flags.safe_path else 1] = [{package_parent!r}]"
    return [sys.executable, "-c", f"import sys; {first}; {code}"]


def current() -> System:
    """Return the operating system's way of starting and holding engines."""
    return _SYSTEM


def detach() -> None:
    """Go on in a child process and end this one at once (exit status 0): the child, adopted by the
    system, outlives whoever started this process without being left for it to reap (a warm host,
    front/warm_host.py). POSIX only, and before any thread is started."""
    if os.fork() != 0:
        os._exit(0)


def wait_for_input(file: Any) -> None:
    """Wait until a file left non-blocking has something to read (or its end)."""
    if sys.platform == "win32":
        time.sleep(0.05)  # select() takes sockets only, and a pipe is seldom non-blocking there
        return
    import select

    select.select([file], [], [])


def on_sigterm(handler: Callable[[int, Any], None] | None) -> None:
    """Have SIGTERM call `handler` (None: ignore it). POSIX only."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN if handler is None else handler)
