"""The Python API against the real engine: each method returns the reply of a success and raises the
error class of a failure (its shape alone: tests/unit/test_api.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from conftest import file_etag, file_uid
from gdres import Bridge, BridgeError
from gdres.errors import ERROR_CLASSES, InvalidRequest, InvalidType, NotFound, PathOutsideProject
from gdres.requests.models import REPLIES


def test_every_typed_method_serves_its_operation(bridge: Bridge, project: Path) -> None:
    root = project  # a pathlib.Path is a path too
    made = bridge.material_create(root, "StandardMaterial3D", "api/m.tres", properties={"metallic": 0.25})
    assert (made["op"], made["type"], made["result"]) == ("material_create", "StandardMaterial3D", "ok")
    box = bridge.style_box_create(root, "StyleBoxLine", "api/line.tres", properties={"thickness": 3})
    assert box["type"] == "StyleBoxLine"
    shape = bridge.shape_create(root, "CircleShape2D", shape_params={"radius": 4}, save_path="api/c.tres")
    assert shape == {"op": "shape_create", "shape_type": "CircleShape2D", "type": "CircleShape2D",
                     "save_path": "api/c.tres",
                     "uid": file_uid(root / "api/c.tres"), "etag": file_etag(root / "api/c.tres"), "result": "ok"}
    copy = bridge.resource_duplicate(root, "api/m.tres", "api/m2.tres", property_overrides={"roughness": 0.5})
    assert copy["type"] == "StandardMaterial3D"
    read = bridge.resource_read(root, Path("api/m2.tres"))
    assert read["properties"] == {"metallic": 0.25, "roughness": 0.5}
    assert bridge.resource_read(root, "api/line.tres")["properties"] == {"thickness": 3}
    assert bridge.resource_read(root, "api/c.tres")["properties"] == {"radius": 4.0}


@pytest.mark.parametrize(("call", "error"), [
    (lambda b, p: b.resource_read(p, "missing.tres"), NotFound),
    (lambda b, p: b.material_create(p, "Node3D", "x.tres"), InvalidType),
    (lambda b, p: b.resource_read(p, "../x.tres"), PathOutsideProject),
    (lambda b, p: b.resource_read(p, "materials/base.tres", depth="deep"), InvalidRequest),
    (lambda b, p: b.shape_create(p, "BoxShape3D", shape_params="big"), InvalidRequest),
])
def test_a_failure_raises_the_class_of_its_code(bridge: Bridge, project: Path, call: Callable[[Bridge, str], object],
                                                   error: type) -> None:
    with pytest.raises(error) as caught:
        call(bridge, str(project))
    assert isinstance(caught.value, BridgeError)
    assert ERROR_CLASSES[caught.value.code] is error
    assert caught.value.message


def test_run_never_raises_for_a_bad_request(bridge: Bridge) -> None:
    bad: tuple[object, ...] = (None, [], "text", {"op": 5}, {"op": "resource_read"})
    for raw in bad:
        assert bridge.run(raw)["result"] == "error"


PATH_MEMBERS = {
    "resource_duplicate": {"source_path": "materials/nowhere.tres", "dest_path": "copies/x.tres"},
    "shape_create": {"shape_type": "BoxShape3D", "save_path": "shapes/box.tres", "scene_path": "level.tscn",
                     "node_path": "No/Such/Node"},
    "material_create": {"material_type": "ShaderMaterial", "resource_path": "mats/glow.tres",
                        "shader_path": "shaders/nowhere.gdshader"},
}


@pytest.mark.parametrize("op", sorted(PATH_MEMBERS))
@pytest.mark.parametrize("stage", ["engine", "validation"])
def test_an_error_reply_echoes_every_path_member_of_its_request(
        bridge: Bridge, project: Path, op: str, stage: str) -> None:
    members = PATH_MEMBERS[op]
    request: dict[str, Any] = {"op": op, "project_path": str(project), **members}
    if stage == "validation":
        request["unknown_member"] = 1
    reply = bridge.run(request)
    assert reply["result"] == "error", reply
    paths = {key: value for key, value in members.items() if key.endswith("_path")}
    assert {key: reply.get(key) for key in paths} == paths, reply


def test_every_reply_has_the_members_its_type_declares_and_no_other(bridge: Bridge, project: Path) -> None:
    replies = {
        "material_create": bridge.material_create(project, "StandardMaterial3D", "t/m.tres",
                                                  properties={"metallic": 1.0}),
        "resource_read": bridge.resource_read(project, "t/m.tres", properties=["metallic"]),
        "resource_update": bridge.resource_update(project, "t/m.tres", properties={"metallic": 0.5}),
        "resource_duplicate": bridge.resource_duplicate(project, "t/m.tres", "t/m2.tres"),
        "style_box_create": bridge.style_box_create(project, "StyleBoxFlat", "t/s.tres"),
        "resource_create": bridge.resource_create(project, "Gradient", "t/g.tres"),
        "shape_create": bridge.shape_create(project, "BoxShape3D", save_path="t/b.tres"),
    }
    for op, reply in replies.items():
        declared: Any = REPLIES[op]
        assert declared.__required_keys__ <= set(reply) <= declared.__required_keys__ | declared.__optional_keys__, op
        TypeAdapter(declared).validate_python(reply)


def test_call_serves_any_operation_from_its_model_and_returns_its_typed_reply(bridge: Bridge, project: Path) -> None:
    from gdres.requests.models import MaterialCreate, ResourceRead

    made = bridge.call(MaterialCreate(project_path=str(project), material_type="StandardMaterial3D",
                                      resource_path="api/std.tres", properties={"roughness": 0.25}))
    assert made == {"op": "material_create", "resource_path": "api/std.tres", "type": "StandardMaterial3D",
                    "uid": file_uid(project / "api/std.tres"), "etag": file_etag(project / "api/std.tres"),
                    "result": "ok"}
    read = bridge.call(ResourceRead(project_path=str(project), path="api/std.tres"))
    assert read["properties"] == {"roughness": 0.25}
    with pytest.raises(NotFound):
        bridge.call(ResourceRead(project_path=str(project), resource_path="api/none.tres"))
    with pytest.raises(TypeError, match="takes a model"):
        bridge.call({"op": "resource_read"})  # type: ignore[arg-type]


def test_a_misspelt_keyword_fails_at_the_call(bridge: Bridge, project: Path) -> None:
    with pytest.raises(TypeError, match="propertis"):
        bridge.material_create(project, "StandardMaterial3D", "x.tres", propertis={})
