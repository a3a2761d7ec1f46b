"""resource_create (any resource class that holds no code) and resource_update (in place, diff-friendly)."""

from __future__ import annotations

import difflib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import file_etag, file_uid, snapshot
from engine.test_duplicate import strip_paths
from gdres import Bridge

CREATED: dict[str, dict[str, Any]] = {
    "Gradient": {"colors": [[0, 0, 0, 1], [1, 0.5, 0, 1]], "offsets": [0, 1]},
    "Curve": {"point_count": 2, "point_1/position": [1, 1], "max_value": 2},
    "GradientTexture1D": {"width": 32, "gradient": {"type": "Gradient", "properties": {"offsets": [0, 1]}}},
    "NoiseTexture2D": {"width": 64, "height": 32,
                       "noise": {"type": "FastNoiseLite", "properties": {"frequency": 0.05, "seed": 7}}},
    "Environment": {"background_mode": "BG_SKY", "sky": {"type": "Sky", "properties": {
        "sky_material": {"type": "ProceduralSkyMaterial", "properties": {"sky_top_color": [0.2, 0.4, 0.8, 1]}}}}},
    "Theme": {"Button/styles/normal": {"type": "StyleBoxFlat", "properties": {"bg_color": [0.1, 0.1, 0.1, 1]}},
              "Label/font_sizes/font_size": 18, "Label/colors/font_color": [1, 1, 1, 1]},
    "AudioStreamRandomizer": {"random_pitch": 1.5, "random_volume_offset_db": 2},
    "LabelSettings": {"font_size": 24, "outline_size": 2, "font_color": [1, 0.8, 0, 1]},
    "BoxMesh": {"size": [2, 1, 0.5], "subdivide_width": 2},
    "TileSet": {"tile_size": [32, 32]},
    "Animation": {"length": 2, "tracks/0/type": "value", "tracks/0/path": "Sprite:modulate:a",
                  "tracks/0/keys": {"times": [0, 1], "transitions": [1, 1], "update": 0, "values": [0.0, 1.0]}},
}


def _create(bridge: Bridge, project: Path, cls: str, path: str, properties: dict[str, Any]) -> dict[str, Any]:
    return bridge.run({"op": "resource_create", "project_path": str(project), "resource_type": cls,
                       "resource_path": path, "properties": properties})


def _read(bridge: Bridge, project: Path, path: str, depth: int = 8) -> dict[str, Any]:
    return bridge.run({"op": "resource_read", "project_path": str(project), "resource_path": path, "depth": depth})


@pytest.mark.parametrize("cls", sorted(CREATED))
def test_any_resource_class_is_created_read_back_and_round_trips(bridge: Bridge, project: Path, cls: str) -> None:
    made = _create(bridge, project, cls, f"new/{cls}.tres", CREATED[cls])
    assert made == {"op": "resource_create", "resource_path": f"new/{cls}.tres", "type": cls,
                    "uid": file_uid(project / f"new/{cls}.tres"), "etag": file_etag(project / f"new/{cls}.tres"),
                    "result": "ok"}
    first = _read(bridge, project, f"new/{cls}.tres")
    assert first["type"] == cls and first["properties"]
    # The form a read prints is accepted back: read -> create -> read is identical.
    again = _create(bridge, project, cls, f"again/{cls}.tres", first["properties"])
    assert again["result"] == "ok", again
    second = _read(bridge, project, f"again/{cls}.tres")
    assert strip_paths(second["properties"]) == strip_paths(first["properties"])


@pytest.mark.parametrize(("cls", "why"), [("GDScript", "is code"), ("PackedScene", "is a scene"),
                                          ("Resource3D", "has no class"), ("Node3D", "is not a Resource"),
                                          ("Shape3D", "is abstract")])
def test_a_class_that_cannot_be_created_says_why_and_writes_nothing(
        bridge: Bridge, project: Path, cls: str, why: str) -> None:
    before = snapshot(project)
    reply = _create(bridge, project, cls, "new/x.tres", {})
    assert reply["error"]["code"] == "invalid_type" and why in reply["error"]["message"]
    assert snapshot(project) == before


def test_an_embedded_object_of_the_wrong_class_is_invalid_value(bridge: Bridge, project: Path) -> None:
    reply = _create(bridge, project, "NoiseTexture2D", "new/n.tres", {"noise": {"type": "Gradient"}})
    assert reply["error"]["code"] == "invalid_value" and "Noise" in reply["error"]["message"]
    abstract = _create(bridge, project, "NoiseTexture2D", "new/n.tres", {"noise": {"type": "Noise"}})
    assert abstract["error"]["code"] == "invalid_value" and "is abstract" in abstract["error"]["message"]


def _update(bridge: Bridge, project: Path, path: str, **fields: Any) -> dict[str, Any]:
    return bridge.run({"op": "resource_update", "project_path": str(project), "resource_path": path, **fields})


def _changed_lines(before: str, after: str) -> list[str]:
    return [line for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def test_an_update_changes_only_the_named_lines_of_a_file_the_engine_wrote(bridge: Bridge, project: Path) -> None:
    made = bridge.run({"op": "material_create", "project_path": str(project), "material_type": "StandardMaterial3D",
                       "resource_path": "mats/m.tres", "properties": {
                           "albedo_color": "#336699", "roughness": 0.3, "metallic": 0.7,
                           "next_pass": "materials/base.tres",
                           "albedo_texture": {"type": "GradientTexture1D", "properties": {"width": 16}}}})
    assert made["result"] == "ok", made
    before = (project / "mats/m.tres").read_text()
    reply = _update(bridge, project, "mats/m.tres", properties={"roughness": 0.9, "metallic": 0.7},
                    reset=["albedo_color"])
    assert reply == {"op": "resource_update", "resource_path": "mats/m.tres", "type": "StandardMaterial3D",
                     "uid": made["uid"], "changed": ["roughness", "albedo_color"],
                     "etag": file_etag(project / "mats/m.tres"), "result": "ok"}
    after = (project / "mats/m.tres").read_text()
    assert sorted(_changed_lines(before, after)) == sorted([
        "-roughness = 0.3", "+roughness = 0.9", "-albedo_color = Color(0.2, 0.4, 0.6, 1)"])


def test_an_update_keeps_the_ids_of_an_editor_written_file(bridge: Bridge, project: Path) -> None:
    before = (project / "materials/layered.tres").read_text()
    assert _update(bridge, project, "materials/layered.tres", properties={"roughness": 0.5})["result"] == "ok"
    changed = _changed_lines(before, (project / "materials/layered.tres").read_text())
    # load_steps is gone from the header: Godot 4.6 no longer writes it (old files only).
    assert [line for line in changed if "load_steps" not in line and "format=3" not in line] == [
        "-roughness = 0.8", "+roughness = 0.5"]


def test_a_shader_uniform_a_theme_item_and_an_environment_with_its_sky_update(bridge: Bridge, project: Path) -> None:
    assert bridge.run({"op": "material_create", "project_path": str(project), "material_type": "ShaderMaterial",
                       "resource_path": "mats/s.tres", "shader_path": "values/tinted.gdshader",
                       "properties": {"shader_parameter/tint": "#ff0000"}})["result"] == "ok"
    shader = _update(bridge, project, "mats/s.tres", properties={"shader_parameter/tint": "#00ff00"})
    assert shader["changed"] == ["shader_parameter/tint"]
    assert _create(bridge, project, "Theme", "ui/t.tres", CREATED["Theme"])["result"] == "ok"
    theme = _update(bridge, project, "ui/t.tres", properties={"Label/font_sizes/font_size": 20,
                                                              "Label/constants/outline_size": 2})
    assert theme["changed"] == ["Label/font_sizes/font_size", "Label/constants/outline_size"]
    assert 'Button/styles/normal = SubResource("' in (project / "ui/t.tres").read_text()
    assert _create(bridge, project, "Environment", "env.tres", CREATED["Environment"])["result"] == "ok"
    sky_before = [line for line in (project / "env.tres").read_text().splitlines() if "sub_resource" in line]
    updated = _update(bridge, project, "env.tres", properties={"ambient_light_energy": 2})
    assert updated["changed"] == ["ambient_light_energy"]
    sky_after = [line for line in (project / "env.tres").read_text().splitlines() if "sub_resource" in line]
    assert sky_after == sky_before
    read = _read(bridge, project, "mats/s.tres", depth=0)["properties"]
    assert read["shader_parameter/tint"] == [0, 1, 0, 1]


def test_an_update_to_the_same_value_changes_nothing_it_reports(bridge: Bridge, project: Path) -> None:
    assert _update(bridge, project, "materials/base.tres", properties={"roughness": 0.25})["changed"] == []


@pytest.mark.parametrize(("fields", "code", "field"), [
    ({"properties": {"rougness": 1}}, "unknown_property", "properties"),
    ({"reset": ["nope"]}, "unknown_property", "reset"),
    ({}, "invalid_request", None),
    ({"properties": {"roughness": 1}, "reset": ["roughness"]}, "invalid_request", None),
    ({"properties": {"script": "x.gd"}}, "forbidden_property", "properties"),
    ({"properties": {"roughness": "high"}}, "invalid_value", "properties"),
    ({"path_override": "scenes/level.tscn"}, "invalid_path", "resource_path"),
    ({"path_override": "nowhere.tres"}, "not_found", "resource_path"),
])
def test_a_bad_update_is_an_error_and_leaves_the_project_as_it_was(
        bridge: Bridge, project: Path, fields: dict[str, Any], code: str, field: str | None) -> None:
    before = snapshot(project)
    path = fields.pop("path_override", "materials/base.tres")
    if "path_override" not in fields and not fields and code == "invalid_path":
        fields = {"properties": {"x": 1}}
    if path != "materials/base.tres":
        fields = {"properties": {"x": 1}}
    reply = _update(bridge, project, path, **fields)
    assert reply["error"]["code"] == code, reply
    if field is not None:
        assert reply["error"].get("field") == field
    assert snapshot(project) == before


def test_two_processes_updating_one_file_both_land(godot_bin: str, project: Path) -> None:
    def run(properties: dict[str, Any]) -> subprocess.Popen[bytes]:
        request = {"op": "resource_update", "project_path": str(project), "resource_path": "materials/base.tres",
                   "properties": properties}
        return subprocess.Popen([sys.executable, "-m", "gdres", "--godot", godot_bin, "run",
                                 json.dumps(request)], stdout=subprocess.PIPE)

    runs = [run({"roughness": 0.9}), run({"metallic": 0.1})]
    assert [json.loads(one.communicate(timeout=120)[0])["result"] for one in runs] == ["ok", "ok"]
    with Bridge(godot_bin) as bridge:
        read = _read(bridge, project, "materials/base.tres", depth=0)["properties"]
    assert (read["roughness"], read["metallic"]) == (0.9, 0.1)


GODOT_3_TRES = '[gd_resource type="PhysicsMaterial" format=2]\n\n[resource]\nfriction = 0.5\n'


def test_an_update_of_a_godot_3_file_says_it_was_converted_and_writes_the_same_bytes_each_time(
    project: Path, bridge: Bridge, tmp_path: Path
) -> None:
    # Before: no word of the conversion, and a new random uid each time, so the same update of two
    # clones of one repository gave two different files.
    (project / "old").mkdir()
    (project / "old" / "m.tres").write_text(GODOT_3_TRES)
    clones = [project, tmp_path / "clone"]
    shutil.copytree(project, clones[1])
    written = []
    for clone in clones:
        reply = bridge.run({"op": "resource_update", "project_path": str(clone), "resource_path": "old/m.tres",
                            "properties": {"friction": 0.25}})
        assert reply["result"] == "ok", reply
        assert reply["converted_from_format"] == 2, reply
        written.append((clone / "old" / "m.tres").read_bytes())
    assert written[0] == written[1]
    assert b"format=3" in written[0] and b'uid="uid://' in written[0]
    again = bridge.run({"op": "resource_update", "project_path": str(project), "resource_path": "old/m.tres",
                        "properties": {"friction": 0.75}})
    assert "converted_from_format" not in again and again["uid"] == file_uid(project / "old" / "m.tres")
