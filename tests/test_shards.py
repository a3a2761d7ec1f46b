"""`batch --shard K/N` and `batch --resume FILE`: a batch shared by machines, and one taken up again after a kill."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, fresh_clone, mask_drawn, snapshot, wait_for
from gdres.serving.pool import WINDOW
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



def _files(root: Path) -> dict[str, str]:
    return {path: mask_drawn((root / path).read_text(encoding="utf-8", errors="replace"))
            for path in snapshot(root) if not path.startswith(".godot/")}


def _written(reply: dict[str, Any]) -> str | None:
    member = {"material_create": "resource_path", "resource_update": "resource_path", "resource_duplicate": "dest_path",
              "style_box_create": "resource_path", "shape_create": "save_path"}.get(reply["op"])
    return reply[member] if member is not None and reply["result"] == "ok" else None


def _answered_ok(text: str) -> set[int]:
    """The lines an output answered ok; its last line may be cut short by the kill."""
    ok: set[int] = set()
    for line in text.splitlines():
        try:
            reply = json.loads(line)
        except ValueError:
            continue
        if reply["result"] == "ok":
            ok.add(reply["line"])
    return ok


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_three_shards_merged_are_one_batch_in_replies_and_files(godot_bin: str, tmp_path: Path) -> None:
    lines = _chains(300)
    assert len(lines) == 3000
    whole, sharded = (fresh_clone(FIXTURES / "project", tmp_path / name) for name in ("whole", "sharded"))
    for root in (whole, sharded):
        (root / "in.jsonl").write_text("".join(line + "\n" for line in lines))
    one = _gdres("batch", "in.jsonl", "--no-progress", "-j", "2", cwd=whole)
    # The second shard is served by two bridge processes (the fleet), the others by one.
    outputs = [_gdres("batch", "in.jsonl", "--no-progress", *(("-j", "4", "-p", "2") if k == 2 else ("-j", "2")),
                      "--shard", f"{k}/3", cwd=sharded) for k in (1, 2, 3)]
    sizes = [len(out.stdout.splitlines()) for out in outputs]
    print(f"shard sizes: {sizes}")
    assert sum(sizes) == 3000 and min(sizes) >= 900  # every line once, the chains spread evenly
    merged = sorted((line for out in outputs for line in out.stdout.splitlines()),
                    key=lambda line: json.loads(line)["line"])
    assert mask_drawn("\n".join(merged) + "\n") == mask_drawn(one.stdout)
    assert [json.loads(line)["line"] for line in merged] == list(range(1, 3001))
    failed = {json.loads(line)["line"] for line in one.stdout.splitlines() if '"result":"error"' in line}
    assert failed == {chain * 10 + 9 for chain in range(300) if chain % 30}  # the missing files' reads only
    assert {out.returncode for out in outputs} == {one.returncode} == {1}
    assert _files(sharded) == _files(whole)
    written = [{_written(json.loads(line)) for line in out.stdout.splitlines()} - {None} for out in outputs]
    assert not (written[0] & written[1]) and not (written[1] & written[2]) and not (written[0] & written[2])


def test_the_shard_index_comes_from_a_kubernetes_indexed_job(godot_bin: str, project: Path) -> None:
    (project / "in.jsonl").write_text("".join(line + "\n" for line in _chains(3)))
    expected = shard_lines((project / "in.jsonl").read_text().splitlines(), 2, 3, str(project))
    done = _gdres("batch", "in.jsonl", "--no-progress", "--shard", "3", cwd=project,
                  env={"JOB_COMPLETION_INDEX": "1"})
    assert [json.loads(line)["line"] for line in done.stdout.splitlines()] == expected != []


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_resume_after_a_kill_serves_only_the_lines_not_answered(godot_bin: str, tmp_path: Path) -> None:
    lines = _chains(60)
    whole, resumed = (fresh_clone(FIXTURES / "project", tmp_path / name) for name in ("whole", "resumed"))
    for root in (whole, resumed):
        (root / "in.jsonl").write_text("".join(line + "\n" for line in lines))
    one = _gdres("batch", "in.jsonl", "--no-progress", "-j", "1", cwd=whole)
    first = resumed / "first.jsonl"
    with first.open("w") as out:
        batch = subprocess.Popen([sys.executable, "-m", "gdres", "batch", "in.jsonl", "--no-progress", "-j", "1"],
                                 cwd=resumed, stdout=out, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            wait_for(lambda: first.stat().st_size > 20_000, 120, "half the batch answered")
        finally:
            os.killpg(batch.pid, signal.SIGKILL)
            batch.wait()
    ok = _answered_ok(first.read_text())
    assert 0 < len(ok) < 500
    second = _gdres("batch", "in.jsonl", "--no-progress", "-j", "1", "--resume", "first.jsonl", cwd=resumed)
    assert f"gdres: {len(ok)} lines answered ok in first.jsonl, copied from it" in second.stderr
    assert f"gdres: {600 - len(ok)} requests in " in second.stderr  # served: only the others
    # A line the killed run served but had not yet answered (one of the window of requests in flight
    # after the last it answered) is served again, and a read among them may see a write served
    # after it then (scaling.md says so): those lines must succeed; every other is as in one run.
    in_flight = set(range(max(ok) + 1, max(ok) + 1 + 2 * WINDOW))
    resumed_lines, whole_lines = (mask_drawn(out.stdout).splitlines() for out in (second, one))
    assert len(resumed_lines) == len(whole_lines) == 600
    for number, (got, expected) in enumerate(zip(resumed_lines, whole_lines, strict=True), 1):
        if number in in_flight:
            assert json.loads(got)["result"] == json.loads(expected)["result"], (number, got)
        else:
            assert got == expected, number
    assert second.returncode == one.returncode
    (resumed / "first.jsonl").unlink()
    assert _files(resumed) == _files(whole)


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
