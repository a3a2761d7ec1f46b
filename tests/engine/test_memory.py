"""Worker recycling: after N requests or past an RSS limit the engine is replaced, and no caller notices."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from conftest import REPO
from gdres import Bridge

_SPEC = importlib.util.spec_from_file_location("memory_soak",
                                               REPO / "scripts" / "memory_soak.py")
assert _SPEC is not None and _SPEC.loader is not None
soak = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(soak)

LIMIT = 256 << 20


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_2000_requests_with_recycling_every_500_all_succeed_in_bounded_memory(godot_bin: str,
                                                                              project: Path) -> None:
    pids: list[int | None] = []
    samples: list[int] = []
    with Bridge(godot_bin, max_requests=500, max_rss=LIMIT) as bridge:
        for n in range(2000):
            worker = bridge.prewarm(str(project), wait=True)[0]  # the one that serves the next request
            if not pids or pids[-1] != worker.pid:
                pids.append(worker.pid)
            reply = bridge.run(soak.request(str(project), n))
            assert reply["result"] == "ok", (n, reply)
            if n % 100 == 99:
                samples.append(worker.rss())
    print(f"\nengine RSS every 100 requests (MB): {[round(s / 2**20) for s in samples]}; pids: {pids}")
    assert len(pids) == 4
    assert max(samples) < LIMIT


def test_engine_grown_past_its_memory_limit_is_replaced_before_the_next_request(godot_bin: str,
                                                                               project: Path) -> None:
    base = str(project)
    with Bridge(godot_bin) as probe:
        assert probe.run(soak.request(base, 0))["result"] == "ok"
        idle = probe.prewarm(base, wait=True)[0].rss()
    limit = idle + (48 << 20)
    with Bridge(godot_bin, max_rss=limit) as bridge:
        assert bridge.run(soak.request(base, 0))["result"] == "ok"
        worker = bridge.prewarm(base, wait=True)[0]
        first = worker.pid
        # A 30 MB value makes the engine hold several copies of it at once.
        big = bridge.run({"op": "material_create", "project_path": base, "material_type": "StandardMaterial3D",
                          "resource_path": "big.tres", "properties": {"resource_name": "x" * 30_000_000}})
        assert big["result"] == "ok"
        grown = worker.rss()
        after = bridge.run(soak.request(base, 1))
        assert after["result"] == "ok" and after["properties"]["resource_name"] == "material 0"
        replaced = bridge.prewarm(base, wait=True)[0]
        replaced_pid, replaced_rss = replaced.pid, replaced.rss()
    print(f"\nidle {idle / 2**20:.0f} MB, after a 30 MB request {grown / 2**20:.0f} MB, limit {limit / 2**20:.0f} MB")
    assert grown > limit
    assert replaced_pid != first and replaced_rss < limit
