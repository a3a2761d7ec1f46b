"""The batch pool's fault handling, with the fake engine (tests/fake_engine.py) for the faults (a real
worker killed mid-batch: tests/engine/test_pool.py)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from gdres.serving.pool import Pool
from gdres.serving.starter import Settings


def request(project: Path, i: int, kind: str = "ok") -> dict[str, Any]:
    return {"op": "material_create", "project_path": str(project), "material_type": kind,
            "resource_path": f"m{i}.tres", "id": i}


def received(tmp_path: Path) -> list[Any]:
    log = tmp_path / "received.jsonl"
    return [json.loads(line).get("resource_path") for line in log.read_text().splitlines()]


def serve(pool: Pool, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return list(pool.map(json.dumps(r) for r in requests))


def test_crashed_worker_fails_its_request_only_and_the_batch_goes_on(fake_godot: str, project: Path,
                                                                      tmp_path: Path) -> None:
    requests = [request(project, i, "die" if i in (13, 31) else "ok") for i in range(60)]
    with Pool(Settings(fake_godot, timeout=10, start_timeout=10), jobs=2, window=8) as pool:
        got = serve(pool, requests)
    assert [r["id"] for r in got] == list(range(60))
    crashed = [r["id"] for r in got if r["result"] == "error"]
    assert crashed == [13, 31]
    assert all(r["error"]["code"] == "engine_crashed" and "exit code 3" in r["error"]["message"]
               for r in got if r["result"] == "error")
    # Requests queued behind a crash go to the replacement, and nothing runs twice.
    assert sorted(received(tmp_path)) == sorted(f"res://m{i}.tres" for i in range(60))
    assert len({r["pid"] for r in got if r["result"] == "ok"}) >= 3


def test_hung_worker_times_out_its_request_and_is_replaced(fake_godot: str, project: Path,
                                                           tmp_path: Path) -> None:
    requests = [request(project, i, "hang" if i == 5 else "ok") for i in range(20)]
    with Pool(Settings(fake_godot, timeout=2, start_timeout=10), jobs=1, window=8) as pool:
        got = serve(pool, requests)
    assert [r["result"] for r in got] == ["error" if i == 5 else "ok" for i in range(20)]
    assert got[5]["error"]["code"] == "timeout"
    assert got[4]["pid"] != got[6]["pid"]
    assert sorted(received(tmp_path)) == sorted(f"res://m{i}.tres" for i in range(20))


def test_slow_requests_do_not_reorder_replies(fake_godot: str, project: Path) -> None:
    requests = [request(project, i, "sleep:0.3" if i % 7 == 0 else "ok") for i in range(30)]
    with Pool(Settings(fake_godot, timeout=10, start_timeout=10), jobs=3, window=4) as pool:
        got = serve(pool, requests)
    assert [r["id"] for r in got] == list(range(30))
    assert {r["result"] for r in got} == {"ok"}


def test_a_batch_abandoned_mid_way_waits_only_as_long_as_its_requests_take(fake_godot: str, project: Path) -> None:
    # Routed in turn to two engines: 2 after 0, 3 after 1. Once the caller stops, the pool lets 2 and 3
    # finish; 3's reply comes while it waits for 2's, and must not be waited for again, until the deadline.
    requests = [request(project, 0), request(project, 1), request(project, 2, "sleep:1"),
                request(project, 3, "sleep:0.3")]
    with Pool(Settings(fake_godot, timeout=20, start_timeout=10), jobs=2) as pool:
        pool.prewarm(str(project), 2, wait=True)
        replies = pool.map([json.dumps(r) for r in requests])
        assert isinstance(replies, Generator)
        first = next(replies)
        started = time.monotonic()
        replies.close()
        took = time.monotonic() - started
    assert first["id"] == 0 and first["result"] == "ok"
    assert took < 5


def test_a_batch_closed_while_its_input_is_quiet_ends_at_once(fake_godot: str, project: Path) -> None:
    # The feeder waits for the input's next item (a pipe whose writer lives on but sends nothing):
    # closing the batch (or a Ctrl-C) waited for that item too, forever on a pipe that stays quiet.
    release = threading.Event()

    def quiet_input() -> Iterator[str]:
        yield json.dumps(request(project, 0))
        release.wait(20)
        yield json.dumps(request(project, 1))

    with Pool(Settings(fake_godot, timeout=10, start_timeout=10), jobs=1) as pool:
        replies = pool.map(quiet_input())
        assert isinstance(replies, Generator)
        assert next(replies)["result"] == "ok"
        started = time.monotonic()
        replies.close()
        took = time.monotonic() - started
        release.set()
        # The pool serves on; the abandoned input's next item, read by then, is nobody's.
        assert [r["id"] for r in serve(pool, [request(project, 2)])] == [2]
    assert took < 2, "closing the batch waited for the input"


def test_engine_that_cannot_start_answers_every_request(fake_godot: str, project: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_ENGINE_START", "crash")
    with Pool(Settings(fake_godot, timeout=5, start_timeout=5), jobs=2) as pool:
        got = serve(pool, [request(project, i) for i in range(4)])
    assert [r["id"] for r in got] == list(range(4))
    assert {r["error"]["code"] for r in got} == {"engine_crashed"}


def test_pool_serves_a_second_stream_with_its_warm_workers(fake_godot: str, project: Path) -> None:
    with Pool(Settings(fake_godot, timeout=5, start_timeout=5), jobs=2) as pool:
        first = serve(pool, [request(project, i) for i in range(6)])
        second = serve(pool, [request(project, i) for i in range(6, 12)])
    assert [r["id"] for r in first + second] == list(range(12))
    assert {r["pid"] for r in second} <= {r["pid"] for r in first}
