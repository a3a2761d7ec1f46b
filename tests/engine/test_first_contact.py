"""First contact with a real project (issue 26): errors that name what is missing and say how to fix it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli, snapshot
from gdres import Bridge

LFS_POINTER = ("version https://git-lfs.github.com/spec/v1\n"
               "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n")


def material_naming(project: Path, texture: str) -> None:
    (project / "robot.tres").write_text(
        '[gd_resource type="StandardMaterial3D" format=3]\n\n'
        f'[ext_resource type="Texture2D" path="res://{texture}" id="1"]\n\n'
        '[resource]\nalbedo_texture = ExtResource("1")\n')
    (project / f"{texture}.import").write_text(
        '[remap]\n\nimporter="texture"\ntype="CompressedTexture2D"\n'
        f'path="res://.godot/imported/{Path(texture).name}-0123456789abcdef0123456789abcdef.ctex"\n\n'
        f'[deps]\n\nsource_file="res://{texture}"\n')


@pytest.mark.parametrize("state", ["missing", "lfs_pointer"])
def test_a_texture_that_is_not_there_is_not_found_naming_it_and_its_user(project: Path, bridge: Bridge,
                                                                         state: str) -> None:
    (project / "robot").mkdir()
    material_naming(project, "robot/orm.png")
    if state == "lfs_pointer":
        (project / "robot" / "orm.png").write_text(LFS_POINTER)
    before = snapshot(project)
    reply = bridge.run({"op": "resource_read", "project_path": str(project), "resource_path": "robot.tres"})
    assert reply["result"] == "error" and reply["error"]["code"] == "not_found", reply
    message = reply["error"]["message"]
    assert "res://robot/orm.png" in message and "res://robot.tres" in message
    assert ("git lfs pull" in message) == (state == "lfs_pointer")
    assert snapshot(project) == before


def test_a_misspelt_resource_type_gets_a_suggestion(project: Path, bridge: Bridge) -> None:
    reply = bridge.run({"op": "resource_create", "project_path": str(project), "resource_type": "Gradiant",
                        "resource_path": "g.tres"})
    assert reply["error"]["code"] == "invalid_type", reply
    assert "did you mean Gradient" in reply["error"]["message"]


def test_run_given_a_path_instead_of_a_request_says_what_it_takes(godot_bin: str) -> None:
    done = run_cli("--godot", godot_bin, "run", "door/model/door.tres")
    reply = json.loads(done.stdout)
    assert reply["error"]["code"] == "invalid_json"
    assert "@FILE" in reply["error"]["message"]
    assert '"resource_path": "door/model/door.tres"' in reply["error"]["message"]


def test_godot_3_extents_are_answered_with_godot_4_size(project: Path, bridge: Bridge) -> None:
    reply = bridge.run({"op": "shape_create", "project_path": str(project), "shape_type": "BoxShape3D",
                        "shape_params": {"extents": [1, 1, 1]}, "save_path": "box.tres"})
    assert reply["error"]["code"] == "unknown_property", reply
    assert "twice the extents" in reply["error"]["message"]


def test_an_update_lists_every_property_it_changed_also_the_engines_linked_ones(project: Path, bridge: Bridge) -> None:
    (project / "outlined.tres").write_text('[gd_resource type="StandardMaterial3D" format=3]\n\n[resource]\n')
    request = {"op": "resource_update", "project_path": str(project), "resource_path": "outlined.tres"}
    first = bridge.run({**request, "properties": {"stencil_mode": "STENCIL_MODE_OUTLINE"}})
    assert first["changed"] == ["stencil_mode", "next_pass", "stencil_flags"], first
    second = bridge.run({**request, "properties": {"stencil_outline_thickness": 0.05}})
    assert second["changed"] == ["stencil_outline_thickness", "next_pass.grow_amount"], second


def test_the_python_api_takes_a_relative_project_path_as_the_command_line_does(
    project: Path, bridge: Bridge, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project.parent)
    reply = bridge.resource_read(project.name, "materials/base.tres")
    assert reply["result"] == "ok" and reply["type"] == "StandardMaterial3D"
    monkeypatch.chdir(project)
    here = bridge.run({"op": "resource_read", "project_path": ".", "resource_path": "materials/base.tres"})
    assert here["result"] == "ok"
