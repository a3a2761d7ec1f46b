"""Fuzzing with hypothesis: request validation, and the engine's value codec on random properties.

Every reply must be `ok` or carry one of the stable error codes, no call may raise, and the one
engine process serving the run must still be the same process at the end (nothing crashed it).
"""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gdres import Bridge
from gdres.errors import ERROR_CLASSES
from gdres.requests.models import SHAPE_TYPES, STYLE_TYPES

MATERIALS = ["StandardMaterial3D", "ORMMaterial3D", "ShaderMaterial", "CanvasItemMaterial",
             "ParticleProcessMaterial", "PhysicsMaterial", "FogMaterial", "ProceduralSkyMaterial"]
REQUEST_CODES = set(ERROR_CLASSES) - {"engine_crashed", "timeout", "skipped", "engine_not_found",
                                      "engine_unsupported"}
# Derandomized so that CI runs the same 400 cases every time; no example database in the repo.
FUZZ = settings(max_examples=400, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                       HealthCheck.data_too_large])

scalars = st.one_of(
    st.none(), st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63),
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(min_value=-1e6, max_value=1e6),
    st.sampled_from(["nan", "inf", "-inf", "#ff8000", "#12345678", "#xyz", "", "res://materials/base.tres",
                     "materials/base.tres", "../outside.tres", "res://.godot/x.tres", "noisy.tres",
                     "TRANSPARENCY_ALPHA", "BLEND_MODE_ADD", "\u0000", "🎮", "a" * 300]),
    st.text(max_size=20),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=6),
                            st.dictionaries(st.sampled_from([*"xyzwrgba", "type", "path", "k"]), inner,
                                            max_size=5)),
    max_leaves=20,
)


def near(value: Any) -> st.SearchStrategy[Any]:
    """Values close to a valid one: same shape with changed numbers, one element more or less."""
    if isinstance(value, bool):
        return st.one_of(st.booleans(), st.integers(-2, 2))
    if isinstance(value, (int, float)):
        return st.one_of(st.integers(-(2**40), 2**40), st.floats(allow_nan=False, allow_infinity=False),
                         st.just(-value), st.sampled_from(["nan", "inf"]))
    if isinstance(value, list):
        items = [near(item) for item in value] or [json_values]
        return st.one_of(st.tuples(*items).map(list), st.lists(st.one_of(*items), max_size=len(value) + 2))
    if isinstance(value, dict):
        return st.fixed_dictionaries({key: near(item) for key, item in value.items()})
    return json_values


def reply_code(reply: dict[str, Any]) -> str:
    assert isinstance(reply, dict) and reply.get("result") in ("ok", "error"), reply
    return "ok" if reply["result"] == "ok" else reply["error"]["code"]


@pytest.fixture(scope="module")
def fuzz_project(module_project: Path) -> Path:
    return module_project


@pytest.fixture(scope="module")
def fuzz_bridge(module_bridge: Bridge) -> Bridge:
    return module_bridge


@pytest.fixture(scope="module")
def known_properties(fuzz_bridge: Bridge, fuzz_project: Path) -> dict[str, dict[str, Any]]:
    """Every class under test -> its stored properties with their default values, as the engine reports them."""
    found: dict[str, dict[str, Any]] = {}
    base = {"project_path": str(fuzz_project)}
    for cls in MATERIALS + list(SHAPE_TYPES) + list(STYLE_TYPES):
        path = f"defaults/{cls}.tres"
        if cls in MATERIALS:
            made = fuzz_bridge.run({**base, "op": "material_create", "material_type": cls, "resource_path": path})
        elif cls in STYLE_TYPES:
            made = fuzz_bridge.run({**base, "op": "style_box_create", "style_type": cls, "resource_path": path})
        else:
            made = fuzz_bridge.run({**base, "op": "shape_create", "shape_type": cls, "save_path": path})
        assert made["result"] == "ok", made
        read = fuzz_bridge.run({**base, "op": "resource_read", "resource_path": path, "include_defaults": True})
        found[cls] = read["properties"]
    return found


def creation(project: Path, cls: str, properties: dict[str, Any]) -> dict[str, Any]:
    base = {"project_path": str(project), "properties": properties}
    if cls in MATERIALS:
        return {**base, "op": "material_create", "material_type": cls, "resource_path": "fuzz/made.tres"}
    if cls in STYLE_TYPES:
        return {**base, "op": "style_box_create", "style_type": cls, "resource_path": "fuzz/made.tres"}
    return {**base, "op": "shape_create", "shape_type": cls}


@pytest.mark.timeout(600)
def test_random_values_for_random_properties_of_random_classes(
        fuzz_bridge: Bridge, fuzz_project: Path, known_properties: dict[str, dict[str, Any]]) -> None:
    pid = fuzz_bridge.prewarm(str(fuzz_project), wait=True)[0].pid
    seen: dict[str, int] = {}

    @FUZZ
    @given(st.data())
    def one_request(data: st.DataObject) -> None:
        cls = data.draw(st.sampled_from(sorted(known_properties)))
        known = known_properties[cls]
        # Mostly real property names, now and then a forbidden or unknown one.
        names = st.sampled_from(sorted(known) * 8 + ["script", "resource_path", "bogus"])
        properties: dict[str, Any] = {}
        for name in data.draw(st.lists(names, min_size=1, max_size=3, unique=True)):
            default = known.get(name)
            properties[name] = data.draw(st.one_of(near(default), near(default), json_values)
                                         if name in known else json_values)
        code = reply_code(fuzz_bridge.run(creation(fuzz_project, cls, properties)))
        assert code == "ok" or code in REQUEST_CODES, code
        seen[code] = seen.get(code, 0) + 1

    one_request()
    print(f"\ncodec fuzz replies: {dict(sorted(seen.items()))}")
    assert fuzz_bridge.prewarm(str(fuzz_project), wait=True)[0].pid == pid, "the engine was replaced: it died"
    assert seen.get("ok", 0) > 20 and seen.get("invalid_value", 0) > 20


TEMPLATES: dict[str, dict[str, Any]] = {
    "resource_read": {"resource_path": "materials/base.tres"},
    "material_create": {"material_type": "StandardMaterial3D", "resource_path": "fuzz/r.tres"},
    "shape_create": {"shape_type": "BoxShape3D", "scene_path": "scenes/level.tscn",
                     "node_path": "Floor/FloorShape"},
    "style_box_create": {"style_type": "StyleBoxFlat", "resource_path": "fuzz/s.tres"},
    "resource_duplicate": {"source_path": "materials/base.tres", "dest_path": "fuzz/d.tres"},
}
COMMON = ["id", "project_path", "allow_scripts"]
MEMBERS: dict[str, list[str]] = {
    "resource_read": [*COMMON, "resource_path", "path", "depth", "properties", "include_defaults"],
    "material_create": [*COMMON, "material_type", "resource_path", "save_path", "properties", "shader_path"],
    "shape_create": [*COMMON, "shape_type", "shape_params", "properties", "save_path", "scene_path", "node_path"],
    "style_box_create": [*COMMON, "style_type", "resource_path", "save_path", "properties"],
    "resource_duplicate": [*COMMON, "source_path", "dest_path", "deep_copy", "property_overrides"],
}
ANY_MEMBER = sorted({member for members in MEMBERS.values() for member in members} | {"extra"})
PROPERTY_NAMES = ["roughness", "albedo_color", "size", "radius", "bg_color", "friction", "next_pass",
                  "resource_name", "bogus", "script"]


@pytest.mark.timeout(600)
def test_random_requests_get_a_reply_with_a_known_code(fuzz_bridge: Bridge, fuzz_project: Path) -> None:
    pid = fuzz_bridge.prewarm(str(fuzz_project), wait=True)[0].pid
    seen: dict[str, int] = {}
    paths = st.one_of(st.sampled_from(["materials/base.tres", "res://materials/base.tres", "scenes/level.tscn",
                                       "noisy.tres", "fuzz/x.tres", "../x.tres", "/abs.tres", ".godot/x.tres",
                                       "project.godot", "x.gdshader", "", "a\u0000b.tres", "res://", "."]),
                      st.text(alphabet=string.ascii_letters + "./:\\", max_size=30))
    properties = st.dictionaries(st.sampled_from(PROPERTY_NAMES), json_values, max_size=3)
    values: dict[str, st.SearchStrategy[Any]] = {
        "op": st.sampled_from([*TEMPLATES, "bogus", ""]),
        "id": st.one_of(st.integers(), st.text(max_size=5)),
        "project_path": st.sampled_from([str(fuzz_project), "relative", str(fuzz_project) + "/nope", "/"]),
        "node_path": st.sampled_from(["Floor/FloorShape", "Trigger/TriggerShape", "Hud/HudShape", "Floor",
                                      "Crate", "Nope", "", ".", "../x"]),
        "material_type": st.sampled_from([*MATERIALS, "Node", "OS", "Material", "Shader", ""]),
        "shape_type": st.sampled_from([*SHAPE_TYPES, "Shape3D", ""]),
        "style_type": st.sampled_from([*STYLE_TYPES, "StyleBox", ""]),
        "depth": st.integers(-2, 5),
        "properties": properties,
        "shape_params": properties,
        "property_overrides": properties,
    }

    def value_for(op: str, member: str) -> st.SearchStrategy[Any]:
        if member == "properties" and op == "resource_read":
            typical: st.SearchStrategy[Any] = st.lists(st.sampled_from(PROPERTY_NAMES), max_size=3)
        elif member in values:
            typical = values[member]
        elif member.endswith("path"):
            typical = paths
        elif member in ("allow_scripts", "include_defaults", "deep_copy"):
            typical = st.booleans()
        else:
            typical = json_values
        return st.one_of(typical, typical, typical, json_values)

    @FUZZ
    @given(st.data())
    def one_request(data: st.DataObject) -> None:
        op = data.draw(st.sampled_from(sorted(TEMPLATES)))
        request: dict[str, Any] = {"op": op, "project_path": str(fuzz_project), **TEMPLATES[op]}
        # Mostly members the operation has, now and then any member at all.
        members = st.sampled_from(MEMBERS[op] * 4 + ANY_MEMBER)
        for member in data.draw(st.lists(members, max_size=3, unique=True)):
            if member in request and data.draw(st.integers(0, 3)) == 0:
                del request[member]
            else:
                request[member] = data.draw(value_for(op, member))
        code = reply_code(fuzz_bridge.run(request))
        assert code == "ok" or code in REQUEST_CODES, code
        seen[code] = seen.get(code, 0) + 1

    one_request()
    print(f"\nrequest fuzz replies: {dict(sorted(seen.items()))}")
    assert fuzz_bridge.prewarm(str(fuzz_project), wait=True)[0].pid == pid, "the engine was replaced: it died"
    # Which codes 400 draws reach depends on the draw, and hypothesis draws differently for
    # `pytest tests` than for this file alone: five different codes show requests got past validation.
    assert seen.get("ok", 0) > 20 and len(seen) >= 5
