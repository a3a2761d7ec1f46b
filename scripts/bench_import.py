"""Time a fresh clone's first request that needs one texture, against importing the whole clone.

    python scripts/bench_import.py PROJECT TEXTURE [--runs N]

PROJECT is a git checkout of a Godot project (its .import files committed, no .godot/); TEXTURE one
of its assets (res:// or relative). Each run clones PROJECT afresh (`git clone`, so only what git
holds) twice: on one, `gdres run` a material_create naming TEXTURE; on the other,
`gdres import`. Both through the command line, as a user would. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _clone(source: Path, into: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(source), str(into)], check=True)
    return into


def _timed(argv: list[str]) -> tuple[float, str, str]:
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    return time.monotonic() - started, done.stdout, done.stderr


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("project", type=Path)
    parser.add_argument("texture")
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    bridge = [sys.executable, "-m", "gdres"]
    one: list[float] = []
    whole: list[float] = []
    counts: dict[str, object] = {}
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="bench-import-") as scratch:
            first = _clone(args.project, Path(scratch) / "a")
            request = {"op": "material_create", "project_path": str(first), "material_type": "StandardMaterial3D",
                       "resource_path": "bench_material.tres", "properties": {"albedo_texture": args.texture}}
            took, out, err = _timed([*bridge, "run", json.dumps(request)])
            if json.loads(out)["result"] != "ok":
                print(out, err, file=sys.stderr)
                return 1
            one.append(took)
            counts["one_texture_log"] = [line for line in err.splitlines() if "importing the assets" in line]
            second = _clone(args.project, Path(scratch) / "b")
            took, out, err = _timed([*bridge, "import", str(second), "--no-progress"])
            whole.append(took)
            reply = json.loads(out)
            counts["whole_import"] = {"imported": reply["imported"], "refused": len(reply["refused"]),
                                      "result": reply["result"]}
    print(json.dumps({"runs": args.runs, "first_reply_needing_one_texture_s": round(statistics.median(one), 2),
                      "whole_import_s": round(statistics.median(whole), 2), **counts}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
