"""The value codec both ways, through the real engine: what resource_read prints goes back in unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import snapshot
from gdres import Bridge

TWENTY: dict[str, Any] = {
    "next_pass": "materials/base.tres",
    "transparency": "TRANSPARENCY_ALPHA_SCISSOR",
    "cull_mode": "CULL_FRONT",
    "diffuse_mode": "DIFFUSE_TOON",
    "albedo_color": "#336699cc",
    "albedo_texture": "res://values/deep.tres::GradientTexture1D_ramp",
    "metallic": 0.3,
    "roughness": 0.7,
    "emission_enabled": True,
    "emission": {"r": 1, "g": 0.25, "b": 0},
    "emission_energy_multiplier": 2.5,
    "normal_enabled": True,
    "rim_enabled": True,
    "rim": 0.1,
    "uv1_scale": {"x": 2, "y": 3, "z": 1},
    "uv1_offset": [0.5, 0.25, 0],
    "grow": True,
    "grow_amount": "inf",
    "billboard_mode": "BILLBOARD_ENABLED",
    "stencil_outline_thickness": 0.02,
}


def _read(bridge: Bridge, project: Path, path: str) -> dict[str, Any]:
    reply = bridge.run({"op": "resource_read", "project_path": str(project), "resource_path": path})
    assert reply["result"] == "ok", reply
    return reply


def test_read_create_read_round_trip_is_identical(project: Path, bridge: Bridge) -> None:
    made = bridge.run({"op": "material_create", "project_path": str(project), "resource_path": "a.tres",
                       "material_type": "StandardMaterial3D", "properties": TWENTY})
    assert made["result"] == "ok", made
    first = _read(bridge, project, "a.tres")
    # The engine also stores alpha_scissor_threshold and alpha_antialiasing_mode once scissor is on.
    assert set(TWENTY) <= set(first["properties"])
    again = bridge.run({"op": "material_create", "project_path": str(project), "resource_path": "b.tres",
                        "material_type": first["type"], "properties": first["properties"]})
    assert again["result"] == "ok", again
    second = _read(bridge, project, "b.tres")
    # The embedded texture becomes b.tres's own sub-resource, named by b's path.
    expected = json.dumps(first["properties"]).replace("res://a.tres::", "res://b.tres::")
    assert json.dumps(second["properties"]) == expected


def test_double_keeps_its_precision_and_float32_prints_short(project: Path, bridge: Bridge) -> None:
    (project / "values" / "precise.tres").write_text(
        '[gd_resource type="GLTFAccessor" format=3]\n\n[resource]\nmin = PackedFloat64Array(0.1, 0.123456789012345)\n'
    )
    assert _read(bridge, project, "values/precise.tres")["properties"]["min"] == [0.1, 0.123456789012345]
    made = bridge.run({"op": "material_create", "project_path": str(project), "resource_path": "c.tres",
                       "material_type": "StandardMaterial3D", "properties": {"roughness": 0.1}})
    assert made["result"] == "ok"
    assert _read(bridge, project, "c.tres")["properties"]["roughness"] == 0.1


def test_a_refused_value_writes_nothing_even_after_good_ones(project: Path, bridge: Bridge) -> None:
    before = snapshot(project)
    reply = bridge.run({"op": "style_box_create", "project_path": str(project), "resource_path": "s.tres",
                        "style_type": "StyleBoxFlat",
                        "properties": {"bg_color": "#ffffff", "corner_detail": 64}})
    assert reply["error"]["code"] == "invalid_value"
    assert "corner_detail" in reply["error"]["message"]
    assert snapshot(project) == before


def test_a_value_the_engine_would_not_save_is_refused(project: Path, bridge: Bridge) -> None:
    # Per-vertex shading hides normal mapping: the engine would accept the value, then drop it on save.
    before = snapshot(project)
    reply = bridge.run({"op": "material_create", "project_path": str(project), "resource_path": "n.tres",
                        "material_type": "StandardMaterial3D",
                        "properties": {"shading_mode": "SHADING_MODE_PER_VERTEX", "normal_enabled": True}})
    assert reply["error"]["code"] == "invalid_value"
    assert "normal_enabled" in reply["error"]["message"]
    assert snapshot(project) == before


def test_a_value_equal_to_its_default_is_kept_though_the_file_leaves_it_out(project: Path, bridge: Bridge) -> None:
    # The saver writes no property that holds its default: that is no value dropped.
    made = bridge.run({"op": "material_create", "project_path": str(project), "resource_path": "d.tres",
                       "material_type": "StandardMaterial3D", "properties": {"roughness": 1.0, "metallic": 0.5}})
    assert made["result"] == "ok", made
    assert "roughness" not in (project / "d.tres").read_text()
    assert _read(bridge, project, "d.tres")["properties"] == {"metallic": 0.5}


def test_a_text_that_looks_like_a_property_line_does_not_hide_a_dropped_value(project: Path, bridge: Bridge) -> None:
    # The saved name spans two lines, the second reading "normal_enabled = true" as if it were stored.
    before = snapshot(project)
    reply = bridge.run({"op": "material_create", "project_path": str(project), "resource_path": "n.tres",
                        "material_type": "StandardMaterial3D",
                        "properties": {"resource_name": "x\nnormal_enabled = true",
                                       "shading_mode": "SHADING_MODE_PER_VERTEX", "normal_enabled": True}})
    assert reply["error"]["code"] == "invalid_value"
    assert "normal_enabled" in reply["error"]["message"]
    assert snapshot(project) == before


def test_a_colour_in_0_255_is_refused_with_its_0_1_form(project: Path, bridge: Bridge) -> None:
    before = snapshot(project)
    reply = bridge.run({"op": "material_create", "project_path": str(project), "material_type": "StandardMaterial3D",
                        "resource_path": "c.tres", "properties": {"albedo_color": [255, 128, 0]}})
    assert reply["error"]["code"] == "invalid_value"
    assert "0-255" in reply["error"]["message"] and '"#ff8000"' in reply["error"]["message"]
    assert snapshot(project) == before
    hdr = bridge.run({"op": "material_create", "project_path": str(project), "material_type": "StandardMaterial3D",
                      "resource_path": "h.tres", "properties": {"emission": [4, 2, 1], "albedo_color": [20.5, 1, 1]}})
    assert hdr["result"] == "ok", hdr


@pytest.mark.parametrize(("written", "expected"), [
    ("#f00", [1.0, 0.0, 0.0, 1.0]), ("#f008", [1.0, 0.0, 0.0, 0.53]),
    ("red", [1.0, 0.0, 0.0, 1.0]), ("Dark_Green", [0.0, 0.39, 0.0, 1.0]),
])
def test_a_colour_is_read_from_text_as_the_engine_reads_it(project: Path, bridge: Bridge, written: str,
                                                           expected: list[float]) -> None:
    made = bridge.run({"op": "material_create", "project_path": str(project), "material_type": "StandardMaterial3D",
                       "resource_path": "c.tres", "properties": {"albedo_color": written}})
    assert made["result"] == "ok", made
    colour = _read(bridge, project, "c.tres")["properties"]["albedo_color"]
    assert [round(part, 2) for part in colour] == expected


def test_a_colour_name_the_engine_does_not_know_is_refused(project: Path, bridge: Bridge) -> None:
    reply = bridge.run({"op": "material_create", "project_path": str(project), "material_type": "StandardMaterial3D",
                        "resource_path": "c.tres", "properties": {"albedo_color": "reddish"}})
    assert reply["error"]["code"] == "invalid_value", reply
