"""Soak one Bridge with many requests and print the engine's memory every so often.

    .venv/bin/python scripts/memory_soak.py                       # 20,000 requests, default recycling
    .venv/bin/python scripts/memory_soak.py --max-requests 0 --max-rss 0   # recycling off: raw growth

The requests cycle through all five operations on a copy of tests/fixtures/project (writes rotate
over 50 files). Every `--every` requests it prints the engine's pid and resident memory, the bridge
process's own resident memory, and the requests served per second since the last line.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from gdres import Bridge  # noqa: E402
from gdres.settings import MAX_REQUESTS, MAX_RSS  # noqa: E402


def request(project: str, n: int) -> dict[str, Any]:
    """The n-th request of the soak: the five operations in turn, writes over 50 files."""
    slot = n % 50
    kind = n % 5
    if kind == 0:
        return {"op": "material_create", "project_path": project, "material_type": "StandardMaterial3D",
                "resource_path": f"soak/m{slot}.tres",
                "properties": {"albedo_color": [n % 7 / 7, 0.5, 0.25, 1], "roughness": n % 11 / 11,
                               "resource_name": f"material {n}"}}
    if kind == 1:
        return {"op": "resource_read", "project_path": project, "resource_path": f"soak/m{(n - 1) % 50}.tres"}
    if kind == 2:
        return {"op": "shape_create", "project_path": project, "shape_type": "ConvexPolygonShape3D",
                "shape_params": {"points": [[i, n % 13, i * 0.5] for i in range(32)]},
                "save_path": f"soak/s{slot}.tres"}
    if kind == 3:
        return {"op": "style_box_create", "project_path": project, "style_type": "StyleBoxFlat",
                "resource_path": f"soak/b{slot}.tres",
                "properties": {"bg_color": "#336699", "corner_radius_top_left": n % 9}}
    return {"op": "resource_duplicate", "project_path": project, "source_path": "materials/base.tres",
            "dest_path": f"soak/d{slot}.tres", "property_overrides": {"metallic": n % 5 / 5}}


def main() -> int:
    """Run the soak and print one line per `--every` requests."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--every", type=int, default=1_000)
    parser.add_argument("--max-requests", type=int, default=MAX_REQUESTS, help="0 turns request-count recycling off")
    parser.add_argument("--max-rss", type=int, default=MAX_RSS >> 20, metavar="MB", help="0 turns RSS recycling off")
    parser.add_argument("--godot", help="Godot binary (default: GODOT_BIN, then godot on PATH)")
    args = parser.parse_args()
    me = psutil.Process()
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        shutil.copytree(REPO / "tests" / "fixtures" / "project", project)
        with Bridge(args.godot, max_requests=args.max_requests or None,
                    max_rss=(args.max_rss << 20) or None) as bridge:
            print(f"{'requests':>8} {'engine pid':>10} {'engine RSS MB':>13} {'bridge RSS MB':>13} {'req/s':>7}")
            started = time.monotonic()
            errors = 0
            for n in range(1, args.requests + 1):
                reply = bridge.run(request(str(project), n - 1))
                if reply["result"] != "ok":
                    errors += 1
                    print(f"request {n}: {reply['error']}", file=sys.stderr)
                if n % args.every == 0:
                    worker = bridge.prewarm(str(project), wait=True)[0]
                    rate = args.every / (time.monotonic() - started)
                    print(f"{n:>8} {worker.pid:>10} {worker.rss() / 2**20:>13.2f} "
                          f"{me.memory_info().rss / 2**20:>13.2f} {rate:>7.0f}", flush=True)
                    started = time.monotonic()
    print(f"errors: {errors}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
