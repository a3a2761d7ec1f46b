"""Request validation before anything reaches the engine (pure Python, no engine)."""

from __future__ import annotations

from typing import Any

import pytest

from gdres.errors import BridgeError, InvalidRequest, InvalidType
from gdres.requests.models import MaterialCreate, ResourceRead, ShapeCreate, parse_request

BASE = {"project_path": "/p"}


def refused(raw: Any) -> BridgeError:
    with pytest.raises(BridgeError) as caught:
        parse_request(raw)
    return caught.value


def test_variant_spellings_are_accepted_and_remembered() -> None:
    read = parse_request({**BASE, "op": "resource_read", "path": "a.tres", "properties": ["roughness"]})
    assert isinstance(read, ResourceRead) and read.path_key == "path" and read.resource_path == "a.tres"
    made = parse_request({**BASE, "op": "material_create", "material_type": "X", "save_path": "a.tres"})
    assert isinstance(made, MaterialCreate) and made.path_key == "save_path" and made.resource_path == "a.tres"
    shape = parse_request({**BASE, "op": "shape_create", "shape_type": "BoxShape3D", "properties": {"size": [1, 2, 3]}})
    assert isinstance(shape, ShapeCreate) and shape.shape_params == {"size": [1, 2, 3]}
    assert shape.spelled("shape_params") == "properties" and shape.properties is None


def test_both_spellings_at_once_are_refused() -> None:
    error = refused({**BASE, "op": "resource_read", "path": "a.tres", "resource_path": "b.tres"})
    assert isinstance(error, InvalidRequest) and "not both" in error.message


def test_null_means_not_given() -> None:
    read = parse_request({**BASE, "op": "resource_read", "resource_path": "a.tres", "depth": None, "id": None})
    assert isinstance(read, ResourceRead) and read.depth == 1 and read.id is None


@pytest.mark.parametrize(("member", "value"), [
    ("depth", "2"), ("depth", 1.5), ("depth", True), ("depth", -1),
    ("properties", "roughness"), ("include_defaults", "yes"), ("id", [1]), ("id", True),
    ("project_path", 5), ("allow_scripts", 1),
])
def test_ill_typed_members_name_the_field(member: str, value: Any) -> None:
    error = refused({**BASE, "op": "resource_read", "resource_path": "a.tres", member: value})
    assert isinstance(error, InvalidRequest)
    assert error.field == member
    assert member in error.message


def test_missing_members_are_named() -> None:
    error = refused({**BASE, "op": "material_create", "resource_path": "a.tres"})
    assert (error.code, error.field, error.message) == ("invalid_request", "material_type", "material_type is required")
    assert refused({**BASE, "op": "material_create", "material_type": "X"}).message == "resource_path is required"


def test_unknown_op_and_missing_op() -> None:
    assert refused({**BASE, "op": "delete_everything"}).field == "op"
    assert "missing" in refused(BASE).message


def test_shape_rules() -> None:
    assert isinstance(refused({**BASE, "op": "shape_create", "shape_type": "TorusShape3D"}), InvalidType)
    assert "node_path is required" in refused(
        {**BASE, "op": "shape_create", "shape_type": "BoxShape3D", "scene_path": "s.tscn"}).message
    assert "once, as shape_params or properties" in refused(
        {**BASE, "op": "shape_create", "shape_type": "BoxShape3D", "shape_params": {}, "properties": {}}).message


def test_style_type_is_checked() -> None:
    error = refused({**BASE, "op": "style_box_create", "style_type": "StyleBoxFancy", "resource_path": "a.tres"})
    assert error.code == "invalid_type" and error.field == "style_type" and "StyleBoxFlat" in error.message


def test_shader_path_only_with_shader_material() -> None:
    error = refused({**BASE, "op": "material_create", "material_type": "StandardMaterial3D",
                     "resource_path": "a.tres", "shader_path": "s.gdshader"})
    assert error.code == "invalid_request" and "ShaderMaterial" in error.message


def test_a_request_is_an_object() -> None:
    assert refused([1, 2]).code == "invalid_request"


@pytest.mark.parametrize(("raw", "says"), [
    ({"op": "shape_create", "shape_type": "BoxShape"}, "did you mean BoxShape3D (its name since Godot 4)?"),
    ({"op": "shape_create", "shape_type": "boxshape3d"}, "did you mean BoxShape3D?"),
    ({"op": "style_box_create", "style_type": "styleboxflat", "resource_path": "s.tres"}, "did you mean StyleBoxFlat?"),
    ({"op": "material_create", "materialType": "StandardMaterial3D", "resource_path": "m.tres"},
     "material_type is required (the request has 'materialType': is that it?)"),
    ({"op": "resource_read", "resource_path": "m.tres", "depth": "2"}, "depth: must be an integer (got '2')"),
    ({"op": "resource_read", "resource_path": "m.tres", "depth": -1}, "depth: must be at least 0 (got -1)"),
])
def test_a_near_miss_says_what_was_probably_meant(raw: dict[str, Any], says: str) -> None:
    with pytest.raises(BridgeError) as caught:
        parse_request({"project_path": "/p", **raw})
    assert says in caught.value.message
    assert "Input should" not in caught.value.message
