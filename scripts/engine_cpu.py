#!/usr/bin/env python3
"""Serve N material_create requests (or, with `read`, N resource_reads of four small files) through
one warm worker; print requests per second and the CPU the engine and the bridge spend per request
(the engine's user time apart).

Each run writes into a new folder under DIR, never deleting one (on an ext4 without a journal, files
created after many were deleted are slow to create, which would drown the difference measured).

    GODOT_BIN=... .venv/bin/python scripts/engine_cpu.py [N] [DIR] [create|read]
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from pathlib import Path

import psutil

from gdres import Bridge


def main() -> int:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1500
    # Named without a long run of digits: 16 in a row send a request down the input check's slow walk.
    base = Path(sys.argv[2] if len(sys.argv) > 2 else "/tmp/engine_cpu")
    root = base / f"run-{time.strftime('%H%M%S')}-{os.getpid()}"
    root.mkdir(parents=True)
    (root / "project.godot").write_text("config_version=5\n")
    reads = (sys.argv[3] if len(sys.argv) > 3 else "create") == "read"
    if reads:
        lines = [json.dumps({"op": "resource_read", "project_path": str(root), "resource_path": f"s{i % 4}.tres"})
                 for i in range(count)]
    else:
        lines = [json.dumps({"op": "material_create", "project_path": str(root), "material_type": "StandardMaterial3D",
                             "resource_path": f"gen/g{i // 200}/mat{i}.tres",
                             "properties": {"albedo_color": "#cc3311", "roughness": 0.4, "metallic": 0.7,
                                            "emission_enabled": True, "emission": "#221100"}})
                 for i in range(count)]
    with Bridge(os.environ.get("GODOT_BIN"), jobs=1) as bridge:
        (worker,) = bridge.prewarm(str(root), 1, wait=True)
        for i in range(4 if reads else 0):
            bridge.run({"op": "style_box_create", "project_path": str(root), "style_type": "StyleBoxFlat",
                        "resource_path": f"s{i}.tres", "properties": {"bg_color": "#202830"}})
        engine = psutil.Process(worker.pid)
        engine_before, mine_before = engine.cpu_times(), resource.getrusage(resource.RUSAGE_SELF)
        started = time.perf_counter()
        errors = sum(reply["result"] != "ok" for reply in bridge.batch(lines))
        elapsed = time.perf_counter() - started
        engine_after, mine_after = engine.cpu_times(), resource.getrusage(resource.RUSAGE_SELF)
    per = 1e6 / count
    engine_cpu = (engine_after.user + engine_after.system - engine_before.user - engine_before.system) * per
    engine_user = (engine_after.user - engine_before.user) * per
    mine = (mine_after.ru_utime + mine_after.ru_stime - mine_before.ru_utime - mine_before.ru_stime) * per
    print(f"{count / elapsed:.0f} req/s; engine {engine_cpu:.0f} us/request (user {engine_user:.0f}); "
          f"bridge {mine:.0f} us/request; {errors} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
