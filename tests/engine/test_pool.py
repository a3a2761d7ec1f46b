"""The batch pool with real engines: a worker killed mid-batch fails only what it held, and ready() while
replies are still to come (the faults, with the fake engine: tests/unit/test_pool.py)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from gdres.serving.pool import WINDOW, Pool
from gdres.serving.starter import Settings


@pytest.mark.engine
def test_killing_a_real_worker_mid_batch_fails_only_what_it_was_serving(godot_bin: str,
                                                                         project: Path) -> None:
    requests = [{"op": "resource_read", "project_path": str(project), "resource_path": "materials/base.tres",
                 "id": i} for i in range(400)]
    with Pool(Settings(godot_bin, timeout=30), jobs=2) as pool:
        got = []
        for reply in pool.map(iter(requests)):
            got.append(reply)
            if len(got) == 100:
                pool.workers()[0].kill()
    assert [r["id"] for r in got] == list(range(400))
    failed = [r for r in got if r["result"] != "ok"]
    assert len(failed) <= 1
    assert all(r["error"]["code"] == "engine_crashed" for r in failed)


@pytest.mark.engine
def test_ready_says_so_while_replies_taken_together_are_still_to_come(godot_bin: str, project: Path) -> None:
    # The CLI flushes its output only when ready() is False: replies that arrived together must
    # read as ready until the last of them, or every reply costs a write of its own. A pause after
    # the first reply lets the engine answer the rest of its window, so they arrive together
    # whatever the machine's load.
    requests = [{"op": "resource_read", "project_path": str(project), "resource_path": "materials/base.tres",
                 "id": i} for i in range(WINDOW)]
    with Pool(Settings(godot_bin), jobs=1) as pool:
        said = []
        for reply in pool.map(iter(requests)):
            assert reply["result"] == "ok"
            said.append(pool.ready())
            if len(said) == 1:
                time.sleep(1.0)
    # The pool may read the waiting replies in a few pieces: a False or two among them is fine.
    assert said[1:-1].count(True) >= WINDOW - 6, said
    assert said[-1] is False
