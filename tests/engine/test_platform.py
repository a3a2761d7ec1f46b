"""The platform seam (gdres/platform.py) forced both ways on this machine, with real engine requests through
each; the Windows branch with a stand-in for the five kernel32 calls of a Job Object (tests/fake_windows.py)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from fake_windows import FakeKernel32, WindowsHere, gone
from gdres import Bridge, platform


def serve_some(bridge: Bridge, project: Path) -> list[dict[str, Any]]:
    root = str(project)
    return [
        bridge.run({"op": "material_create", "project_path": root, "material_type": "StandardMaterial3D",
                    "resource_path": "made/m.tres", "properties": {"roughness": 0.25}}),
        bridge.run({"op": "shape_create", "project_path": root, "shape_type": "BoxShape3D",
                    "save_path": "made/box.tres", "shape_params": {"size": [1, 2, 3]}}),
        bridge.run({"op": "resource_read", "project_path": root, "resource_path": "made/m.tres"}),
    ]


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


def test_windows_without_a_job_still_serves(monkeypatch: pytest.MonkeyPatch, godot_bin: str, project: Path) -> None:
    kernel = FakeKernel32(refuse=True)
    monkeypatch.setattr(platform, "current", lambda: WindowsHere(kernel))
    with Bridge(godot_bin) as bridge:
        replies = serve_some(bridge, project)
    assert [r["result"] for r in replies] == ["ok"] * 3, replies
