"""shape_create without scenes: every listed shape saved and read back, in-memory creation, errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import file_etag, file_uid, run_cli, snapshot
from gdres import Bridge
from unit.test_shapes import SHAPES


@pytest.mark.parametrize("shape_type", sorted(SHAPES))
def test_shape_is_saved_and_reads_back_with_its_params(
    shape_type: str, project: Path, bridge: Bridge
) -> None:
    params = SHAPES[shape_type]
    reply = bridge.run({"op": "shape_create", "project_path": str(project), "shape_type": shape_type,
                        "shape_params": params, "save_path": f"shapes/{shape_type}.tres"})
    assert reply == {"op": "shape_create", "shape_type": shape_type, "type": shape_type,
                     "save_path": f"shapes/{shape_type}.tres",
                     "uid": file_uid(project / f"shapes/{shape_type}.tres"),
                     "etag": file_etag(project / f"shapes/{shape_type}.tres"), "result": "ok"}
    text = (project / "shapes" / f"{shape_type}.tres").read_text()
    assert text.startswith(f'[gd_resource type="{shape_type}" format=3 uid="uid://')
    read = bridge.resource_read(str(project), f"shapes/{shape_type}.tres", properties=list(params))
    assert read["type"] == shape_type
    assert read["properties"] == params


def test_properties_spelling_is_accepted_too(project: Path, bridge: Bridge) -> None:
    made = bridge.run({"op": "shape_create", "project_path": str(project), "shape_type": "SphereShape3D",
                       "properties": {"radius": 2}, "save_path": "s.tres"})  # the typed method has shape_params only
    assert made["result"] == "ok"
    assert bridge.resource_read(str(project), "s.tres")["properties"] == {"radius": 2}


def test_without_save_or_scene_the_shape_is_only_made_and_nothing_is_written(
    project: Path, bridge: Bridge
) -> None:
    before = snapshot(project)
    reply = bridge.run({"op": "shape_create", "project_path": str(project), "shape_type": "BoxShape3D",
                        "shape_params": {"size": [2, 2, 2]}})
    assert reply == {"op": "shape_create", "shape_type": "BoxShape3D", "type": "BoxShape3D", "result": "ok"}
    assert snapshot(project) == before


def test_in_memory_creation_still_checks_the_params(project: Path, bridge: Bridge) -> None:
    reply = bridge.run({"op": "shape_create", "project_path": str(project), "shape_type": "CircleShape2D",
                        "shape_params": {"radius": "wide"}})
    assert reply["error"]["code"] == "invalid_value"
    assert reply["error"]["field"] == "shape_params"


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"shape_type": "BoxMesh"}, "invalid_type"),
        ({"shape_type": "BoxShape3D", "shape_params": {"size": [1, 2]}}, "invalid_value"),
        ({"shape_type": "BoxShape3D", "shape_params": {"sise": [1, 2, 3]}}, "unknown_property"),
        ({"shape_type": "BoxShape3D", "shape_params": {"script": "x.gd"}}, "forbidden_property"),
        ({"shape_type": "BoxShape3D", "save_path": "shapes/box.tscn"}, "invalid_path"),
        ({"shape_type": "BoxShape3D", "save_path": "../box.tres"}, "path_outside_project"),
    ],
)
def test_a_failing_request_writes_nothing(
    fields: dict[str, Any], code: str, project: Path, bridge: Bridge
) -> None:
    before = snapshot(project)
    reply = bridge.run({"op": "shape_create", "project_path": str(project),
                        "save_path": "shapes/box.tres", **fields})
    assert reply["result"] == "error"
    assert reply["error"]["code"] == code, reply
    assert snapshot(project) == before
    assert not (project / "shapes").exists()


def test_unknown_property_suggests_the_close_name(project: Path, bridge: Bridge) -> None:
    reply = bridge.run({"op": "shape_create", "project_path": str(project), "shape_type": "CapsuleShape3D",
                        "shape_params": {"radious": 1}})
    assert "radius" in reply["error"]["message"]


def test_overwriting_a_shape_keeps_its_uid(project: Path, bridge: Bridge) -> None:
    bridge.shape_create(str(project), "SphereShape3D", shape_params={"radius": 1}, save_path="s.tres")
    first = (project / "s.tres").read_text().splitlines()[0]
    bridge.shape_create(str(project), "SphereShape3D", shape_params={"radius": 3}, save_path="s.tres")
    assert (project / "s.tres").read_text().splitlines()[0] == first
    assert bridge.resource_read(str(project), "s.tres")["properties"] == {"radius": 3}


def test_cli_creates_a_shape(project: Path, godot_bin: str) -> None:
    request = {"op": "shape_create", "project_path": str(project), "shape_type": "RectangleShape2D",
               "shape_params": {"size": {"x": 3, "y": 4}}, "save_path": "res://ui/rect.tres", "id": 7}
    done = run_cli("run", json.dumps(request), godot=godot_bin)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"op": "shape_create", "id": 7, "shape_type": "RectangleShape2D",
                                       "type": "RectangleShape2D",
                                       "save_path": "res://ui/rect.tres", "uid": file_uid(project / "ui/rect.tres"),
                                       "etag": file_etag(project / "ui/rect.tres"), "result": "ok"}
    assert "size = Vector2(3, 4)" in (project / "ui" / "rect.tres").read_text()


def test_an_error_names_the_member_as_the_request_spelled_it(project: Path, bridge: Bridge) -> None:
    for member in ("shape_params", "properties"):
        reply = bridge.run({"op": "shape_create", "project_path": str(project), "shape_type": "SphereShape3D",
                            member: {"radius": "big"}})
        assert reply["error"]["field"] == member
        assert reply["error"]["message"].startswith(f"{member}.radius: ")
