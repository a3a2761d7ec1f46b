"""`batch --shard K/N` and `batch --resume FILE` before any engine: which lines share a shard, and the
checks of their arguments (shards merged, and a resume after a kill: tests/engine/test_shards.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, fresh_clone
from gdres.serving.shards import parse_shard, shard_lines


def _gdres(*args: str, cwd: Path, env: dict[str, str] | None = None,
           stdout: Any = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gdres", *args], cwd=cwd, env={**os.environ, **(env or {})},
                          stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=600)


def _chains(count: int) -> list[str]:
    """`count` chains of ten lines, each on files of its own but for a shared read and one scene,
    where order shows: an update after its create, a duplicate of the updated file, a read of it."""
    lines: list[str] = []
    for i in range(count):
        material = f"made/m{i}.tres"
        lines += [json.dumps(line) for line in (
            {"op": "material_create", "material_type": "StandardMaterial3D", "resource_path": material,
             "properties": {"roughness": 0.5}},
            {"op": "resource_update", "resource_path": material,
             "properties": {"roughness": round(0.01 * (i % 90), 2)}},
            {"op": "resource_duplicate", "source_path": material, "dest_path": f"made/d{i}.tres",
             "property_overrides": {"metallic": 0.25}},
            {"op": "resource_read", "resource_path": f"made/d{i}.tres"},
            {"op": "resource_update", "resource_path": f"made/d{i}.tres", "properties": {"albedo_color": "#102030"}},
            {"op": "style_box_create", "style_type": "StyleBoxFlat", "resource_path": f"ui/p{i}.tres",
             "properties": {"bg_color": "#202020"}},
            {"op": "resource_read", "resource_path": "materials/base.tres"},
            {"op": "shape_create", "shape_type": "BoxShape3D", "shape_params": {"size": [1, 2, 1]},
             "save_path": f"shapes/b{i}.tres"},
            {"op": "node_set_properties", "scene_path": "scenes/level.tscn", "node_path": "Hud",
             "properties": {"position": [i, 0]}} if i % 30 == 0 else
            {"op": "resource_read", "resource_path": f"missing/{i}.tres"},
            {"op": "class_info", "class_name": "BoxShape3D"},
        )]
    return [line.replace('{"op"', '{"project_path": ".", "op"', 1) for line in lines]


def test_resume_refuses_its_own_output_file(project: Path) -> None:
    (project / "in.jsonl").write_text("".join(line + "\n" for line in _chains(1)))
    (project / "out.jsonl").write_text('{"line":1,"result":"ok"}\n')
    with (project / "out.jsonl").open("a") as out:
        done = _gdres("batch", "in.jsonl", "--resume", "out.jsonl", cwd=project, stdout=out)
    assert done.returncode == 2
    assert "--resume reads out.jsonl, which is also this batch's output" in done.stderr
    assert (project / "out.jsonl").read_text() == '{"line":1,"result":"ok"}\n'


def test_shard_arguments_are_checked() -> None:
    assert parse_shard("2/3", None) == (2, 3)
    assert parse_shard("3", "0") == (1, 3)
    for text, env, message in (("0/3", None, "K runs from 1 to 3"), ("4/3", None, "K runs from 1 to 3"),
                               ("x/3", None, "takes K/N or N"), ("3", None, "JOB_COMPLETION_INDEX, which is not set"),
                               ("3", "3", "--shard 4/3"), ("3", "a", "not a number"), ("0", None, "at least 1")):
        with pytest.raises(ValueError, match=re.escape(message)):
            parse_shard(text, env)


def test_lines_that_write_one_file_share_a_shard_and_reads_spread(project: Path) -> None:
    lines = _chains(40)
    shards = [shard_lines(lines, k, 4, str(project)) for k in (1, 2, 3, 4)]
    assert sorted(line for shard in shards for line in shard) == list(range(1, 401))
    owner = {line: k for k, shard in enumerate(shards) for line in shard}
    for chain in range(40):
        first = chain * 10 + 1
        # create, update, duplicate, read, update: one file's story, in one shard
        assert len({owner[first + step] for step in range(5)}) == 1
    assert len({owner[chain * 10 + 7] for chain in range(40)}) == 4  # reads of one file go anywhere
    assert len({owner[chain * 10 + 9] for chain in range(0, 40, 30)}) == 1  # edits of one scene: one shard
    assert [len(shard) for shard in shards] == [100, 100, 100, 100]


def test_a_uid_no_file_has_yet_joins_every_line_before_it(project: Path) -> None:
    lines = _chains(8)
    lines.insert(40, json.dumps({"op": "resource_read", "project_path": ".", "resource_path": "uid://bnotmadeyet"}))
    owner = {line: k for k in (1, 2, 3) for line in shard_lines(lines, k, 3, str(project))}
    assert len({owner[line] for line in range(1, 42)}) == 1
    assert len(set(owner.values())) > 1  # the lines after it still spread


def test_a_move_puts_every_line_on_its_project_in_one_shard(project: Path, tmp_path: Path) -> None:
    # A move rewrites whatever names the file: a line before it or after it, on any file of the
    # project, must see the project as one machine changes it.
    other = fresh_clone(FIXTURES / "project", tmp_path)
    lines = _chains(8)
    lines.insert(40, json.dumps({"op": "resource_move", "project_path": ".", "source_path": "materials",
                                 "dest_path": "shared/materials"}))
    elsewhere = [json.dumps({"op": "resource_read", "project_path": str(other), "resource_path": "materials/base.tres",
                             "id": i}) for i in range(12)]
    lines += elsewhere
    owner = {line: k for k in (1, 2, 3) for line in shard_lines(lines, k, 3, str(project))}
    assert len({owner[line] for line in range(1, 82)}) == 1
    assert len({owner[line] for line in range(82, 94)}) > 1  # another project's lines still spread
