"""Two gdres processes on one project at once: no lost update, no corrupt file.

Each process runs a batch of 500 requests: 200 edits of the shared scene, each giving one of its
own nodes a shape (so both processes rewrite the same scene file all the time), writes of ten
materials that both processes overwrite, and reads. Afterwards the real engine loads everything,
every node holds the shape it was given, every material is one that a request wrote, and no temp
or lock file is left in the project. Without the per-file lock, edits overlapping in time lose
each other's nodes.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO
from gdres import Bridge
from gdres.serving import locks
from gdres.serving.locks import lock_dir
from unit.test_concurrency import _sharing_a_lock

NODES = 200
"""Nodes per process, each given one shape: any edit lost to a concurrent one shows at the end."""


MATERIALS = 10


REQUESTS = 500


CHECK_SCENE = """extends SceneTree


func _initialize() -> void:
\tvar root: Node = (load("res://shared.tscn") as PackedScene).instantiate()
\tvar shapes: Dictionary = {}
\tfor child: Node in root.get_children():
\t\tvar shape: Shape3D = child.get("shape")
\t\tshapes[child.name] = [shape.size.x, shape.size.y, shape.size.z] if shape is BoxShape3D else null
\tprint("SHAPES " + JSON.stringify(shapes))
\troot.free()
\tquit()
"""


def shared_scene() -> str:
    nodes = "".join(f'\n[node name="{who}{n}" type="CollisionShape3D" parent="."]\n'
                    for who in "AB" for n in range(NODES))
    return '[gd_scene format=3 uid="uid://bconcurrency01"]\n\n[node name="Root" type="Node3D"]\n' + nodes


def batch(project: Path, who: str) -> tuple[list[dict[str, Any]], dict[str, list[float]], dict[str, set[str]]]:
    """The requests of one process, the last size it gives each of its nodes, and what it writes."""
    requests: list[dict[str, Any]] = []
    last: dict[str, list[float]] = {}
    names: dict[str, set[str]] = {}
    base = {"project_path": str(project)}
    for i in range(REQUESTS):
        kind = i % 5
        if kind in (0, 1):
            node = f"{who}{len(last)}"
            size = [float(i + 1), 1.0 if who == "A" else 2.0, 0.5]
            request = {**base, "op": "shape_create", "shape_type": "BoxShape3D",
                       "shape_params": {"size": size}, "scene_path": "shared.tscn", "node_path": node}
            if kind == 1:
                request["save_path"] = f"shapes/{node}.tres"
            last[node] = size
        elif kind in (2, 3):
            path = f"materials/shared_{i % MATERIALS}.tres"
            name = f"{who} {i}"
            names.setdefault(path, set()).add(name)
            request = {**base, "op": "material_create", "material_type": "StandardMaterial3D",
                       "resource_path": path, "properties": {"resource_name": name, "roughness": 0.5}}
        else:
            path = "shared.tscn" if i % 2 else f"materials/shared_{i % MATERIALS}.tres"
            request = {**base, "op": "resource_read", "resource_path": path}
        requests.append({**request, "id": f"{who}{i}"})
    return requests, last, names


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_two_processes_editing_one_scene_lose_no_update(godot_bin: str, project: Path, tmp_path: Path) -> None:
    (project / "shared.tscn").write_text(shared_scene())
    plans = {who: batch(project, who) for who in "AB"}
    runs = {}
    for who, jobs in (("A", "1"), ("B", "2")):
        source = tmp_path / f"{who}.jsonl"
        source.write_text("".join(json.dumps(r) + "\n" for r in plans[who][0]))
        runs[who] = subprocess.Popen(
            [sys.executable, "-m", "gdres", "--godot", godot_bin, "batch", "--jobs", jobs, str(source)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
    for who, run in runs.items():
        out, err = run.communicate(timeout=240)
        replies = [json.loads(line) for line in out.decode().splitlines()]
        assert [r["id"] for r in replies] == [r["id"] for r in plans[who][0]]
        failures = [r for r in replies if r["result"] != "ok" and r["error"]["code"] != "not_found"]
        assert failures == [], failures[:3]
        assert "Traceback" not in err.decode()

    check = tmp_path / "check_scene.gd"
    check.write_text(CHECK_SCENE)
    done = subprocess.run([godot_bin, "--headless", "--path", str(project), "-s", str(check)],
                          capture_output=True, timeout=60)
    line = next(text for text in done.stdout.decode().splitlines() if text.startswith("SHAPES "))
    shapes = json.loads(line.removeprefix("SHAPES "))
    expected = {node: size for who in "AB" for node, size in plans[who][1].items()}
    assert shapes == expected

    with Bridge(godot_bin) as bridge:
        for request in plans["A"][0] + plans["B"][0]:
            if "save_path" in request:
                saved = bridge.run({"op": "resource_read", "project_path": str(project),
                                    "resource_path": request["save_path"]})
                assert saved["properties"] == request["shape_params"], saved
        for path in {p for who in "AB" for p in plans[who][2]}:
            reply = bridge.run({"op": "resource_read", "project_path": str(project), "resource_path": path})
            assert reply["result"] == "ok", reply
            written = plans["A"][2].get(path, set()) | plans["B"][2].get(path, set())
            assert reply["properties"]["resource_name"] in written

    leftovers = [p for p in project.rglob("*") if ".tmp." in p.name or p.suffix == ".lock"]
    assert leftovers == []
    assert any(lock_dir().glob("*.lock"))


def test_node_given_an_embedded_then_a_saved_shape_leaves_a_loadable_scene(bridge: Bridge, project: Path) -> None:
    # Found by the test above: the new ext_resource line and the removal of the orphaned
    # sub_resource start at one offset, and applying them in the wrong order cut the scene.
    (project / "shared.tscn").write_text(shared_scene())
    base = {"op": "shape_create", "project_path": str(project), "shape_type": "BoxShape3D",
            "scene_path": "shared.tscn", "node_path": "A0"}
    assert bridge.run({**base, "shape_params": {"size": [1, 2, 3]}})["result"] == "ok"
    assert bridge.run({**base, "shape_params": {"size": [4, 5, 6]}, "save_path": "a0.tres"})["result"] == "ok"
    assert bridge.run({**base, "node_path": "A1", "shape_params": {"size": [7, 8, 9]}})["result"] == "ok"
    scene = bridge.run({"op": "resource_read", "project_path": str(project), "resource_path": "shared.tscn"})
    assert scene["result"] == "ok", scene
    text = (project / "shared.tscn").read_text()
    assert "Vector3(1, 2, 3)" not in text and "Vector3(7, 8, 9)" in text


def test_a_scene_edit_waits_for_a_locked_scene_no_longer_than_its_deadline(godot_bin: str, project: Path) -> None:
    target = project / "scenes" / "prop.tscn"
    before = target.read_bytes()
    request = {"op": "shape_create", "project_path": str(project), "shape_type": "BoxShape3D",
               "shape_params": {"size": [1, 2, 3]}, "scene_path": "scenes/prop.tscn", "node_path": "Col"}
    with Bridge(godot_bin, timeout=1) as bridge:
        assert bridge.run({"op": "resource_read", "project_path": str(project),
                           "resource_path": "materials/base.tres"})["result"] == "ok"
        held = locks.try_hold([target.resolve()])  # as another process would
        started = time.monotonic()
        reply = bridge.run(request)
        waited = time.monotonic() - started
        assert target.read_bytes() == before
        # A plain save replaces its file by a rename and takes no lock.
        saved = bridge.run({"op": "material_create", "project_path": str(project),
                            "material_type": "StandardMaterial3D", "resource_path": "scenes/prop.tres"})
        held.release()
        after = bridge.run(request)
    assert reply["error"]["code"] == "timeout" and "locked" in reply["error"]["message"]
    assert 1 <= waited < 3
    assert saved["result"] == "ok"
    assert after["result"] == "ok" and target.read_bytes() != before


def test_two_processes_updating_two_files_in_crossing_order_both_finish(godot_bin: str, project: Path) -> None:
    # Each bridge sends its first update (taking that file's lock while its engine starts), then
    # goes for the other file's lock, which the other bridge holds. A wait for a lock that stopped
    # the bridge's loop also stopped it from reading the reply that lets its own lock go: each
    # waited for the other until the deadline, and one update failed with `timeout`.
    files = ["crossed/a.tres", "crossed/b.tres"]
    base = {"project_path": str(project), "op": "resource_update"}
    with Bridge(godot_bin) as bridge:
        for path in files:
            made = bridge.run({"op": "material_create", "project_path": str(project),
                               "material_type": "StandardMaterial3D", "resource_path": path})
            assert made["result"] == "ok", made
    orders = {"first": files, "second": files[::-1]}
    replies: dict[str, list[dict[str, Any]]] = {}
    start = threading.Barrier(len(orders))

    def serve(who: str) -> None:
        with Bridge(godot_bin, jobs=2, timeout=8) as bridge:
            start.wait()
            replies[who] = list(bridge.batch([{**base, "resource_path": path, "properties": {"resource_name": who}}
                                              for path in orders[who]]))

    threads = [threading.Thread(target=serve, args=(who,)) for who in orders]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [reply["result"] for who in orders for reply in replies[who]] == ["ok"] * 4, replies


def _made_sharing_a_lock(bridge: Bridge, project: Path) -> tuple[Path, Path]:
    """Two materials made in the project's shared/ whose rewrites take the same lock file."""
    pair = _sharing_a_lock(project.resolve() / "shared")
    for path in pair:
        made = bridge.run({"op": "material_create", "project_path": str(project),
                           "material_type": "StandardMaterial3D", "resource_path": f"shared/{path.name}"})
        assert made["result"] == "ok", made
    return pair


def test_one_bridge_rewriting_two_files_that_share_a_lock_serves_both(godot_bin: str, project: Path) -> None:
    with Bridge(godot_bin, jobs=2, timeout=8) as bridge:
        a, b = _made_sharing_a_lock(bridge, project)
        replies = list(bridge.batch([{"op": "resource_update", "project_path": str(project),
                                      "resource_path": f"shared/{path.name}", "properties": {"resource_name": "x"}}
                                     for path in (a, b)]))
    assert [reply["result"] for reply in replies] == ["ok", "ok"], replies


def test_a_request_waiting_for_a_shared_lock_goes_before_the_next_one_of_the_holder(godot_bin: str,
                                                                                     project: Path) -> None:
    # One worker updates X again and again; another waits to update Y, whose lock file is X's. The
    # loop filled its slots in one order, so the first worker took the lock again each time it let
    # it go: Y waited for every update of X, and past the deadline when there were enough.
    with Bridge(godot_bin, jobs=2, timeout=30) as bridge:
        x, y = _made_sharing_a_lock(bridge, project)
        updates = [{"op": "resource_update", "project_path": str(project), "resource_path": f"shared/{path.name}",
                    "properties": {"resource_name": f"{path.stem}-{n}"}}
                   for n, path in enumerate([x, y] + [x] * 30)]
        replies = list(bridge.batch(updates))
    assert [reply["result"] for reply in replies] == ["ok"] * len(updates), replies
    assert y.stat().st_mtime_ns < x.stat().st_mtime_ns


def test_two_workers_making_the_same_new_folders_both_write(godot_bin: str, project: Path) -> None:
    # Each pair of requests writes two files into one chain of new folders, and the two workers
    # serve them about in step: the one that came second to a folder got ERR_ALREADY_EXISTS from
    # making it, and `save_failed` (several per run of this batch, in 5 of 5 runs).
    requests = [{"op": "material_create", "project_path": str(project), "material_type": "StandardMaterial3D",
                 "resource_path": f"made/c{i // 2}/a/b/c/d/e/f/g/m{i}.tres"} for i in range(600)]
    with Bridge(godot_bin, jobs=2) as bridge:
        replies = list(bridge.batch(requests))
    assert [reply["error"] for reply in replies if reply["result"] != "ok"] == []
    assert len(list((project / "made").rglob("*.tres"))) == 600
