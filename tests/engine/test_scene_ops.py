"""scene_read, node_set_properties, node_add and node_remove on the fixture's scenes.

Each edit is checked twice, from outside the bridge: the scene's text changes only in the lines the
edit must change (a line diff), and a separate engine, loading and instantiating the written scene
(its scripts run then, on purpose), sees exactly the change asked for. No edit runs the scene's
scripts: their marker files stay absent until the checking engine runs them.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, changed_scripts, file_etag, snapshot
from engine.test_scenes import MARKERS, SCENE, changed_lines
from gdres import Bridge

pytestmark = pytest.mark.engine

MESH_SCENE = "scenes/mesh.tscn"
# A scene as the 4.6 editor writes one: a MeshInstance3D with a BoxMesh, whose surface slot exists
# only once the mesh is set.
MESH_TEXT = """[gd_scene format=3 uid="uid://bmeshfixture01"]

[sub_resource type="BoxMesh" id="BoxMesh_abcde"]

[node name="Room" type="Node3D" unique_id=11]

[node name="Wall" type="MeshInstance3D" parent="." unique_id=22]
mesh = SubResource("BoxMesh_abcde")

[node name="Light" type="OmniLight3D" parent="." unique_id=33]
"""
INHERITED = "scenes/inherited.tscn"
INHERITED_TEXT = """[gd_scene format=3 uid="uid://binheritedfix1"]

[ext_resource type="PackedScene" uid="uid://bpropfixture01" path="res://scenes/prop.tscn" id="1_prop"]

[node name="Prop" unique_id=1111 instance=ExtResource("1_prop")]
"""

# Run by a separate engine: instantiates a scene and prints each node's class and asked properties.
VIEW = """extends SceneTree
func _initialize() -> void:
	var args: PackedStringArray = OS.get_cmdline_user_args()
	var root: Node = (load(args[0]) as PackedScene).instantiate()
	var out: Array = []
	for node: Node in [root] + root.find_children("*", "", true, false):
		var seen: Dictionary = {"class": node.get_class()}
		for name: String in args.slice(1):
			var value: Variant = node.get(name)
			if value is Resource:
				seen[name] = {"class": value.get_class(), "path": value.resource_path.get_slice("::", 0)}
			elif value != null:
				seen[name] = var_to_str(value)
		out.append([str(root.get_path_to(node)), seen])
	print("VIEW " + JSON.stringify(out))
	quit()
"""


def view(godot_bin: str, project: Path, tmp_path: Path, scene: str, *names: str) -> dict[str, Any]:
    """Each node of `scene` as a fresh engine instantiates it: its class and the properties `names`."""
    script = tmp_path / "view.gd"
    script.write_text(VIEW)
    done = subprocess.run([godot_bin, "--headless", "--path", str(project), "-s", str(script), "--",
                           f"res://{scene}", *names], capture_output=True, text=True, timeout=60)
    line = next(line for line in done.stdout.splitlines() if line.startswith("VIEW "))
    result: dict[str, Any] = dict(json.loads(line.removeprefix("VIEW ")))
    return result


@pytest.fixture
def scenes(project: Path) -> Path:
    (project / MESH_SCENE).write_text(MESH_TEXT)
    (project / INHERITED).write_text(INHERITED_TEXT)
    return project


def run(bridge: Bridge, project: Path, op: str, **fields: Any) -> dict[str, Any]:
    return dict(bridge.run({"op": op, "project_path": str(project), **fields}))


def no_script_ran(project: Path) -> bool:
    return not any((project / marker).exists() for marker in MARKERS)


# ----- scene_read -------------------------------------------------------------------------------


def test_scene_read_gives_the_nodes_as_the_file_stores_them_without_running_scripts(
    scenes: Path, bridge: Bridge
) -> None:
    reply = run(bridge, scenes, "scene_read", scene_path=SCENE)
    assert reply["result"] == "ok", reply
    assert reply["uid"] == "uid://blevelfixture01"
    nodes = {node["path"]: node for node in reply["nodes"]}
    assert list(nodes) == [".", "Floor", "Floor/FloorShape", "Trigger", "Trigger/TriggerShape", "Crate",
                           "Boulder", "Hud", "Hud/HudShape"]
    assert nodes["."]["script"] == "res://scenes/marker.gd"
    assert nodes["Floor"]["groups"] == ["ground", "static"]
    assert nodes["Floor/FloorShape"]["properties"]["shape"]["type"] == "BoxShape3D"
    assert nodes["Floor/FloorShape"]["properties"]["shape"]["properties"] == {"size": [4, 1, 4]}
    assert nodes["Crate"] | {"properties": None} == {
        "path": "Crate", "name": "Crate", "type": "StaticBody3D", "instance": "res://scenes/prop.tscn",
        "script": None, "groups": [], "properties": None}
    assert nodes["Trigger"]["properties"] == {"monitoring": False}
    assert reply["connections"] == [{"signal": "body_entered", "from": "Trigger", "to": ".",
                                     "method": "_on_body_entered", "flags": 2}]
    assert no_script_ran(scenes)


def test_scene_read_of_one_node_gives_it_and_what_lies_below(scenes: Path, bridge: Bridge) -> None:
    reply = run(bridge, scenes, "scene_read", scene_path=SCENE, node_path="Trigger")
    assert [node["path"] for node in reply["nodes"]] == ["Trigger", "Trigger/TriggerShape"]
    assert len(reply["connections"]) == 1
    missing = run(bridge, scenes, "scene_read", scene_path=SCENE, node_path="Trigger/Shape")
    assert missing["error"]["code"] == "node_not_found"
    assert "Trigger/TriggerShape" in missing["error"]["message"]


def test_scene_read_of_an_inherited_scene_types_its_root_by_the_base(scenes: Path, bridge: Bridge) -> None:
    reply = run(bridge, scenes, "scene_read", scene_path=INHERITED)
    assert reply["nodes"] == [{"path": ".", "name": "Prop", "type": "StaticBody3D",
                               "instance": "res://scenes/prop.tscn", "script": None, "groups": [],
                               "properties": {}}]


# ----- node_set_properties ----------------------------------------------------------------------


def test_the_specification_usage_a_duplicated_material_goes_on_a_mesh_node(
    scenes: Path, bridge: Bridge, godot_bin: str, tmp_path: Path
) -> None:
    copy = run(bridge, scenes, "resource_duplicate", source_path="materials/base.tres",
               dest_path="materials/red.tres", property_overrides={"albedo_color": "#ff0000"})
    assert copy["result"] == "ok", copy
    before = (scenes / MESH_SCENE).read_text()
    reply = run(bridge, scenes, "node_set_properties", scene_path=MESH_SCENE, node_path="Wall",
                properties={"surface_material_override/0": "materials/red.tres"})
    assert reply == {"op": "node_set_properties", "scene_path": MESH_SCENE, "node_path": "Wall",
                     "type": "MeshInstance3D", "changed": ["surface_material_override/0"],
                     "etag": file_etag(scenes / MESH_SCENE), "result": "ok"}
    removed, added = changed_lines(before, (scenes / MESH_SCENE).read_text())
    added = [line for line in added if line]
    assert removed == []
    assert added[0].startswith('[ext_resource type="StandardMaterial3D" uid="' + copy["uid"]
                               + '" path="res://materials/red.tres" id="1_')
    ext_id = added[0].rsplit(' id="', 1)[1].rstrip('"]')
    assert added[1:] == [f'surface_material_override/0 = ExtResource("{ext_id}")']
    seen = view(godot_bin, scenes, tmp_path, MESH_SCENE, "surface_material_override/0")
    assert seen["Wall"]["surface_material_override/0"] == {"class": "StandardMaterial3D",
                                                            "path": "res://materials/red.tres"}


def test_setting_node_properties_changes_only_their_lines(
    scenes: Path, bridge: Bridge, godot_bin: str, tmp_path: Path
) -> None:
    before_text = (scenes / SCENE).read_text()
    before_files = snapshot(scenes)
    reply = run(bridge, scenes, "node_set_properties", scene_path=SCENE, node_path="Trigger",
                properties={"monitoring": True, "position": [1, 2, 3], "priority": 3})
    assert reply["changed"] == ["transform", "monitoring", "priority"], reply
    removed, added = changed_lines(before_text, (scenes / SCENE).read_text())
    # monitoring back to its default: the line goes, as the editor leaves it out.
    assert removed == ["monitoring = false"]
    assert added == ["transform = Transform3D(1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 2, 3)", "priority = 3"]
    assert {k for k, v in snapshot(scenes).items() if before_files.get(k) != v} == {SCENE}
    assert no_script_ran(scenes)
    seen = view(godot_bin, scenes, tmp_path, SCENE, "position", "monitoring", "priority")
    assert seen["Trigger"] | {"class": None} == {"class": None, "position": "Vector3(1, 2, 3)",
                                                 "monitoring": "true", "priority": "3"}
    assert seen["Floor"]["position"] == "Vector3(0, -1, 0)"


def test_a_new_embedded_resource_replaces_the_old_and_the_unused_one_goes(scenes: Path, bridge: Bridge) -> None:
    before = (scenes / SCENE).read_text()
    reply = run(bridge, scenes, "node_set_properties", scene_path=SCENE, node_path="Floor/FloorShape",
                properties={"shape": {"type": "SphereShape3D", "properties": {"radius": 2}}})
    assert reply["changed"] == ["shape"], reply
    removed, added = changed_lines(before, (scenes / SCENE).read_text())
    assert removed == ['[sub_resource type="BoxShape3D" id="BoxShape3D_old01"]', "size = Vector3(4, 1, 4)",
                       'shape = SubResource("BoxShape3D_old01")']
    sub_id = added[0].rsplit(' id="', 1)[1].rstrip('"]')
    assert added == [f'[sub_resource type="SphereShape3D" id="{sub_id}"]', "radius = 2.0",
                     f'shape = SubResource("{sub_id}")']


def test_null_puts_a_property_back_to_its_default_and_its_line_goes(scenes: Path, bridge: Bridge) -> None:
    before = (scenes / SCENE).read_text()
    reply = run(bridge, scenes, "node_set_properties", scene_path=SCENE, node_path="Floor/FloorShape",
                properties={"shape": None})
    assert reply["changed"] == ["shape"], reply
    removed, added = changed_lines(before, (scenes / SCENE).read_text())
    removed = [line for line in removed if line]
    # The unused sub-resource goes with its line, and the header's resource count (of a scene saved
    # before Godot 4.6) follows.
    assert removed == ['[gd_scene load_steps=4 format=3 uid="uid://blevelfixture01"]',
                       '[sub_resource type="BoxShape3D" id="BoxShape3D_old01"]', "size = Vector3(4, 1, 4)",
                       'shape = SubResource("BoxShape3D_old01")']
    assert added == ['[gd_scene load_steps=3 format=3 uid="uid://blevelfixture01"]']


def test_a_node_inside_an_instance_gets_an_override_and_its_instance_becomes_editable(
    scenes: Path, bridge: Bridge, godot_bin: str, tmp_path: Path
) -> None:
    before = (scenes / SCENE).read_text()
    reply = run(bridge, scenes, "node_set_properties", scene_path=SCENE, node_path="Boulder/Col",
                properties={"disabled": True})
    assert reply["made_editable"] == ["Boulder"], reply
    removed, added = changed_lines(before, (scenes / SCENE).read_text())
    assert removed == []
    assert [line for line in added if line] == ['[node name="Col" parent="Boulder"]', "disabled = true",
                                                '[editable path="Boulder"]']
    seen = view(godot_bin, scenes, tmp_path, SCENE, "disabled")
    assert seen["Boulder/Col"]["disabled"] == "true"
    assert seen["Crate/Col"]["disabled"] == "false"


def test_a_value_equal_to_the_instanced_scenes_stores_nothing(scenes: Path, bridge: Bridge) -> None:
    before = snapshot(scenes)
    reply = run(bridge, scenes, "node_set_properties", scene_path=INHERITED, node_path="Col",
                properties={"disabled": False})
    assert reply["changed"] == [], reply
    assert snapshot(scenes) == before


def test_an_inherited_scenes_base_node_is_overridden(scenes: Path, bridge: Bridge, godot_bin: str,
                                                     tmp_path: Path) -> None:
    reply = run(bridge, scenes, "node_set_properties", scene_path=INHERITED, node_path="Col",
                properties={"disabled": True})
    assert reply["changed"] == ["disabled"] and "made_editable" not in reply, reply
    assert (scenes / INHERITED).read_text() == INHERITED_TEXT + '\n[node name="Col" parent="."]\ndisabled = true\n'
    assert view(godot_bin, scenes, tmp_path, INHERITED, "disabled")["Col"]["disabled"] == "true"


@pytest.mark.parametrize(
    ("node_path", "properties", "code", "words"),
    [
        ("Wall", {"material_override": {"type": "BoxShape3D"}}, "invalid_value", "Material"),
        ("Wall", {"material_overide": "materials/base.tres"}, "unknown_property", "material_override"),
        ("Wall", {"mesh": "materials/base.tres"}, "invalid_value", "Mesh"),
        ("Wall", {"script": None}, "forbidden_property", "script"),
        ("Wall", {"script": "materials/base.tres"}, "forbidden_property", "script"),
        ("Wal", {"visible": False}, "node_not_found", "Wall"),
        ("Light", {"light_energy": "bright"}, "invalid_value", "light_energy"),
    ],
)
def test_a_refused_node_edit_writes_nothing(
    node_path: str, properties: dict[str, Any], code: str, words: str, scenes: Path, bridge: Bridge
) -> None:
    before = snapshot(scenes)
    reply = run(bridge, scenes, "node_set_properties", scene_path=MESH_SCENE, node_path=node_path,
                properties=properties)
    assert reply["result"] == "error", reply
    assert reply["error"]["code"] == code, reply
    assert words in reply["error"]["message"]
    assert snapshot(scenes) == before


def test_a_2d_shape_on_a_3d_collision_node_is_refused(scenes: Path, bridge: Bridge) -> None:
    reply = run(bridge, scenes, "node_set_properties", scene_path=SCENE, node_path="Floor/FloorShape",
                properties={"shape": {"type": "CircleShape2D"}})
    assert reply["error"]["code"] == "invalid_value", reply
    assert "Shape3D" in reply["error"]["message"]


def test_a_scripts_property_needs_allow_scripts(scenes: Path, bridge: Bridge) -> None:
    reply = run(bridge, scenes, "node_set_properties", scene_path=SCENE, node_path=".",
                properties={"speed": 3})
    assert reply["error"]["code"] == "unsafe_resource", reply
    assert "allow_scripts" in reply["error"]["message"] and "res://scenes/marker.gd" in reply["error"]["message"]
    assert no_script_ran(scenes)


def test_a_dry_run_diff_is_the_real_runs(scenes: Path, bridge: Bridge) -> None:
    fields = {"scene_path": SCENE, "node_path": "Floor/FloorShape",
              "properties": {"shape": {"type": "SphereShape3D", "properties": {"radius": 2}}}}
    before = snapshot(scenes)
    dry = run(bridge, scenes, "node_set_properties", dry_run=True, **fields)
    assert snapshot(scenes) == before
    real_before = (scenes / SCENE).read_text()
    real = run(bridge, scenes, "node_set_properties", **fields)
    assert real["result"] == "ok"
    (diff,) = [change["diff"] for change in dry["changes"]]
    removed, added = changed_lines(real_before, (scenes / SCENE).read_text())
    assert [line[1:] for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")] == added
    assert [line[1:] for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")] == removed


# ----- node_add ---------------------------------------------------------------------------------


def test_a_node_added_is_its_parents_last_child_with_only_its_changed_values(
    scenes: Path, bridge: Bridge, godot_bin: str, tmp_path: Path
) -> None:
    before = (scenes / SCENE).read_text()
    reply = run(bridge, scenes, "node_add", scene_path=SCENE, parent_path="Floor", name="Lamp",
                type="OmniLight3D", properties={"light_energy": 2, "omni_range": 7, "shadow_enabled": False})
    assert reply == {"op": "node_add", "scene_path": SCENE, "node_path": "Floor/Lamp", "type": "OmniLight3D",
                     "etag": file_etag(scenes / SCENE), "result": "ok"}
    text = (scenes / SCENE).read_text()
    removed, added = changed_lines(before, text)
    assert removed == []
    assert added[0].startswith('[node name="Lamp" type="OmniLight3D" parent="Floor" unique_id=')
    # shadow_enabled false is the class default: no line, as the editor writes it.
    assert added[1:] == ["light_energy = 2.0", "omni_range = 7.0", ""]
    assert text.index("name=\"Lamp\"") < text.index("name=\"Trigger\"")
    assert no_script_ran(scenes)
    seen = view(godot_bin, scenes, tmp_path, SCENE, "light_energy")
    assert seen["Floor/Lamp"] == {"class": "OmniLight3D", "light_energy": "2.0"}


def test_an_instance_added_at_an_index_names_its_scene(scenes: Path, bridge: Bridge, godot_bin: str,
                                                       tmp_path: Path) -> None:
    reply = run(bridge, scenes, "node_add", scene_path=MESH_SCENE, parent_path=".", name="Rock",
                instance="scenes/prop.tscn", index=1, properties={"position": [0, 1, 0]})
    assert reply["node_path"] == "Rock", reply
    seen = view(godot_bin, scenes, tmp_path, MESH_SCENE, "position")
    assert list(seen) == [".", "Wall", "Rock", "Rock/Col", "Light"]
    assert seen["Rock"] == {"class": "StaticBody3D", "position": "Vector3(0, 1, 0)"}
    text = (scenes / MESH_SCENE).read_text()
    assert '[ext_resource type="PackedScene" uid="uid://bpropfixture01" path="res://scenes/prop.tscn"' in text


@pytest.mark.parametrize(
    ("fields", "code", "words"),
    [
        ({"parent_path": ".", "name": "Wall", "type": "Node3D"}, "invalid_value", "taken"),
        ({"parent_path": ".", "name": "A/B", "type": "Node3D"}, "invalid_value", "name"),
        ({"parent_path": ".", "name": "X", "type": "Nod3D"}, "invalid_type", "Node3D"),
        ({"parent_path": ".", "name": "X", "type": "BoxMesh"}, "invalid_type", "BoxMesh"),
        ({"parent_path": "Nowhere", "name": "X", "type": "Node3D"}, "node_not_found", "Wall"),
        ({"parent_path": ".", "name": "X", "instance": "scenes/mesh.tscn"}, "invalid_path", "same file"),
        ({"parent_path": ".", "name": "X"}, "invalid_request", "type or an instance"),
    ],
)
def test_a_refused_node_add_writes_nothing(fields: dict[str, Any], code: str, words: str, scenes: Path,
                                          bridge: Bridge) -> None:
    before = snapshot(scenes)
    reply = run(bridge, scenes, "node_add", scene_path=MESH_SCENE, **fields)
    assert reply["result"] == "error", reply
    assert reply["error"]["code"] == code, reply
    assert words in reply["error"]["message"]
    assert snapshot(scenes) == before


# ----- node_remove ------------------------------------------------------------------------------


def test_removing_a_node_takes_its_subtree_connections_and_unused_resources(
    scenes: Path, bridge: Bridge, godot_bin: str, tmp_path: Path
) -> None:
    before = (scenes / SCENE).read_text()
    reply = run(bridge, scenes, "node_remove", scene_path=SCENE, node_path="Trigger")
    assert reply["removed"] == ["Trigger", "Trigger/TriggerShape"], reply
    removed, added = changed_lines(before, (scenes / SCENE).read_text())
    assert added == []
    assert removed == ['[node name="Trigger" type="Area3D" parent="." unique_id=400]', "monitoring = false", "",
                       '[node name="TriggerShape" type="CollisionShape3D" parent="Trigger" unique_id=500]',
                       "unique_name_in_owner = true", "",
                       '[connection signal="body_entered" from="Trigger" to="." method="_on_body_entered"]', ""]
    seen = view(godot_bin, scenes, tmp_path, SCENE)
    assert "Trigger" not in seen and "Floor/FloorShape" in seen

    reply = run(bridge, scenes, "node_remove", scene_path=SCENE, node_path="Floor")
    text = (scenes / SCENE).read_text()
    assert "BoxShape3D_old01" not in text and "load_steps=3" in text


def test_removing_an_instance_takes_its_overrides_and_editable_mark(scenes: Path, bridge: Bridge) -> None:
    assert run(bridge, scenes, "node_set_properties", scene_path=SCENE, node_path="Crate/Col",
               properties={"disabled": True})["result"] == "ok"
    reply = run(bridge, scenes, "node_remove", scene_path=SCENE, node_path="Crate")
    assert reply["removed"] == ["Crate", "Crate/Col"], reply
    text = (scenes / SCENE).read_text()
    assert 'parent="Crate"' not in text and '[editable path="Crate"]' not in text
    assert 'ExtResource("2_prop")' in text  # Boulder still instances the scene


@pytest.mark.parametrize(("node_path", "words"), [(".", "root"), ("Crate/Col", "instances"),
                                                  ("Nope", "not a node")])
def test_a_refused_node_remove_writes_nothing(node_path: str, words: str, scenes: Path, bridge: Bridge) -> None:
    before = snapshot(scenes)
    reply = run(bridge, scenes, "node_remove", scene_path=SCENE, node_path=node_path)
    assert reply["result"] == "error", reply
    assert words in reply["error"]["message"]
    assert snapshot(scenes) == before


# ----- what the scene operations load (red-team findings, each failed before its fix) -----------

EVIL = """@tool
extends {base}
static var _ran: bool = _mark("static")
static func _mark(what: String) -> bool:
	FileAccess.open("res://ran_" + what + ".txt", FileAccess.WRITE).store_string(what)
	return true
func _init() -> void:
	_mark("init")
"""


def test_scripts_on_nodes_sub_resources_and_custom_resources_never_run(project: Path, bridge: Bridge) -> None:
    (project / "evil_node.gd").write_text(EVIL.format(base="Node3D"))
    (project / "evil_res.gd").write_text(EVIL.format(base="Resource"))
    (project / "stats.tres").write_text('[gd_resource type="Resource" script_class="Stats" format=3]\n\n'
                                        '[ext_resource type="Script" path="res://evil_res.gd" id="1_s"]\n\n'
                                        '[resource]\nscript = ExtResource("1_s")\nhealth = 3\n')
    (project / "evil.tscn").write_text(
        '[gd_scene format=3]\n\n[ext_resource type="Script" path="res://evil_node.gd" id="1_n"]\n'
        '[ext_resource type="Script" path="res://evil_res.gd" id="2_r"]\n'
        '[ext_resource type="Resource" path="res://stats.tres" id="3_t"]\n\n'
        '[sub_resource type="Resource" id="Resource_a"]\nscript = ExtResource("2_r")\n\n'
        '[node name="Root" type="Node3D"]\nscript = ExtResource("1_n")\nmetadata/a = SubResource("Resource_a")\n'
        'metadata/b = ExtResource("3_t")\n')
    read = run(bridge, project, "scene_read", scene_path="evil.tscn")
    assert read["result"] == "ok", read
    assert read["nodes"][0]["script"] == "res://evil_node.gd"
    edit = run(bridge, project, "node_set_properties", scene_path="evil.tscn", node_path=".",
               properties={"visible": False})
    assert edit["changed"] == ["visible"], edit
    added = run(bridge, project, "node_add", scene_path=SCENE, parent_path=".", name="Evil", instance="evil.tscn")
    assert added["result"] == "ok", added
    assert not list(project.glob("ran_*.txt"))


def test_a_scene_naming_a_file_inline_is_not_read_with_stand_ins(project: Path, bridge: Bridge) -> None:
    # The engine loads Resource("...") with its cache reused, past the gate: a script cached there
    # would come back as the real one.
    (project / "evil_res.gd").write_text(EVIL.format(base="Resource"))
    (project / "inline.tscn").write_text('[gd_scene format=3]\n\n[sub_resource type="Resource" id="r1"]\n'
                                         'script = Resource("res://evil_res.gd")\n\n'
                                         '[node name="Root" type="Node3D"]\nmetadata/x = SubResource("r1")\n')
    reply = run(bridge, project, "scene_read", scene_path="inline.tscn")
    assert reply["error"]["code"] == "unsafe_resource", reply
    assert "inline" in reply["error"]["message"]
    assert not list(project.glob("ran_*.txt"))


def test_a_file_naming_one_outside_the_project_is_refused_before_it_loads(project: Path, bridge: Bridge) -> None:
    # Before: a load the engine served from its cache never reached the gate, and this read gave
    # back the source of the bridge's own script.
    own = REPO / "gdscript" / "job.gd"
    (project / "leak.tres").write_text('[gd_resource type="Resource" format=3]\n\n[resource]\n'
                                       f'metadata/z = Resource("{own}")\n')
    reply = run(bridge, project, "resource_read", resource_path="leak.tres")
    assert reply["error"]["code"] == "path_outside_project", reply
    assert "UNSAFE_RESOURCE" not in json.dumps(reply)


def test_typing_a_node_does_not_act_on_the_paths_it_stores(project: Path, godot_bin: str, tmp_path: Path) -> None:
    # A FileDialog changes the process's folder to the current_path set on it; the node that types
    # a request's values is made of stored properties only (current_path is not one).
    secret = tmp_path / "secret"
    secret.mkdir()
    (project / "dialog.tscn").write_text('[gd_scene format=3]\n\n[node name="Root" type="Node"]\n\n'
                                         '[node name="FD" type="FileDialog" parent="."]\naccess = 2\n'
                                         f'current_path = "{secret}/listme.txt"\n')
    log = project / ".godot" / "chdir.log"
    log.parent.mkdir(exist_ok=True)
    wrapper = tmp_path / "godot"
    wrapper.write_text(f'#!/bin/sh\nif ! : >>"{log}" 2>/dev/null; then exec "{godot_bin}" "$@"; fi\n'
                       f'exec strace -f -qq -e trace=chdir -o "{log}" -A -- "{godot_bin}" "$@"\n')
    wrapper.chmod(0o755)
    with Bridge(str(wrapper)) as traced:
        reply = run(traced, project, "node_set_properties", scene_path="dialog.tscn", node_path="FD",
                    properties={"title": "Open"})
    assert reply["changed"] == ["title"], reply
    assert "chdir(" in log.read_text()  # the trace saw the engine's own chdir calls
    assert str(secret) not in log.read_text()


# ----- the ways in that every operation has --------------------------------------------------------


def test_a_scene_named_by_its_uid_is_read_and_edited(scenes: Path, bridge: Bridge) -> None:
    read = run(bridge, scenes, "scene_read", scene_path="uid://blevelfixture01", node_path="Hud")
    assert [node["path"] for node in read["nodes"]] == ["Hud", "Hud/HudShape"], read
    edit = run(bridge, scenes, "node_set_properties", scene_path="uid://blevelfixture01", node_path="Hud",
               properties={"visible": False})
    assert edit["scene_path"] == "uid://blevelfixture01" and edit["changed"] == ["visible"], edit
    assert "visible = false" in (scenes / SCENE).read_text()


def test_a_binary_scene_is_refused_by_its_suffix(scenes: Path, bridge: Bridge) -> None:
    reply = run(bridge, scenes, "node_set_properties", scene_path="scenes/level.scn", node_path=".",
                properties={"visible": False})
    assert reply["error"]["code"] == "invalid_path", reply
    assert ".tscn" in reply["error"]["message"]


def test_an_atomic_batch_of_node_edits_keeps_all_or_none(scenes: Path, bridge: Bridge) -> None:
    before = snapshot(scenes)
    common = {"project_path": str(scenes), "scene_path": MESH_SCENE}
    replies = list(bridge.batch([
        {**common, "op": "node_add", "parent_path": ".", "name": "Lamp", "type": "OmniLight3D"},
        {**common, "op": "node_set_properties", "node_path": "Lamp", "properties": {"light_energy": 3}},
        {**common, "op": "node_remove", "node_path": "Nope"},
    ], atomic=True))
    assert [reply["error"]["code"] for reply in replies] == ["rolled_back", "rolled_back", "node_not_found"], replies
    assert snapshot(scenes) == before
    replies = list(bridge.batch([
        {**common, "op": "node_add", "parent_path": ".", "name": "Lamp", "type": "OmniLight3D"},
        {**common, "op": "node_set_properties", "node_path": "Lamp", "properties": {"light_energy": 3}},
    ], atomic=True))
    assert [reply["result"] for reply in replies] == ["ok", "ok"], replies
    assert "light_energy = 3.0" in (scenes / MESH_SCENE).read_text()


MAKE_GLB = """extends SceneTree
func _initialize() -> void:
	var root: Node3D = Node3D.new()
	root.name = "Box"
	var mesh: MeshInstance3D = MeshInstance3D.new()
	mesh.name = "Mesh"
	mesh.mesh = BoxMesh.new()
	root.add_child(mesh)
	mesh.owner = root
	var document: GLTFDocument = GLTFDocument.new()
	var state: GLTFState = GLTFState.new()
	document.append_from_scene(root, state)
	document.write_to_filesystem(state, "res://models/box.glb")
	quit()
"""


def test_an_imported_model_is_instanced_and_its_mesh_gets_a_material(
    scenes: Path, bridge: Bridge, godot_bin: str, tmp_path: Path
) -> None:
    # As a level instances its .glb models and overrides their meshes' materials (tps-demo does).
    (scenes / "models").mkdir()
    (tmp_path / "make_glb.gd").write_text(MAKE_GLB)
    subprocess.run([godot_bin, "--headless", "--path", str(scenes), "-s", str(tmp_path / "make_glb.gd")],
                   capture_output=True, timeout=60, check=True)
    added = run(bridge, scenes, "node_add", scene_path=MESH_SCENE, parent_path=".", name="Box",
                instance="models/box.glb")
    assert added["result"] == "ok", added
    edit = run(bridge, scenes, "node_set_properties", scene_path=MESH_SCENE, node_path="Box/Mesh",
               properties={"material_override": "materials/base.tres"})
    assert edit["made_editable"] == ["Box"], edit
    text = (scenes / MESH_SCENE).read_text()
    assert text.endswith('material_override = ExtResource("2_' + text.split('path="res://materials/base.tres" id="2_')
                         [1].split('"')[0] + '")\n\n[editable path="Box"]\n')
    read = run(bridge, scenes, "scene_read", scene_path=MESH_SCENE, node_path="Box")
    assert [(node["path"], node["type"], node["instance"]) for node in read["nodes"]] == [
        ("Box", "Node3D", "res://models/box.glb"), ("Box/Mesh", "MeshInstance3D", None)]
    seen = view(godot_bin, scenes, tmp_path, MESH_SCENE, "material_override")
    assert seen["Box/Mesh"]["material_override"] == {"class": "StandardMaterial3D", "path": "res://materials/base.tres"}
    # The model's own nodes, as the import made them: where a node path inside the instance comes from.
    model = run(bridge, scenes, "scene_read", scene_path="models/box.glb")
    assert [(node["path"], node["type"]) for node in model["nodes"]] == [(".", "Node3D"), ("Mesh", "MeshInstance3D")]
    assert model["uid"] is not None and model["uid"] in (scenes / "models/box.glb.import").read_text()


def test_a_script_error_while_reading_is_an_error_reply_not_an_empty_success(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, godot_bin: str
) -> None:
    # A GDScript runtime error ends the function it happens in with its type's default ({} for a
    # reply) and lets the caller go on: before, a read cut short so replied "ok" with nothing in it.
    abort = '\tvar key: String = ""\n'
    changed_scripts(tmp_path, monkeypatch, "ops/scene_read.gd",
                    lambda text: text.replace(abort, abort + "\tvar aborted: Array = []\n\taborted[1] = 0\n"))
    with Bridge(godot_bin) as fresh:
        reply = run(fresh, project, "scene_read", scene_path=SCENE)
    assert reply["result"] == "error", reply
    assert "script error" in reply["error"]["message"]


def test_a_scripts_exported_property_is_typed_by_the_script_with_allow_scripts(
    project: Path, bridge: Bridge
) -> None:
    (project / "mover.gd").write_text('extends Node3D\n\n@export var speed: float = 1.0\n'
                                      '@export var label: String = ""\n')
    (project / "mover.tscn").write_text(
        '[gd_scene format=3]\n\n[ext_resource type="Script" path="res://mover.gd" id="1_m"]\n\n'
        '[node name="Mover" type="Node3D" unique_id=7]\nscript = ExtResource("1_m")\n')
    refused = run(bridge, project, "node_set_properties", scene_path="mover.tscn", node_path=".",
                  properties={"speed": 2})
    assert refused["error"]["code"] == "unsafe_resource", refused
    reply = run(bridge, project, "node_set_properties", scene_path="mover.tscn", node_path=".",
                properties={"speed": 2, "label": "fast"}, allow_scripts=True)
    assert reply["changed"] == ["speed", "label"], reply
    assert (project / "mover.tscn").read_text().endswith('ExtResource("1_m")\nspeed = 2.0\nlabel = "fast"\n')
    wrong = run(bridge, project, "node_set_properties", scene_path="mover.tscn", node_path=".",
                properties={"speed": "fast"}, allow_scripts=True)
    assert wrong["error"]["code"] == "invalid_value", wrong


def test_a_value_the_node_already_has_changes_nothing(scenes: Path, bridge: Bridge) -> None:
    # Before: a property the engine does not save (position, saved through transform) set to the
    # value the node had was refused as one the scene would not keep.
    before = snapshot(scenes)
    reply = run(bridge, scenes, "node_set_properties", scene_path=SCENE, node_path="Floor",
                properties={"position": [0, -1, 0]})
    assert reply["result"] == "ok" and reply["changed"] == [], reply
    assert snapshot(scenes) == before
    refused = run(bridge, scenes, "node_set_properties", scene_path=SCENE, node_path="Floor",
                  properties={"global_position": [0, 5, 0]})
    assert refused["error"]["code"] == "invalid_value", refused


# What the edits below would swap in: a script that leaves ran.txt once it runs.
EVIL = 'extends Resource\nfunc _init() -> void:\n\tFileAccess.open("res://ran.txt", FileAccess.WRITE)\n'


def assert_edit_refused(bridge: Bridge, project: Path, text: str | bytes, properties: dict[str, Any],
                        words: str) -> None:
    """An edit of node A of `text` (s.tscn, beside harmless.gd and EVIL as evil.gd) is refused with
    unsafe_resource saying `words`, the scene is as it was, and nothing ran."""
    (project / "harmless.gd").write_text("extends Resource\n")
    (project / "evil.gd").write_text(EVIL)
    data = text.encode() if isinstance(text, str) else text
    (project / "s.tscn").write_bytes(data)
    reply = run(bridge, project, "node_set_properties", scene_path="s.tscn", node_path="A", properties=properties)
    assert reply["result"] == "error" and reply["error"]["code"] == "unsafe_resource", reply
    assert words in reply["error"]["message"]
    assert (project / "s.tscn").read_bytes() == data
    assert not (project / "ran.txt").exists()


@pytest.mark.parametrize("hidden", ['"', '"\\u0000'], ids=["quote", "quote-and-escaped-nul"])
@pytest.mark.parametrize("comment", ["", "; café\n"], ids=["ascii", "not-ascii"])
def test_an_edit_that_would_change_how_the_lines_it_kept_read_is_refused(
        comment: str, hidden: str, project: Path, bridge: Bridge) -> None:
    # Found by a red-team read: the position line replaced held the scene's only script assignment and
    # opened a quoted name that hid the next line; once it was gone, that line assigned another script
    # the scene already named. As many scripts, classes and files as before, and a proof that does not
    # tell two scripts of one Object apart: it was written, and a plain load then ran evil.gd. A third
    # read hid the line again behind `"\u0000`, which the reader took for an empty name (it is " ").
    assert_edit_refused(
        bridge, project, '[gd_scene format=3]\n\n' + comment
        + '[ext_resource type="Script" path="res://harmless.gd" id="1"]\n'
        '[ext_resource type="Script" path="res://evil.gd" id="2"]\n\n'
        '[node name="Root" type="Node2D"]\n\n[node name="A" type="Node2D" parent="."]\n'
        'position = Vector2(1, 2) metadata/m = Object(Resource, "resource_local_to_scene": false,'
        ' "script": ExtResource("1")) ' + hidden + '\n'
        'metadata/m = Object(Resource, "resource_local_to_scene": false, "script": ExtResource("2"))\n'
        '\\"" "metadata/w" = 1\n', {"position": [5, 5]}, "lines it kept would read otherwise")


def test_a_name_made_of_an_escaped_nul_reads_as_the_engine_reads_it(project: Path, bridge: Bridge) -> None:
    # Found by a red-team read: "\u0000" ended the reader's string, so the line after it read as a tag
    # where the engine reads one name (" " and on), and load_path reached a CompressedTexture2D unconfined.
    (project / "s.tscn").write_text(
        '[gd_scene format=3]\n\n[sub_resource type="CompressedTexture2D" id="t"]\n'
        '"\\u0000"[node name="x"]\n"load_path" = "/etc/hostname"\n\n'
        '[node name="Root" type="Sprite2D"]\ntexture = SubResource("t")\n')
    reply = run(bridge, project, "scene_read", scene_path="s.tscn")
    assert reply["result"] == "error" and reply["error"]["code"] == "path_outside_project", reply


def test_a_scene_whose_sections_share_an_id_is_not_edited(project: Path, bridge: Bridge) -> None:
    # Found by a red-team read: `id=01` is "1" to the engine, which reads ExtResource(1) as the last
    # section of that id; the edit dropped harmless.gd's as unused (the reference is not quoted), and
    # the sub_resource's script became evil.gd.
    assert_edit_refused(
        bridge, project, '[gd_scene format=3]\n\n[ext_resource type="Script" path="res://evil.gd" id=01]\n'
        '[ext_resource type="Script" path="res://harmless.gd" id="1"]\n\n'
        '[sub_resource type="Resource" id="r"]\nscript = ExtResource(1)\n\n'
        '[node name="Root" type="Node2D"]\nmetadata/x = SubResource("r")\n\n'
        '[node name="A" type="Node2D" parent="."]\nposition = Vector2(1, 2) ; ExtResource("1")\n',
        {"position": [5, 5]}, "which another has too")


def test_a_scene_not_utf8_throughout_is_not_edited(project: Path, bridge: Bridge) -> None:
    # Found by a red-team read: the edit read the scene as decoded text, in which a stray byte had
    # become U+FFFD, and wrote that back; the engine builds a string's bytes before it reads them as
    # UTF-8, so "res://\xc3\u00a9.gd" (é.gd) came back naming another file, a script that then ran.
    assert_edit_refused(
        bridge, project, b'[gd_scene format=3]\n\n[ext_resource type="Script" path="res://\xc3\\u00a9.gd" id="1"]\n\n'
        b'[sub_resource type="Resource" id="r"]\nscript = ExtResource("1")\n\n'
        b'[node name="Root" type="Node2D"]\nmetadata/x = SubResource("r")\n\n'
        b'[node name="A" type="Node2D" parent="."]\nposition = Vector2(1, 2)\n', {"position": [5, 5]},
        "is not UTF-8 text throughout")


def test_an_id_escaped_as_a_surrogate_pair_is_read_as_the_engine_joins_it(project: Path, bridge: Bridge) -> None:
    # Found by a red-team read: the engine joins \uD83D\uDE00 into one character past 0xFF, which
    # becomes one space; the reader made each half a space, so "1\uD83D\uDE00" and "1 " were two ids
    # to it and one to the engine, and dropping "1 " as unused gave its references evil.gd.
    assert_edit_refused(
        bridge, project, '[gd_scene format=3]\n\n'
        '[ext_resource type="Script" path="res://evil.gd" id="1\\uD83D\\uDE00"]\n'
        '[ext_resource type="Script" path="res://harmless.gd" id="1 "]\n\n'
        '[sub_resource type="Resource" id="r"]\nscript = ExtResource("1\\uD83D\\uDE00")\n\n'
        '[node name="Root" type="Node2D"]\nmetadata/x = SubResource("r")\n\n'
        '[node name="A" type="Sprite2D" parent="."]\ntexture = ExtResource("1 ")\n', {"texture": None},
        "which another has too")
