"""A write is proven from the file before it is made visible (gdscript/files/saving.gd): loaded back
fresh, it must hold what the request set and encode as the resource in memory does. Here the cases
where only that load back can tell, found by asking the engine (Godot 4.6.3): the file holds what
memory held, and loading it gives something else, because the loader sets the stored properties in
their list's order and one setter changes what another set. Other classes of failure the proof is
for are tested beside their features: a file cut short (test_disk_full.py), a value the saver does
not store (test_values.py), the uid written (test_uids.py, test_materials.py), values of every type
and every resource class read back equal (test_values.py, test_create_update.py)."""

from __future__ import annotations

from pathlib import Path

from conftest import snapshot
from gdres import Bridge


def create(bridge: Bridge, project: Path, resource_type: str, properties: dict[str, object]) -> dict[str, object]:
    return bridge.run({"op": "resource_create", "project_path": str(project), "resource_type": resource_type,
                       "resource_path": "proof/made.tres", "properties": properties})


def test_a_value_set_that_another_setter_overwrites_on_load_is_refused(bridge: Bridge, project: Path) -> None:
    # add_uv2 computes lightmap_size_hint: in memory the hint set after it stays, but the loader sets
    # the hint first (it comes first in the property list) and add_uv2 then overwrites it.
    before = snapshot(project)
    reply = create(bridge, project, "BoxMesh", {"add_uv2": True, "lightmap_size_hint": [64, 64]})
    assert reply["result"] == "error", reply
    error = reply["error"]
    assert isinstance(error, dict) and error["code"] == "invalid_value" and error["field"] == "properties"
    assert "BoxMesh.lightmap_size_hint would not keep this value" in error["message"]
    assert snapshot(project) == before


def test_a_value_a_setter_made_that_loading_makes_otherwise_is_refused(bridge: Bridge, project: Path) -> None:
    # Not set by the request: TorusMesh's add_uv2 computes the hint from the radii in memory, but on
    # load it is computed before the radii are set (the file's hint is then overwritten).
    before = snapshot(project)
    reply = create(bridge, project, "TorusMesh", {"inner_radius": 0.87, "add_uv2": True})
    assert reply["result"] == "error", reply
    error = reply["error"]
    assert isinstance(error, dict) and error["code"] == "save_failed"
    assert "(lightmap_size_hint differs)" in error["message"]
    assert snapshot(project) == before


def test_a_difference_inside_an_embedded_resource_is_found(bridge: Bridge, project: Path) -> None:
    # The outline stencil makes a hidden next_pass material and gives it render_priority + 1; loading
    # sets stencil_mode again, after render_priority, and so the next pass's copy differs.
    before = snapshot(project)
    reply = bridge.run({"op": "material_create", "project_path": str(project), "material_type": "StandardMaterial3D",
                        "resource_path": "proof/outline.tres",
                        "properties": {"stencil_mode": 1, "render_priority": 1}})
    assert reply["result"] == "error", reply
    error = reply["error"]
    assert isinstance(error, dict) and error["code"] == "save_failed" and "(next_pass differs)" in error["message"]
    assert snapshot(project) == before


def test_without_the_overwrite_the_same_resource_is_written(bridge: Bridge, project: Path) -> None:
    """The control: with the default radii the hint computed in memory and on load agree."""
    reply = create(bridge, project, "TorusMesh", {"add_uv2": True})
    assert reply["result"] == "ok", reply
    assert "add_uv2 = true" in (project / "proof/made.tres").read_text()
