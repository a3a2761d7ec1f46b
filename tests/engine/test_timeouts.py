"""Deadlines and floods with the real engine, driven by project scripts that never end or print 100 MB."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from conftest import engine_processes, run_cli
from gdres import Bridge

SCRIPTS = {
    # Loading a resource runs its script's _init: these never end, or flood one stream.
    "forever": "while true:\n\t\tpass",
    "stdout_flood": 'var line: String = "o".repeat(99)\n\tfor i: int in 1_000_000:\n\t\tprint(line)',
    "stderr_flood": 'var line: String = "e".repeat(99)\n\tfor i: int in 1_000_000:\n\t\tprinterr(line)',
}


def add_scripted_resource(project: Path, name: str) -> str:
    (project / "scripts").mkdir(exist_ok=True)
    (project / "scripts" / f"{name}.gd").write_text(
        f"extends Resource\n\n\nfunc _init() -> void:\n\t{SCRIPTS[name]}\n")
    (project / f"{name}.tres").write_text(
        '[gd_resource type="Resource" load_steps=2 format=3]\n\n'
        f'[ext_resource type="Script" path="res://scripts/{name}.gd" id="1"]\n\n'
        '[resource]\nscript = ExtResource("1")\n')
    return f"{name}.tres"


def read(project: Path, path: str, **extra: Any) -> dict[str, Any]:
    return {"op": "resource_read", "project_path": str(project), "resource_path": path, **extra}


def engine_pids() -> set[int]:
    return {p.pid for p in engine_processes()}


def test_request_that_cannot_finish_times_out_and_its_engine_is_killed(godot_bin: str, project: Path) -> None:
    endless = add_scripted_resource(project, "forever")
    with Bridge(godot_bin, timeout=3) as bridge:
        assert bridge.run(read(project, "materials/base.tres"))["result"] == "ok"
        (warm,) = engine_pids()
        started = time.monotonic()
        # An allow_scripts request runs in an engine of its own (discarded after it): that one goes.
        reply = bridge.run(read(project, endless, allow_scripts=True, id="x"))
        took = time.monotonic() - started
        assert reply["result"] == "error" and reply["id"] == "x"
        assert reply["error"]["code"] == "timeout"
        assert "3 s" in reply["error"]["message"]
        assert 3 <= took < 3 + 5
        assert engine_pids() == {warm}
        after = bridge.run(read(project, "materials/base.tres"))
        assert after["result"] == "ok" and after["properties"]["roughness"] == 0.25
        assert engine_pids() == {warm}


def test_cli_timeout_option_bounds_a_batch_request_and_the_batch_goes_on(godot_bin: str, project: Path) -> None:
    endless = add_scripted_resource(project, "forever")
    lines = [read(project, "materials/base.tres"), read(project, endless, allow_scripts=True),
             read(project, "materials/base.tres")]
    started = time.monotonic()
    done = run_cli("--godot", godot_bin, "--timeout", "2", "batch",
                   input="".join(json.dumps(line) + "\n" for line in lines))
    took = time.monotonic() - started
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["result"] if r["result"] == "ok" else r["error"]["code"] for r in replies] == ["ok", "timeout", "ok"]
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert took < 2 + 20


@pytest.mark.timeout(180)
@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_project_script_printing_100_mb_does_not_stall_or_bloat_the_bridge(
        godot_bin: str, project: Path, stream: str) -> None:
    noisy = add_scripted_resource(project, f"{stream}_flood")
    me = psutil.Process()
    with Bridge(godot_bin, timeout=120) as bridge:
        assert bridge.run(read(project, "materials/base.tres"))["result"] == "ok"
        before = me.memory_info().rss
        started = time.monotonic()
        reply = bridge.run(read(project, noisy, allow_scripts=True))
        took = time.monotonic() - started
        grown = me.memory_info().rss - before
        assert bridge.run(read(project, "materials/base.tres"))["result"] == "ok"
    print(f"\n100 MB on {stream}: reply after {took:.1f} s, bridge RSS grew {grown / 1e6:.1f} MB")
    assert reply["result"] == "ok", reply
    assert reply["script"] == f"res://scripts/{stream}_flood.gd"
    assert grown < 64e6
