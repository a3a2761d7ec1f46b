"""Transport faults, with a fake engine (tests/fake_engine.py): crash, hang, garbage, deafness, floods.

Each test shows what a caller sees: the failing request gets `engine_crashed` or `timeout`, no
call hangs, nothing is re-run, and the next request is served by a fresh engine process.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from conftest import run_cli
from gdres import Bridge
from gdres.engine.worker import Worker
from gdres.errors import EngineCrashed, Timeout


@pytest.fixture
def fake_bridge(fake_godot: str) -> Iterator[Bridge]:
    with Bridge(fake_godot, timeout=3, start_timeout=3) as b:
        yield b


def request(project: Path, kind: str, **extra: Any) -> dict[str, Any]:
    return {"op": "material_create", "project_path": str(project), "material_type": kind,
            "resource_path": "m.tres", **extra}


def received(tmp_path: Path) -> list[dict[str, Any]]:
    log = tmp_path / "received.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def fake_worker(fake_godot: str) -> Worker:
    worker = Worker(lambda token: [fake_godot, "--", token], start_timeout=5)
    worker.start()
    return worker


def test_engine_dying_mid_request_fails_that_request_only(fake_bridge: Bridge, project: Path,
                                                          tmp_path: Path) -> None:
    first = fake_bridge.run(request(project, "ok"))
    died = fake_bridge.run(request(project, "die", id=7))
    after = fake_bridge.run(request(project, "ok"))
    assert first["result"] == "ok" and after["result"] == "ok"
    assert died["result"] == "error" and died["id"] == 7
    assert died["error"]["code"] == "engine_crashed"
    assert "exit code 3" in died["error"]["message"]
    assert "fatal error while serving" in died["error"]["message"]
    assert after["pid"] != first["pid"]
    kinds = [entry["material_type"] for entry in received(tmp_path)]
    assert kinds == ["ok", "die", "ok"]


def test_batch_goes_on_after_a_crash_and_never_reruns(fake_godot: str, project: Path, tmp_path: Path) -> None:
    lines = [json.dumps(request(project, kind, id=n)) for n, kind in enumerate(["ok", "die", "ok", "die", "ok"])]
    done = run_cli("--godot", fake_godot, "--timeout", "5", "batch", input="\n".join(lines) + "\n")
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["id"] for r in replies] == [0, 1, 2, 3, 4]
    assert [r["result"] if r["result"] == "ok" else r["error"]["code"] for r in replies] == [
        "ok", "engine_crashed", "ok", "engine_crashed", "ok"]
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert [entry["material_type"] for entry in received(tmp_path)] == ["ok", "die", "ok", "die", "ok"]


def test_hung_request_times_out_and_its_process_tree_is_killed(fake_bridge: Bridge, project: Path,
                                                                tmp_path: Path) -> None:
    engine_pid = fake_bridge.run(request(project, "ok"))["pid"]
    started = time.monotonic()
    reply = fake_bridge.run(request(project, "spawn"))
    took = time.monotonic() - started
    assert reply["error"]["code"] == "timeout", reply
    assert "3 s" in reply["error"]["message"]
    assert took < 3 + 4
    child = next(entry["child"] for entry in received(tmp_path) if "child" in entry)
    assert gone(engine_pid) and gone(child)
    after = fake_bridge.run(request(project, "ok"))
    assert after["result"] == "ok" and after["pid"] != engine_pid


def test_engine_crashing_at_start_is_reported_and_the_next_request_retries(
        fake_bridge: Bridge, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_ENGINE_START", "crash")
    reply = fake_bridge.run(request(project, "ok"))
    assert reply["error"]["code"] == "engine_crashed"
    assert "during start-up" in reply["error"]["message"]
    assert "cannot open display" in reply["error"]["message"]
    monkeypatch.setenv("FAKE_ENGINE_START", "ok")
    assert fake_bridge.run(request(project, "ok"))["result"] == "ok"


def test_engine_that_never_becomes_ready_is_given_up_on(fake_godot: str, project: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_ENGINE_START", "hang")
    with Bridge(fake_godot, timeout=30, start_timeout=1.5) as b:
        started = time.monotonic()
        reply = b.run(request(project, "ok"))
        assert time.monotonic() - started < 1.5 + 4
    assert reply["error"]["code"] == "engine_crashed"
    assert "did not become ready within 1.5 s" in reply["error"]["message"]


def test_garbled_reply_is_a_crash_and_the_engine_is_replaced(fake_bridge: Bridge, project: Path) -> None:
    first = fake_bridge.run(request(project, "ok"))
    reply = fake_bridge.run(request(project, "garbage"))
    assert reply["error"]["code"] == "engine_crashed"
    assert "garbled" in reply["error"]["message"]
    assert gone(first["pid"])
    assert fake_bridge.run(request(project, "ok"))["result"] == "ok"


def test_engine_that_stops_reading_cannot_block_a_send(fake_godot: str, project: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_ENGINE_START", "deaf")
    big = {"resource_name": "x" * (8 << 20)}
    worker = fake_worker(fake_godot)
    try:
        started = time.monotonic()
        for _ in range(3):
            worker.send({"op": "material_create", "material_type": "ok", "properties": big})
        assert time.monotonic() - started < 2, "send() waited for the engine to read"
        with pytest.raises(Timeout):
            worker.receive(time.monotonic() + 1)
    finally:
        worker.close()
    with Bridge(fake_godot, timeout=2) as b:
        started = time.monotonic()
        reply = b.run(request(project, "ok", properties=big))
        assert time.monotonic() - started < 2 + 4
    assert reply["error"]["code"] == "timeout"


def test_flood_of_output_neither_stalls_the_reply_nor_grows_memory(fake_godot: str, project: Path) -> None:
    me = psutil.Process()
    with Bridge(fake_godot, timeout=60) as b:
        assert b.run(request(project, "ok"))["result"] == "ok"
        before = me.memory_info().rss
        started = time.monotonic()
        reply = b.run(request(project, "flood"))
        took = time.monotonic() - started
        grown = me.memory_info().rss - before
        died = b.run(request(project, "die"))
    print(f"200 MB flood + 10 MB line: reply after {took:.2f} s, bridge RSS grew {grown / 1e6:.1f} MB")
    assert reply["result"] == "ok", reply
    assert grown < 64e6
    # The crash message carries a tail of the output, not the flood.
    assert len(died["error"]["message"]) < 20_000
    assert "fatal error while serving" in died["error"]["message"]


def test_a_large_request_waiting_behind_a_flood_of_output_deadlocks_nothing(fake_godot: str, project: Path) -> None:
    # The engine prints 200 MB while the next request, 8 MB, waits to be written: the bridge reads
    # the flood as it writes the request, so neither side waits for the other.
    big = {"resource_name": "x" * (8 << 20)}
    with Bridge(fake_godot, timeout=60) as b:
        replies = list(b.batch([request(project, "flood"), request(project, "ok", properties=big)]))
    assert [r["result"] for r in replies] == ["ok", "ok"], [r.get("error") for r in replies]


def test_requests_sent_ahead_are_answered_in_order(fake_godot: str) -> None:
    worker = fake_worker(fake_godot)
    try:
        seqs = [worker.send({"material_type": kind}) for kind in ["sleep:0.2", "ok", "sleep:0.1", "ok"]]
        answers = [worker.receive(time.monotonic() + 5) for _ in seqs]
    finally:
        worker.close()
    assert [a["seq"] for a in answers] == seqs
    assert [a["reply"]["type"] for a in answers] == ["sleep:0.2", "ok", "sleep:0.1", "ok"]


def test_engine_death_fails_every_pending_request_and_runs_every_release(fake_godot: str) -> None:
    worker = fake_worker(fake_godot)
    released: list[tuple[str, bool]] = []

    def noting(kind: str) -> Callable[[bool], None]:
        return lambda answered: released.append((kind, answered))

    try:
        # The first answer comes late, so all three are sent before the engine dies on the second.
        for kind in ["sleep:0.3", "die", "ok"]:
            worker.send({"material_type": kind}, release=noting(kind))
        assert worker.receive(time.monotonic() + 5)["ok"] is True
        for _ in range(2):
            with pytest.raises(EngineCrashed):
                worker.receive(time.monotonic() + 5)
        with pytest.raises(EngineCrashed):
            worker.send({"material_type": "ok"}, release=noting("late"))
    finally:
        worker.close()
    assert released == [("sleep:0.3", True), ("die", False), ("ok", False), ("late", False)]


def test_close_is_bounded_even_when_the_engine_ignores_it(fake_godot: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_ENGINE_START", "deaf")
    worker = fake_worker(fake_godot)
    pid = worker.pid
    assert pid is not None
    started = time.monotonic()
    worker.close()
    assert time.monotonic() - started < 10
    assert gone(pid) and not worker.alive


class _DeadWorker:
    pid = 2**22 + 17


def test_a_scene_edit_whose_engine_died_unanswered_is_undone(project: Path) -> None:
    from gdres.requests.request import Job, Roots, prepare
    from gdres.serving import locks
    from gdres.serving.slot import release_writes

    scene, shape = project / "scenes" / "level.tscn", project / "shapes" / "s.tres"
    job = prepare({"op": "shape_create", "project_path": str(project), "shape_type": "BoxShape3D",
                   "save_path": "shapes/s.tres", "scene_path": "scenes/level.tscn", "node_path": "Floor/Shape"},
                  Roots(None))
    assert isinstance(job, Job)
    original = scene.read_bytes()
    for answered in (False, True):
        held = locks.try_hold([Path(path) for path in job.written])
        release = release_writes(_DeadWorker(), job, held)  # type: ignore[arg-type]  # only .pid is read
        shape.parent.mkdir(exist_ok=True)
        shape.write_text("the engine saved this")
        scene.write_bytes(original + b"\n; and edited this\n")
        release(answered)
        if answered:
            assert shape.read_text() == "the engine saved this"
        else:
            assert not shape.exists() and scene.read_bytes() == original


def test_restore_puts_back_what_it_can_and_never_raises(tmp_path: Path) -> None:
    from gdres.serving import locks

    gone, kept = tmp_path / "gone" / "a.tres", tmp_path / "b.tres"
    gone.parent.mkdir()
    gone.write_bytes(b"old a")
    kept.write_bytes(b"old b")
    taken = locks.snapshot([gone, kept])
    gone.unlink()
    gone.parent.rmdir()
    kept.write_bytes(b"new b")
    assert locks.restore(taken) == [kept]
    assert kept.read_bytes() == b"old b"
    assert [p.name for p in tmp_path.iterdir()] == ["b.tres"]
