"""The Python API's shape, without an engine: each operation a method made from its model, each error
code one class, nothing of the plumbing public (served by the engine: tests/engine/test_api.py)."""

from __future__ import annotations

import inspect

import pytest

from gdres import Bridge
from gdres.errors import ERROR_CLASSES
from gdres.front.api import operation_method
from gdres.requests.models import OPERATIONS, REPLIES


def test_every_code_of_the_decisions_has_one_class() -> None:
    codes = {"invalid_json", "invalid_request", "project_not_found", "invalid_path", "path_outside_project",
             "not_found", "not_imported", "invalid_type", "unknown_property", "forbidden_property",
             "invalid_value", "node_not_found", "incompatible_node", "unsafe_resource", "load_failed",
             "save_failed", "engine_not_found", "engine_unsupported", "engine_crashed", "timeout", "skipped"}
    assert codes <= set(ERROR_CLASSES)
    assert all(cls.code == code for code, cls in ERROR_CLASSES.items())


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


def test_the_plumbing_is_not_public() -> None:
    public = {name for name in dir(Bridge()) if not name.startswith("_")}
    assert public == {"settings", "run", "batch", "ready", "prewarm", "close", "call", *OPERATIONS}
    with pytest.raises(AttributeError, match="operations are resource_read"):
        Bridge().resource_reed  # noqa: B018
