"""etag and if_match against the real engine: a write refuses to overwrite a change made since its file
was read (conflict)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import file_etag, snapshot
from gdres import Bridge
from gdres.errors import Conflict
from unit.test_if_match import MATERIAL, update

SCENE = "scenes/level.tscn"


def someone_else_edits(path: Path) -> None:
    """A change made outside the bridge, as the editor's save would make it."""
    path.write_text(path.read_text().replace("[resource]\n", "[resource]\nresource_name = \"edited\"\n"))


def test_a_read_gives_the_etag_of_the_bytes_it_read(bridge: Bridge, project: Path) -> None:
    read = bridge.run({"op": "resource_read", "project_path": str(project), "resource_path": MATERIAL})
    assert read["etag"] == file_etag(project / MATERIAL)
    scene = bridge.run({"op": "scene_read", "project_path": str(project), "scene_path": SCENE})
    assert scene["etag"] == file_etag(project / SCENE)


def test_a_write_after_someone_elses_change_is_a_conflict_and_writes_nothing(bridge: Bridge, project: Path) -> None:
    etag = bridge.run({"op": "resource_read", "project_path": str(project), "resource_path": MATERIAL})["etag"]
    someone_else_edits(project / MATERIAL)
    before = snapshot(project)
    reply = bridge.run(update(project, 0.9, if_match=etag))
    assert reply["result"] == "error" and reply["error"]["code"] == "conflict", reply
    assert reply["error"]["field"] == "if_match"
    assert f"{MATERIAL} changed since it was read (it has etag {file_etag(project / MATERIAL)} now" in \
        reply["error"]["message"]
    assert snapshot(project) == before  # the other change is kept, and nothing else was written
    with pytest.raises(Conflict):
        bridge.resource_update(project, MATERIAL, properties={"roughness": 0.9}, if_match=etag)


def test_with_the_etag_of_the_file_as_it_is_the_write_succeeds_and_gives_the_next_one(
        bridge: Bridge, project: Path) -> None:
    etag = bridge.run({"op": "resource_read", "project_path": str(project), "resource_path": MATERIAL})["etag"]
    first = bridge.run(update(project, 0.9, if_match=etag))
    assert first["result"] == "ok" and first["etag"] == file_etag(project / MATERIAL) != etag
    stale = bridge.run(update(project, 0.1, if_match=etag))  # the first write changed it
    assert stale["error"]["code"] == "conflict"
    second = bridge.run(update(project, 0.1, if_match=first["etag"]))
    assert second["result"] == "ok" and "roughness = 0.1" in (project / MATERIAL).read_text()


def test_every_kind_of_write_is_guarded(bridge: Bridge, project: Path) -> None:
    root = str(project)
    wrong = "0" * 64
    writes: list[dict[str, Any]] = [
        {"op": "material_create", "material_type": "StandardMaterial3D", "resource_path": MATERIAL},
        {"op": "resource_create", "resource_type": "Gradient", "resource_path": MATERIAL},
        {"op": "style_box_create", "style_type": "StyleBoxFlat", "resource_path": MATERIAL},
        {"op": "resource_duplicate", "source_path": "materials/layered.tres", "dest_path": MATERIAL},
        {"op": "shape_create", "shape_type": "BoxShape3D", "save_path": MATERIAL},
        {"op": "shape_create", "shape_type": "BoxShape3D", "scene_path": "scenes/level.tscn",
         "node_path": "Trigger/TriggerShape"},
        {"op": "node_set_properties", "scene_path": SCENE, "node_path": "Floor", "properties": {"visible": False}},
        {"op": "node_add", "scene_path": SCENE, "parent_path": ".", "name": "Lamp", "type": "OmniLight3D"},
        {"op": "node_remove", "scene_path": SCENE, "node_path": "Hud"},
        update(project, 0.5),
    ]
    before = snapshot(project)
    for write in writes:
        for dry_run in (False, True):
            reply = bridge.run({**write, "project_path": root, "if_match": wrong, "dry_run": dry_run})
            assert reply["result"] == "error" and reply["error"]["code"] == "conflict", (write, reply)
    assert snapshot(project) == before


def test_a_file_that_is_gone_is_a_conflict_too(bridge: Bridge, project: Path) -> None:
    etag = file_etag(project / MATERIAL)
    (project / MATERIAL).unlink()
    reply = bridge.run({"op": "material_create", "project_path": str(project), "material_type": "StandardMaterial3D",
                        "resource_path": MATERIAL, "if_match": etag})
    assert reply["error"]["code"] == "conflict" and "is not there any more" in reply["error"]["message"]
    assert not (project / MATERIAL).exists()


def test_a_scene_edit_refuses_a_scene_changed_since_it_was_read(bridge: Bridge, project: Path) -> None:
    etag = bridge.run({"op": "scene_read", "project_path": str(project), "scene_path": SCENE})["etag"]
    edit = {"op": "node_set_properties", "project_path": str(project), "scene_path": SCENE,
            "node_path": "Floor", "properties": {"visible": False}}
    scene = project / SCENE
    scene.write_text(scene.read_text() + "\n")
    edited = scene.read_bytes()
    assert bridge.run({**edit, "if_match": etag})["error"]["code"] == "conflict"
    assert scene.read_bytes() == edited
    done = bridge.run({**edit, "if_match": file_etag(scene)})
    assert done["result"] == "ok" and done["etag"] == file_etag(scene)
