"""A stand-in for the Windows calls of gdres/platform.py, and fixtures forcing the platform seam to
each side on this machine (tests/unit and tests/engine test_platform.py); registered as a plugin by
conftest.py, so that both tiers find the fixtures by name."""

from __future__ import annotations

import contextlib
import ctypes
import time
from collections.abc import Iterator
from typing import Any

import psutil
import pytest

from gdres import platform


class FakeKernel32:
    """Job Objects for Linux processes: a job holds the processes assigned to it and, when it is
    terminated or closed with kill-on-close set, kills them and the processes they started."""

    def __init__(self, *, refuse: bool = False) -> None:
        self.refuse = refuse
        self.members: dict[int, set[int]] = {}
        self.kill_on_close: set[int] = set()
        self.opened: dict[int, int] = {}
        self.terminated: list[int] = []
        self._next = 1000

    def _handle(self) -> int:
        self._next += 4
        return self._next

    def CreateJobObjectW(self, attributes: None, name: None) -> int | None:
        if self.refuse:
            return None
        job = self._handle()
        self.members[job] = set()
        return job

    def SetInformationJobObject(self, job: int, kind: int, info: Any, size: int) -> int:
        limits = info._obj
        assert kind == 9 and size == ctypes.sizeof(platform.ExtendedLimits) == ctypes.sizeof(limits)
        if limits.BasicLimitInformation.LimitFlags & 0x2000:
            self.kill_on_close.add(job)
        return 1

    def OpenProcess(self, access: int, inherit: bool, pid: int) -> int | None:
        assert access & 0x0100 and access & 0x0001  # PROCESS_SET_QUOTA | PROCESS_TERMINATE, as Assign needs
        handle = self._handle()
        self.opened[handle] = pid
        return handle

    def AssignProcessToJobObject(self, job: int, process: int) -> int:
        self.members[job].add(self.opened[process])
        return 1

    def TerminateJobObject(self, job: int, exit_code: int) -> int:
        self.terminated.append(job)
        self._kill(job)
        return 1

    def CloseHandle(self, handle: int) -> int:
        if handle in self.opened:
            del self.opened[handle]
        elif handle in self.members:
            if handle in self.kill_on_close:
                self._kill(handle)
            del self.members[handle]
        else:
            raise AssertionError(f"handle {handle} closed twice or never opened")
        return 1

    def _kill(self, job: int) -> None:
        for pid in self.members[job]:
            try:
                root = psutil.Process(pid)
                victims = [*root.children(recursive=True), root]
            except psutil.Error:
                continue
            for victim in victims:
                with contextlib.suppress(psutil.Error):
                    victim.kill()

    def jobs_of(self, pid: int) -> list[int]:
        return [job for job, pids in self.members.items() if pid in pids]


class WindowsHere(platform.Windows):
    """The Windows branch, less the creation flag that Linux's Popen refuses."""

    def popen_options(self) -> dict[str, Any]:
        return {}


@pytest.fixture
def posix(monkeypatch: pytest.MonkeyPatch) -> platform.System:
    system = platform.Posix()
    monkeypatch.setattr(platform, "current", lambda: system)
    return system


@pytest.fixture
def kernel32(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeKernel32]:
    kernel = FakeKernel32()
    monkeypatch.setattr(platform, "current", lambda: WindowsHere(kernel))
    yield kernel
    assert kernel.opened == {}, "process handles left open"


def gone(pid: int, within: float = 3.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.05)
    return False
