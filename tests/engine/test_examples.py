"""The bundled example batch (what scripts/demo.sh runs) succeeds against a copy of the example project."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import REPO, run_cli


def test_example_batch_is_all_ok(godot_bin: str, tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(REPO / "examples" / "project", project)
    lines = (REPO / "examples" / "requests.jsonl").read_text().splitlines()
    batch = "".join(line.replace('"@PROJECT@"', json.dumps(str(project))) + "\n" for line in lines)
    done = run_cli("batch", input=batch, godot=godot_bin)
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0, done.stdout
    assert [r["id"] for r in replies] == [json.loads(line)["id"] for line in lines]
    assert {r["op"] for r in replies} == {"resource_read", "material_create", "shape_create",
                                         "style_box_create", "resource_duplicate"}
    scene = (project / "scenes" / "level.tscn").read_text()
    assert 'path="res://shapes/floor.tres"' in scene and scene.count("shape = ") == 2
