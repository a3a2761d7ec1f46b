"""material_create against the real engine: UIDs as the editor keeps them, read from the written files."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gdres import Bridge

UID = re.compile(r'^\[gd_resource [^\n]*uid="(uid://[a-z0-9]+)"', re.M)


def _create(bridge: Bridge, project: Path, path: str, **properties: object) -> None:
    reply = bridge.run({"op": "material_create", "project_path": str(project), "resource_path": path,
                        "material_type": "StandardMaterial3D", "properties": properties})
    assert reply["result"] == "ok", reply


def _uid(path: Path) -> str:
    found = UID.search(path.read_text())
    assert found, path.read_text()
    return found.group(1)


def test_overwriting_keeps_the_uid(project: Path, bridge: Bridge) -> None:
    base = project / "materials" / "base.tres"
    kept = _uid(base)
    _create(bridge, project, "materials/base.tres", roughness=0.9)
    assert _uid(base) == kept
    assert "roughness = 0.9" in base.read_text()


def test_new_files_get_distinct_uids(project: Path, bridge: Bridge) -> None:
    _create(bridge, project, "new/a.tres")
    _create(bridge, project, "new/b.tres")
    uids = {_uid(project / "new/a.tres"), _uid(project / "new/b.tres"), _uid(project / "materials/base.tres")}
    assert len(uids) == 3


def test_references_carry_the_targets_uid(project: Path, bridge: Bridge) -> None:
    _create(bridge, project, "new/c.tres", next_pass="materials/base.tres")
    text = (project / "new/c.tres").read_text()
    target = _uid(project / "materials/base.tres")
    assert f'[ext_resource type="Material" uid="{target}" path="res://materials/base.tres"' in text


@pytest.mark.parametrize(("material_type", "says"), [
    ("standardmaterial3d", "did you mean StandardMaterial3D?"),
    ("SpatialMaterial", "did you mean StandardMaterial3D (its name since Godot 4)?"),
])
def test_a_near_miss_class_name_is_suggested(bridge: Bridge, project: Path, material_type: str, says: str) -> None:
    reply = bridge.run({"op": "material_create", "project_path": str(project), "material_type": material_type,
                        "resource_path": "m.tres"})
    assert reply["error"]["code"] == "invalid_type" and says in reply["error"]["message"]


def test_a_bare_uniform_name_suggests_its_shader_parameter(bridge: Bridge, project: Path) -> None:
    (project / "glow.gdshader").write_text("shader_type spatial;\nuniform vec4 tint : source_color;\n")
    reply = bridge.run({"op": "material_create", "project_path": str(project), "material_type": "ShaderMaterial",
                        "resource_path": "m.tres", "shader_path": "glow.gdshader", "properties": {"tint": "#ff0000"}})
    assert reply["error"]["code"] == "unknown_property"
    assert 'did you mean "shader_parameter/tint"?' in reply["error"]["message"]
