"""The platform seam (gdres/platform.py) forced both ways on this machine, with real engine requests
through each, and no system-specific process call anywhere else in bridge/.

The Windows branch runs here with a stand-in for the five kernel32 calls of a Job Object (Linux's
Popen also refuses Windows' creation flags, so the forced branch starts engines without them); the
calls themselves, and a Job ending the engine with its bridge, run only on Windows.
"""

from __future__ import annotations

import ast
import contextlib
import ctypes
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from gdres import Bridge, platform

PACKAGE = Path(__file__).resolve().parent.parent / "gdres"


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


def serve_some(bridge: Bridge, project: Path) -> list[dict[str, Any]]:
    root = str(project)
    return [
        bridge.run({"op": "material_create", "project_path": root, "material_type": "StandardMaterial3D",
                    "resource_path": "made/m.tres", "properties": {"roughness": 0.25}}),
        bridge.run({"op": "shape_create", "project_path": root, "shape_type": "BoxShape3D",
                    "save_path": "made/box.tres", "shape_params": {"size": [1, 2, 3]}}),
        bridge.run({"op": "resource_read", "project_path": root, "resource_path": "made/m.tres"}),
    ]


def fake_request(project: Path, kind: str) -> dict[str, Any]:
    return {"op": "material_create", "project_path": str(project), "material_type": kind, "resource_path": "m.tres"}


def children_logged(tmp_path: Path) -> list[int]:
    lines = (tmp_path / "received.jsonl").read_text().splitlines()
    return [entry["child"] for entry in map(json.loads, lines) if "child" in entry]


# ----- POSIX ---------------------------------------------------------------------------------


def test_posix_engines_lead_a_session_of_their_own_and_serve(posix: platform.System, godot_bin: str,
                                                            project: Path) -> None:
    with Bridge(godot_bin) as bridge:
        (worker,) = bridge.prewarm(str(project), wait=True)
        assert worker.pid is not None
        # Its own session: a Ctrl-C in the terminal goes to the bridge, which stops the engine in order.
        assert os.getsid(worker.pid) == worker.pid != os.getsid(0)
        replies = serve_some(bridge, project)
    assert [r["result"] for r in replies] == ["ok"] * 3, replies
    assert replies[2]["properties"]["roughness"] == 0.25
    assert gone(worker.pid)


def test_posix_kill_reaches_a_process_that_left_the_engines_tree(posix: platform.System, fake_godot: str,
                                                                 project: Path, tmp_path: Path) -> None:
    with Bridge(fake_godot, timeout=3) as bridge:
        engine = bridge.run(fake_request(project, "ok"))["pid"]
        reply = bridge.run(fake_request(project, "orphan"))
    (orphan,) = children_logged(tmp_path)
    assert reply["error"]["code"] == "timeout"
    assert gone(engine) and gone(orphan)


# ----- Windows, forced -----------------------------------------------------------------------


def test_windows_engines_run_in_a_job_that_ends_them_and_serve(kernel32: FakeKernel32, godot_bin: str,
                                                              project: Path) -> None:
    with Bridge(godot_bin) as bridge:
        (worker,) = bridge.prewarm(str(project), wait=True)
        assert worker.pid is not None
        (job,) = kernel32.jobs_of(worker.pid)
        assert job in kernel32.kill_on_close
        # No session of its own (Windows has none): the seam, not start_new_session, set it apart.
        assert os.getsid(worker.pid) == os.getsid(0)
        replies = serve_some(bridge, project)
    assert [r["result"] for r in replies] == ["ok"] * 3, replies
    assert replies[2]["properties"]["roughness"] == 0.25
    assert gone(worker.pid)
    assert job not in kernel32.members, "the job outlived its engine's worker"


def test_windows_timeout_ends_the_engine_and_its_child_through_the_job(
        kernel32: FakeKernel32, fake_godot: str, project: Path, tmp_path: Path) -> None:
    with Bridge(fake_godot, timeout=3) as bridge:
        engine = bridge.run(fake_request(project, "ok"))["pid"]
        (job,) = kernel32.jobs_of(engine)
        started = time.monotonic()
        reply = bridge.run(fake_request(project, "spawn"))
        took = time.monotonic() - started
        after = bridge.run(fake_request(project, "ok"))
    (child,) = children_logged(tmp_path)
    assert reply["error"]["code"] == "timeout" and took < 3 + 4
    assert job in kernel32.terminated
    assert gone(engine) and gone(child)
    assert after["result"] == "ok" and after["pid"] != engine
    assert kernel32.members == {}


def test_windows_without_a_job_still_serves(monkeypatch: pytest.MonkeyPatch, godot_bin: str, project: Path) -> None:
    kernel = FakeKernel32(refuse=True)
    monkeypatch.setattr(platform, "current", lambda: WindowsHere(kernel))
    with Bridge(godot_bin) as bridge:
        replies = serve_some(bridge, project)
    assert [r["result"] for r in replies] == ["ok"] * 3, replies


# ----- the seam itself -----------------------------------------------------------------------


def test_each_branch_starts_engines_apart_from_the_terminal() -> None:
    assert platform.Posix().popen_options() == {"start_new_session": True}
    # CREATE_NEW_PROCESS_GROUP, whose value Win32 fixes: a console's Ctrl-C is not sent to the engine.
    assert platform.Windows().popen_options() == {"creationflags": 0x200}
    assert platform.current().name == ("windows" if os.name == "nt" else "posix")


@pytest.mark.skipif(ctypes.sizeof(ctypes.c_void_p) != 8, reason="the layout below is the 64-bit one")
def test_job_limits_have_windows_64_bit_layout() -> None:
    # JOBOBJECT_EXTENDED_LIMIT_INFORMATION on x64: 144 bytes, LimitFlags at offset 16.
    assert ctypes.sizeof(platform.ExtendedLimits) == 144
    assert platform.ExtendedLimits.BasicLimitInformation.offset == 0
    limits = platform.ExtendedLimits()
    limits.BasicLimitInformation.LimitFlags = 0x2000
    assert bytes(limits)[16:20] == (0x2000).to_bytes(4, "little")


# ----- nothing system-specific outside the seam ----------------------------------------------

SYSTEM_MODULES = {"select", "selectors", "fcntl", "msvcrt", "termios", "resource", "pwd", "grp", "_winapi", "winreg"}
SYSTEM_CALLS = {("os", name) for name in ("killpg", "setsid", "setpgid", "getpgid", "set_blocking", "get_blocking",
                                          "fork", "kill", "pipe")} | {
    ("signal", name) for name in ("SIGKILL", "SIGTERM", "SIGPIPE", "SIGCHLD", "SIGHUP")}
SYSTEM_KEYWORDS = {"start_new_session", "creationflags", "preexec_fn", "process_group"}


def system_specific(source: str) -> list[str]:
    """Return what in `source` names a call, module or Popen option that exists on one kind of system only."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        found += [f"import {name}" for name in names if name.split(".")[0] in SYSTEM_MODULES
                  or tuple(name.split(".")) in SYSTEM_CALLS]
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and (node.value.id, node.attr) in SYSTEM_CALLS:
            found.append(f"{node.value.id}.{node.attr} (line {node.lineno})")
        if isinstance(node, ast.keyword) and node.arg in SYSTEM_KEYWORDS:
            found.append(f"{node.arg}= (line {node.value.lineno})")
    return found


def test_the_check_finds_what_it_looks_for() -> None:
    source = ("import select\nfrom fcntl import flock\nimport os, signal, subprocess\nos.killpg(1, signal.SIGKILL)\n"
              "os.set_blocking(0, False)\nsubprocess.Popen(['x'], start_new_session=True)\n")
    assert system_specific(source) == [
        "import select", "import fcntl", "import fcntl.flock", "os.killpg (line 4)", "signal.SIGKILL (line 4)",
        "os.set_blocking (line 5)", "start_new_session= (line 6)"]


def test_no_system_specific_process_call_outside_the_seam() -> None:
    found = {module.relative_to(PACKAGE).as_posix(): system_specific(module.read_text())
             for module in sorted(PACKAGE.rglob("*.py")) if module.name != "platform.py"}
    assert {name: calls for name, calls in found.items() if calls} == {}


def test_the_seam_is_where_they_are() -> None:
    assert system_specific((PACKAGE / "platform.py").read_text())
