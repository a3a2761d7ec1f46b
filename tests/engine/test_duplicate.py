"""resource_duplicate: what the written file holds for shallow and deep copies, overrides, errors.

Source: materials/layered.tres, a StandardMaterial3D whose next_pass is materials/base.tres (a file of
its own) and whose albedo_texture is an embedded GradientTexture1D with an embedded Gradient.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from conftest import file_etag, file_uid, snapshot
from gdres import Bridge

SOURCE = "materials/layered.tres"


def sections(text: str) -> list[str]:
    """The section headers of a resource file, without ids (which the saver picks)."""
    return [re.sub(r' id="[^"]*"', "", line) for line in text.splitlines() if line.startswith("[")]


def duplicate(bridge: Bridge, project: Path, **fields: Any) -> dict[str, Any]:
    return bridge.run({"op": "resource_duplicate", "project_path": str(project), "source_path": SOURCE, **fields})


def test_shallow_copy_keeps_file_references_and_embedded_sub_resources(project: Path, bridge: Bridge) -> None:
    reply = duplicate(bridge, project, dest_path="copies/shallow.tres")
    assert reply == {"op": "resource_duplicate", "source_path": SOURCE, "dest_path": "copies/shallow.tres",
                     "type": "StandardMaterial3D", "uid": file_uid(project / "copies/shallow.tres"),
                     "etag": file_etag(project / "copies/shallow.tres"), "result": "ok"}
    assert reply["uid"] != file_uid(project / SOURCE)
    text = (project / "copies/shallow.tres").read_text()
    assert sections(text)[1:] == [
        '[ext_resource type="Material" uid="uid://b8tem3lsf3ylh" path="res://materials/base.tres"]',
        '[sub_resource type="Gradient"]',
        '[sub_resource type="GradientTexture1D"]',
        "[resource]",
    ]
    assert "uid://blayeredfix01" not in text  # the copy is a new file with a uid of its own
    read = bridge.resource_read(str(project), "copies/shallow.tres", depth=0)["properties"]
    assert read["next_pass"] == "res://materials/base.tres"


def test_deep_copy_embeds_every_nested_resource(project: Path, bridge: Bridge) -> None:
    reply = duplicate(bridge, project, dest_path="copies/deep.tres", deep_copy=True)
    assert reply["result"] == "ok", reply
    text = (project / "copies/deep.tres").read_text()
    assert "ext_resource" not in text
    assert sorted(sections(text)[1:]) == sorted([
        '[sub_resource type="Gradient"]',
        '[sub_resource type="GradientTexture1D"]',
        '[sub_resource type="StandardMaterial3D"]',
        "[resource]",
    ])
    nested = bridge.resource_read(str(project), "copies/deep.tres", depth=1)["properties"]["next_pass"]
    assert nested["path"].startswith("res://copies/deep.tres::")
    assert nested["properties"] == {"albedo_color": [0.2, 0.4, 0.6, 1.0], "roughness": 0.25, "metallic": 0.5}


def test_both_copies_read_back_like_the_source(project: Path, bridge: Bridge) -> None:
    source = bridge.resource_read(str(project), SOURCE, depth=3)["properties"]
    for deep in (False, True):
        duplicate(bridge, project, dest_path=f"copies/{deep}.tres", deep_copy=deep)
        copy = bridge.resource_read(str(project), f"copies/{deep}.tres", depth=3)["properties"]
        assert strip_paths(copy) == strip_paths(source)


def strip_paths(value: Any) -> Any:
    """The value with every resource's path left out (paths differ between files by design)."""
    if isinstance(value, dict):
        return {k: strip_paths(v) for k, v in value.items() if k != "path"}
    if isinstance(value, list):
        return [strip_paths(v) for v in value]
    return value


def test_overrides_change_only_what_they_name(project: Path, bridge: Bridge) -> None:
    reply = duplicate(bridge, project, dest_path="copies/shiny.tres",
                      property_overrides={"metallic": 0.9, "albedo_color": "#ff0000", "next_pass": None})
    assert reply["result"] == "ok", reply
    source = bridge.resource_read(str(project), SOURCE, depth=0)["properties"]
    copy = bridge.resource_read(str(project), "copies/shiny.tres", depth=0)["properties"]
    expected = {**source, "metallic": 0.9, "albedo_color": [1.0, 0.0, 0.0, 1.0]}
    del expected["next_pass"]
    expected["albedo_texture"] = copy["albedo_texture"]
    assert copy == expected
    assert copy["albedo_texture"].startswith("res://copies/shiny.tres::")
    assert bridge.resource_read(str(project), SOURCE, depth=0)["properties"] == source


def test_duplicating_over_an_existing_file_keeps_its_uid(project: Path, bridge: Bridge) -> None:
    duplicate(bridge, project, dest_path="copies/again.tres")
    first = (project / "copies/again.tres").read_text().splitlines()[0]
    duplicate(bridge, project, dest_path="copies/again.tres", deep_copy=True)
    assert (project / "copies/again.tres").read_text().splitlines()[0] == first


@pytest.mark.parametrize(
    ("fields", "code", "field"),
    [
        ({"dest_path": SOURCE}, "invalid_path", "dest_path"),
        ({"dest_path": "res://materials/./layered.tres"}, "invalid_path", "dest_path"),
        ({"source_path": "materials/none.tres", "dest_path": "copies/x.tres"}, "not_found", "source_path"),
        ({"dest_path": "copies/x.tres", "property_overrides": {"metalic": 1}}, "unknown_property",
         "property_overrides"),
        ({"dest_path": "copies/x.tres", "property_overrides": {"metallic": "very"}}, "invalid_value",
         "property_overrides"),
        ({"dest_path": "copies/x.tres", "property_overrides": {"next_pass": "materials/none.tres"}},
         "not_found", "property_overrides"),
        ({"dest_path": "copies/x.tres", "property_overrides": {"resource_path": "a.tres"}},
         "forbidden_property", "property_overrides"),
        ({"dest_path": "copies/x.res"}, "invalid_path", "dest_path"),
    ],
)
def test_a_failing_duplicate_writes_nothing(
    fields: dict[str, Any], code: str, field: str, project: Path, bridge: Bridge
) -> None:
    before = snapshot(project)
    reply = duplicate(bridge, project, **fields)
    assert reply["result"] == "error"
    assert reply["error"]["code"] == code, reply
    assert reply["error"]["field"] == field
    assert snapshot(project) == before


def test_a_copy_of_a_shader_material_takes_overrides_of_its_uniforms(project: Path, bridge: Bridge) -> None:
    made = bridge.run({"op": "material_create", "project_path": str(project), "resource_path": "s.tres",
                       "material_type": "ShaderMaterial", "shader_path": "values/tinted.gdshader",
                       "properties": {"shader_parameter/strength": 2}})
    assert made["result"] == "ok", made
    reply = bridge.run({"op": "resource_duplicate", "project_path": str(project), "source_path": "s.tres",
                        "dest_path": "copies/s.tres",
                        "property_overrides": {"shader_parameter/strength": 3, "shader_parameter/mode": "Soft"}})
    assert reply["result"] == "ok", reply
    copy = bridge.resource_read(str(project), "copies/s.tres", depth=0)["properties"]
    assert copy["shader_parameter/strength"] == 3.0 and copy["shader_parameter/mode"] == 1
    unknown = bridge.run({"op": "resource_duplicate", "project_path": str(project), "source_path": "s.tres",
                          "dest_path": "copies/t.tres", "property_overrides": {"shader_parameter/nope": 1}})
    assert unknown["error"]["code"] == "unknown_property"


@pytest.mark.parametrize("dest", [SOURCE, "res://materials/../materials/layered.tres", "alias.tres"])
def test_a_copy_onto_its_own_source_is_refused(project: Path, bridge: Bridge, dest: str) -> None:
    (project / "alias.tres").symlink_to(project / SOURCE)
    before = snapshot(project)
    reply = duplicate(bridge, project, dest_path=dest)
    assert reply["result"] == "error" and reply["error"]["field"] == "dest_path"
    assert reply["error"]["code"] == "invalid_path"
    assert reply["error"]["message"] == "dest_path must differ from source_path (it names the same file)"
    assert snapshot(project) == before
