"""shape_create into scenes: the node gets the shape, the rest of the scene stays as it was, no script runs.

The fixture scene scenes/level.tscn has a root script whose static initialiser and `_init` each write a
marker file, groups, a signal connection, two instances of scenes/prop.tscn (one with editable
children), unique ids, a unique name, a 2D branch, and a multi-line string that looks like a section.
"""

from __future__ import annotations

import difflib
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import file_etag, file_uid, snapshot
from gdres import Bridge

SCENE = "scenes/level.tscn"
MARKERS = ("scenes/static_ran.txt", "scenes/init_ran.txt")

# Run by a separate engine after the edit: instantiates the scene (so its scripts run, on purpose)
# and prints what a user of the scene would see.
INSPECT = """extends SceneTree
func _initialize() -> void:
	var root: Node = (load("res://scenes/level.tscn") as PackedScene).instantiate()
	var nodes: Array = []
	for node: Node in root.find_children("*", "", true, false):
		var shape: Variant = node.get("shape")
		nodes.append({"path": str(root.get_path_to(node)), "class": node.get_class(), "groups": _groups(node),
			"shape": null if shape == null else {"class": shape.get_class(),
				"path": shape.resource_path.get_slice("::", 0)}})
	var connections: Array = []
	for connection: Dictionary in root.get_node("Trigger").get_signal_connection_list("body_entered"):
		connections.append(str(connection["callable"].get_method()))
	var unique: Node = root.get_node_or_null("%TriggerShape")
	print("INSPECT " + JSON.stringify({"nodes": nodes, "connections": connections, "unique": unique != null,
		"description": root.editor_description}))
	quit()

func _groups(node: Node) -> Array:
	var groups: Array = []
	for group: StringName in node.get_groups():
		if not str(group).begins_with("_"):
			groups.append(str(group))
	return groups
"""


def inspect(godot_bin: str, project: Path, tmp_path: Path) -> dict[str, Any]:
    """Instantiate the scene in a fresh engine and return what it holds."""
    script = tmp_path / "inspect.gd"
    script.write_text(INSPECT)
    done = subprocess.run([godot_bin, "--headless", "--path", str(project), "-s", str(script)],
                          capture_output=True, text=True, timeout=60)
    line = next(line for line in done.stdout.splitlines() if line.startswith("INSPECT "))
    result: dict[str, Any] = json.loads(line.removeprefix("INSPECT "))
    return result


def attach(bridge: Bridge, project: Path, **fields: Any) -> dict[str, Any]:
    return bridge.run({"op": "shape_create", "project_path": str(project), "scene_path": SCENE, **fields})


def changed_lines(before: str, after: str) -> tuple[list[str], list[str]]:
    """The lines only in `before` and the lines only in `after`."""
    removed, added = [], []
    for line in difflib.ndiff(before.splitlines(), after.splitlines()):
        if line.startswith("- "):
            removed.append(line[2:])
        elif line.startswith("+ "):
            added.append(line[2:])
    return removed, added


def test_attaching_a_saved_shape_references_the_file_and_changes_nothing_else(
    project: Path, bridge: Bridge, godot_bin: str, tmp_path: Path
) -> None:
    scene = project / SCENE
    before_text = scene.read_text()
    before_files = snapshot(project)

    reply = attach(bridge, project, shape_type="CapsuleShape3D", shape_params={"radius": 0.5, "height": 3},
                   save_path="shapes/trigger.tres", node_path="Trigger/TriggerShape")

    assert reply == {"op": "shape_create", "shape_type": "CapsuleShape3D", "type": "CapsuleShape3D",
                     "save_path": "shapes/trigger.tres",
                     "uid": file_uid(project / "shapes/trigger.tres"), "scene_path": SCENE,
                     "node_path": "Trigger/TriggerShape", "etag": file_etag(project / SCENE), "result": "ok"}
    for marker in MARKERS:
        assert not (project / marker).exists(), f"a scene script ran while editing: {marker}"
    after_files = snapshot(project)
    assert set(after_files) == set(before_files) | {"shapes/trigger.tres"}
    assert {k for k in before_files if before_files[k] != after_files[k]} == {SCENE}

    uid = re.search(r'uid="(uid://[^"]+)"', (project / "shapes/trigger.tres").read_text())
    assert uid is not None
    after_text = scene.read_text()
    removed, added = changed_lines(before_text, after_text)
    # Only the header's resource count changes; one reference and one assignment are added.
    assert removed == ['[gd_scene load_steps=4 format=3 uid="uid://blevelfixture01"]']
    ext = re.fullmatch(r'\[ext_resource type="CapsuleShape3D" uid="(.+)" path="res://shapes/trigger.tres" '
                       r'id="(3_[a-z0-9]{5})"\]', added[1])
    assert added[0] == '[gd_scene load_steps=5 format=3 uid="uid://blevelfixture01"]'
    assert ext is not None and ext.group(1) == uid.group(1)
    assert added[2:] == [f'shape = ExtResource("{ext.group(2)}")']
    assert "CapsuleShape3D" not in after_text.split("[node", 1)[0].split("[sub_resource", 1)[-1]

    seen = inspect(godot_bin, project, tmp_path)
    shapes = {n["path"]: n["shape"] for n in seen["nodes"]}
    assert shapes["Trigger/TriggerShape"] == {"class": "CapsuleShape3D", "path": "res://shapes/trigger.tres"}
    assert shapes["Floor/FloorShape"] == {"class": "BoxShape3D", "path": "res://scenes/level.tscn"}
    assert shapes["Crate/Col"] == shapes["Boulder/Col"] == {"class": "SphereShape3D",
                                                              "path": "res://scenes/prop.tscn"}
    assert [n["path"] for n in seen["nodes"]] == ["Floor", "Floor/FloorShape", "Trigger", "Trigger/TriggerShape",
                                                  "Crate", "Crate/Col", "Boulder", "Boulder/Col", "Hud",
                                                  "Hud/HudShape"]
    assert next(n for n in seen["nodes"] if n["path"] == "Floor")["groups"] == ["ground", "static"]
    assert seen["connections"] == ["_on_body_entered"]
    assert seen["unique"] is True
    assert "[node name=\"Fake\"" in seen["description"]
    # The check above instantiated the scene: the markers prove its scripts do run when loaded.
    assert all((project / marker).exists() for marker in MARKERS)


def test_an_embedded_shape_replaces_the_old_one(project: Path, bridge: Bridge) -> None:
    before_text = (project / SCENE).read_text()
    reply = attach(bridge, project, shape_type="BoxShape3D", shape_params={"size": [1, 2, 3]},
                   node_path="Floor/FloorShape")
    assert reply["result"] == "ok", reply
    removed, added = changed_lines(before_text, (project / SCENE).read_text())
    assert removed == ['[sub_resource type="BoxShape3D" id="BoxShape3D_old01"]', "size = Vector3(4, 1, 4)",
                       'shape = SubResource("BoxShape3D_old01")']
    new_id = re.fullmatch(r'\[sub_resource type="BoxShape3D" id="(BoxShape3D_[a-z0-9]{5})"\]', added[0])
    assert new_id is not None
    assert added[1:] == ["size = Vector3(1, 2, 3)", f'shape = SubResource("{new_id.group(1)}")']
    assert not any((project / m).exists() for m in MARKERS)


def test_a_2d_shape_goes_to_a_2d_node_inside_a_3d_scene(project: Path, bridge: Bridge) -> None:
    reply = attach(bridge, project, shape_type="CircleShape2D", shape_params={"radius": 3},
                   node_path="Hud/HudShape")
    assert reply["result"] == "ok", reply
    assert "radius = 3.0" in (project / SCENE).read_text()


def test_a_child_of_an_editable_instance_gets_an_override(project: Path, bridge: Bridge) -> None:
    prop_before = (project / "scenes/prop.tscn").read_bytes()
    reply = attach(bridge, project, shape_type="SphereShape3D", shape_params={"radius": 2},
                   node_path="Crate/Col")
    assert reply["result"] == "ok", reply
    text = (project / SCENE).read_text()
    override = text.split('[node name="Col" parent="Crate"]\n', 1)[1]
    assert override.startswith('shape = SubResource("SphereShape3D_')
    assert text.index('[node name="Col" parent="Crate"]') < text.index("[connection")
    assert (project / "scenes/prop.tscn").read_bytes() == prop_before


@pytest.mark.parametrize(
    ("fields", "code", "words"),
    [
        ({"shape_type": "BoxShape3D", "node_path": "Hud/HudShape"}, "incompatible_node", "CollisionShape2D"),
        ({"shape_type": "CircleShape2D", "node_path": "Floor/FloorShape"}, "incompatible_node", "CollisionShape3D"),
        ({"shape_type": "BoxShape3D", "node_path": "Trigger"}, "incompatible_node", "Area3D"),
        ({"shape_type": "BoxShape3D", "node_path": "Floor/Missing"}, "node_not_found", "Floor/FloorShape"),
        # A node that exists only inside a multi-line string is not a node.
        ({"shape_type": "BoxShape3D", "node_path": "Fake"}, "node_not_found", "Fake"),
        ({"shape_type": "BoxShape3D", "node_path": "Floor/FloorShape", "scene_path": "scenes/none.tscn"},
         "not_found", "none.tscn"),
        ({"shape_type": "BoxShape3D", "node_path": "Floor/FloorShape", "scene_path": "scenes/level.tres"},
         "invalid_path", "tscn"),
        ({"shape_type": "BoxShape3D", "scene_path": SCENE}, "invalid_request", "node_path"),
    ],
)
def test_a_refused_attachment_writes_neither_file(
    fields: dict[str, Any], code: str, words: str, project: Path, bridge: Bridge
) -> None:
    before = snapshot(project)
    reply = attach(bridge, project, save_path="shapes/s.tres", **fields)
    assert reply["result"] == "error"
    assert reply["error"]["code"] == code, reply
    assert words in reply["error"]["message"]
    assert snapshot(project) == before


def test_the_same_saved_shape_in_two_nodes_is_one_shared_file(project: Path, bridge: Bridge) -> None:
    for node in ("Trigger/TriggerShape", "Floor/FloorShape"):
        reply = attach(bridge, project, shape_type="BoxShape3D", shape_params={"size": [1, 1, 1]},
                       save_path="shapes/shared.tres", node_path=node)
        assert reply["result"] == "ok", reply
    text = (project / SCENE).read_text()
    assert text.count('path="res://shapes/shared.tres"') == 1
    ext_id = re.search(r'path="res://shapes/shared.tres" id="([^"]+)"', text)
    assert ext_id is not None
    assert text.count(f'shape = ExtResource("{ext_id.group(1)}")') == 2
    assert "BoxShape3D_old01" not in text


def test_when_the_shape_cannot_be_saved_the_scene_is_not_touched(project: Path, bridge: Bridge) -> None:
    before = snapshot(project)
    # The save path's folder is an existing file, so the engine cannot create it.
    reply = attach(bridge, project, shape_type="BoxShape3D", save_path="materials/base.tres/box.tres",
                   node_path="Floor/FloorShape")
    assert reply["error"]["code"] == "save_failed", reply
    assert reply["error"]["field"] == "save_path"
    assert snapshot(project) == before


@pytest.mark.parametrize("shape_existed", [False, True], ids=["new shape file", "shape file replaced"])
def test_when_the_scene_cannot_be_written_the_shape_is_not_saved_either(
    project: Path, bridge: Bridge, shape_existed: bool
) -> None:
    if shape_existed:
        (project / "shapes").mkdir()
        (project / "shapes" / "s.tres").write_text('[gd_resource type="BoxShape3D" format=3]\n\n[resource]\n')
    (project / SCENE).chmod(0o444)  # refused by its mode, also for root
    before = snapshot(project)
    reply = attach(bridge, project, shape_type="BoxShape3D", shape_params={"size": [2, 2, 2]},
                   save_path="shapes/s.tres", node_path="Floor/FloorShape")
    assert reply["result"] == "error" and reply["error"]["code"] == "save_failed", reply
    assert reply["error"]["field"] == "scene_path"
    assert snapshot(project) == before
    assert (project / "shapes").exists() == shape_existed  # a folder made for the shape goes too
