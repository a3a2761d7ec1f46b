"""`gdres batch --processes P` with stand-ins for its parts: usage errors, options passed on, parts that
misbehave, and the sweep of a dead engine's temp files (the fleet against the real engine:
tests/engine/test_fleet.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from batch_lines import jsonl, read, replies
from conftest import run_cli
from gdres.serving import locks


def batch(godot_bin: str, requests: list[Any], *options: str) -> subprocess.CompletedProcess[str]:
    return run_cli("--godot", godot_bin, "batch", "--no-progress", *options, input=jsonl(requests))


def _ended_pid() -> int:
    """A pid no process has: one above the system's largest (a pid of a process that ended may be reused)."""
    return int(Path("/proc/sys/kernel/pid_max").read_text()) + 1


@pytest.mark.parametrize(("options", "message"), [
    (["--processes", "0"], "--processes must be at least 1"),
    (["--jobs", "2", "--processes", "3"], "more than the 2 jobs"),
    (["--atomic", "--processes", "2"], "leave out --processes"),
    (["--stop-on-error", "--jobs", "2", "--processes", "2"], "leave out --processes"),
])
def test_processes_that_cannot_be_are_a_usage_error(options: list[str], message: str, project: Path) -> None:
    done = run_cli("batch", *options, input=jsonl([read(project, "materials/base.tres")]))
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == ""


def test_a_godot_option_that_looks_like_an_option_reaches_the_processes(project: Path) -> None:
    requests = [read(project, "materials/base.tres", id=i) for i in range(4)]
    alone = run_cli("--godot=-no-such-godot", "batch", "--jobs", "2", "--no-progress", input=jsonl(requests))
    shared = run_cli("--godot=-no-such-godot", "batch", "--jobs", "2", "--processes", "2", "--no-progress",
                     input=jsonl(requests))
    assert shared.returncode == alone.returncode == 1
    assert replies(shared.stdout) == replies(alone.stdout)
    assert {r["error"]["code"] for r in replies(shared.stdout)} == {"engine_not_found"}


def test_a_part_that_writes_what_is_no_reply_is_ended(tmp_path: Path) -> None:
    """A transport fault (a part's stdout carries something else): its lines fail, nothing hangs or shifts."""
    from gdres.serving.fleet import Fleet

    script = "import sys; print('chatter', flush=True); sys.stdin.read()"
    fleet = Fleet(lambda jobs: [sys.executable, "-c", script], [1, 1], str(tmp_path))
    (tmp_path / "project.godot").write_text("")
    lines = [json.dumps({"op": "resource_read", "project_path": str(tmp_path), "resource_path": f"m{i}.tres"})
             for i in range(6)]
    got = list(fleet.map(lines, eager=True))
    assert [ok for ok, _ in got] == [False] * 6
    assert all(isinstance(reply, dict) and reply["error"]["code"] == "engine_crashed" for _, reply in got)


def test_a_part_writing_windows_line_ends_gives_the_same_lines(tmp_path: Path) -> None:
    """A part on Windows writes its stdout in text mode (\\r\\n): the reply goes out as written, without the \\r."""
    from gdres.serving.fleet import Fleet

    script = ("import sys\nfor line in sys.stdin:\n    sys.stdout.buffer.write(b'+{\"result\":\"ok\"}\\r\\n')\n"
              "    sys.stdout.flush()\n")
    fleet = Fleet(lambda jobs: [sys.executable, "-c", script], [1], str(tmp_path))
    got = list(fleet.map(['{"op": "no_such_op"}'] * 3, eager=True))
    assert got == [(True, '{"result":"ok"}\n')] * 3


def test_only_temp_files_of_engines_that_ended_are_swept(tmp_path: Path) -> None:
    """The temp files a dead part's engines left go, whatever case the request spelled the file in; a running
    process's stay (not waited for: it is no Godot), and so do files that only look alike, without an error."""
    ended, running = _ended_pid(), os.getpid()
    gone = [f".m.tres.{ended}-1.tmp.tres", f".M.tres.{ended}-2.tmp.tres"]
    kept = [f".m.tres.{running}-2.tmp.tres", f".m.tres.{ended}-3.tmp.tres.keep", f".n.tres.{ended}-4.tmp.tres",
            ".m.tres.notes-5.tmp.tres", ".m.tres.\u00b2-6.tmp.tres", f".m.tres.{'9' * 30}-7.tmp.tres", "m.tres"]
    for name in gone + kept:
        (tmp_path / name).write_text("x")
    (tmp_path / f".m.tres.{ended}-8.tmp.tres").mkdir()
    kept.append(f".m.tres.{ended}-8.tmp.tres")
    started = time.monotonic()
    removed = locks.sweep_ended([str(tmp_path / "m.tres")], wait=5)
    assert time.monotonic() - started < 2
    assert sorted(removed) == sorted(str(tmp_path / name) for name in gone)
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(kept)


def test_a_part_that_dies_owing_a_line_no_file_system_takes_fails_it(tmp_path: Path) -> None:
    """A part dies owing a line whose path holds a lone surrogate: the line fails, the batch ends (it hung)."""
    from gdres.serving.fleet import Fleet

    script = "import sys; sys.stdin.buffer.readline()"
    fleet = Fleet(lambda jobs: [sys.executable, "-c", script], [1], str(tmp_path))
    (tmp_path / "project.godot").write_text("")
    line = json.dumps({"op": "resource_create", "project_path": str(tmp_path), "resource_type": "Gradient",
                       "resource_path": "a\ud800.tres"})
    got: list[Any] = []
    reader = threading.Thread(target=lambda: got.extend(fleet.map([line], eager=True)), daemon=True)
    reader.start()
    reader.join(30)
    assert not reader.is_alive(), "the batch hung"
    assert [reply["error"]["code"] for _, reply in got] == ["engine_crashed"]
