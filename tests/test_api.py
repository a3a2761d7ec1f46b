"""The Python API: typed methods return the reply of a success and raise the error class of a failure."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from conftest import file_etag, file_uid
from gdres import Bridge, BridgeError
from gdres.errors import ERROR_CLASSES, InvalidRequest, InvalidType, NotFound, PathOutsideProject
from gdres.front.api import operation_method
from gdres.requests.models import OPERATIONS, REPLIES


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


def test_every_code_of_the_decisions_has_one_class() -> None:
    codes = {"invalid_json", "invalid_request", "project_not_found", "invalid_path", "path_outside_project",
             "not_found", "not_imported", "invalid_type", "unknown_property", "forbidden_property",
             "invalid_value", "node_not_found", "incompatible_node", "unsafe_resource", "load_failed",
             "save_failed", "engine_not_found", "engine_unsupported", "engine_crashed", "timeout", "skipped"}
    assert codes <= set(ERROR_CLASSES)
    assert all(cls.code == code for code, cls in ERROR_CLASSES.items())


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


POSITIONAL = {"resource_read": ["resource_path"], "material_create": ["material_type", "resource_path"],
              "shape_create": ["shape_type"], "style_box_create": ["style_type", "resource_path"],
              "resource_duplicate": ["source_path", "dest_path"], "resource_update": ["resource_path"],
              "resource_create": ["resource_type", "resource_path"]}
"""The positions of the methods published before they were made from the models: kept."""


@pytest.mark.parametrize("op", OPERATIONS)
def test_every_operation_is_a_method_that_takes_exactly_its_models_members(op: str) -> None:
    from gdres.requests import models

    model = models.REQUEST_MODELS[op]
    members = set(model.model_fields) - {"op", "id"} - set(model.own_names())
    signature = inspect.signature(operation_method(op))
    parameters = {name: parameter for name, parameter in signature.parameters.items() if name != "self"}
    assert set(parameters) == members
    positional = [name for name, parameter in parameters.items() if parameter.kind is not parameter.KEYWORD_ONLY]
    assert positional[0] == "project_path"
    assert positional[1:] == POSITIONAL.get(op, positional[1:])
    for name, parameter in parameters.items():
        field = model.model_fields[name]
        # The main file is optional in the model only because it has a variant spelling.
        required = field.is_required() or (name in model.spellings and name in model.files)
        assert (parameter.default is inspect.Parameter.empty) == required, name
        if not required:
            assert parameter.default == field.default, name
            assert parameter.kind is inspect.Parameter.KEYWORD_ONLY, name


@pytest.mark.parametrize("op", OPERATIONS)
def test_an_operations_method_returns_its_reply_type_and_documents_each_parameter(op: str) -> None:
    method = getattr(Bridge(), op)
    assert inspect.signature(method).return_annotation is REPLIES[op]
    args = (method.__doc__ or "").split("Args:", 1)[1].split("Returns:", 1)[0]
    documented = {line.strip().split(":", 1)[0] for line in args.splitlines() if line.strip()}
    assert documented == set(inspect.signature(method).parameters)


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


def test_the_plumbing_is_not_public() -> None:
    public = {name for name in dir(Bridge()) if not name.startswith("_")}
    assert public == {"settings", "run", "batch", "ready", "prewarm", "close", "call", *OPERATIONS}
    with pytest.raises(AttributeError, match="operations are resource_read"):
        Bridge().resource_reed  # noqa: B018
