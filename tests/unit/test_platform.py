"""The platform seam (gdres/platform.py) forced both ways with the fake engine, the Windows branch
through a stand-in for its kernel32 calls (tests/fake_windows.py), and no system-specific process
call anywhere else in gdres/ (with real engine requests: tests/engine/test_platform.py)."""

from __future__ import annotations

import ast
import ctypes
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO
from fake_windows import FakeKernel32, gone
from gdres import Bridge, platform

PACKAGE = REPO / "gdres"


def fake_request(project: Path, kind: str) -> dict[str, Any]:
    return {"op": "material_create", "project_path": str(project), "material_type": kind, "resource_path": "m.tres"}


def children_logged(tmp_path: Path) -> list[int]:
    lines = (tmp_path / "received.jsonl").read_text().splitlines()
    return [entry["child"] for entry in map(json.loads, lines) if "child" in entry]


def test_posix_kill_reaches_a_process_that_left_the_engines_tree(posix: platform.System, fake_godot: str,
                                                                 project: Path, tmp_path: Path) -> None:
    with Bridge(fake_godot, timeout=3) as bridge:
        engine = bridge.run(fake_request(project, "ok"))["pid"]
        reply = bridge.run(fake_request(project, "orphan"))
    (orphan,) = children_logged(tmp_path)
    assert reply["error"]["code"] == "timeout"
    assert gone(engine) and gone(orphan)


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
