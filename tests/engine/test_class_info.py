"""class_info: a resource class as the engine's ClassDB has it, and only what a request may set.

Each reply is held against ClassDB read in the same engine by a script of the test's own
(tests/gdscript/class_db_dump.gd), and every property listed is set through a real request.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, run_cli
from gdres import Bridge, InvalidType
from gdres.requests.models import ClassInfo

CLASSES = ["StandardMaterial3D", "ShaderMaterial", "CanvasItemMaterial", "BoxShape3D", "CapsuleShape2D",
           "StyleBoxFlat", "GradientTexture2D", "NoiseTexture2D", "Environment", "Curve", "Gradient"]


@pytest.fixture(scope="module")
def class_db(godot_bin: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """What ClassDB says of each class of CLASSES, read by the test's own engine script."""
    work = tmp_path_factory.mktemp("class_db")
    done = subprocess.run([godot_bin, "--headless", "-s", str(REPO / "tests" / "gdscript" / "class_db_dump.gd"),
                           "--", *CLASSES], capture_output=True, timeout=120, cwd=work)
    line = next(line for line in done.stdout.decode().splitlines() if line.startswith("{"))
    dumped: dict[str, Any] = json.loads(line)
    return dumped


@pytest.fixture(scope="module")
def infos(godot_bin: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    project = tmp_path_factory.mktemp("info")
    (project / "project.godot").write_text("config_version=5\n")
    with Bridge(godot_bin) as bridge:
        return {name: bridge.call(ClassInfo(project_path=str(project), class_name=name)) for name in CLASSES}


@pytest.mark.parametrize("name", CLASSES)
def test_the_ancestry_and_inheritors_are_classdbs(infos: dict[str, Any], class_db: dict[str, Any], name: str) -> None:
    info, db = infos[name], class_db[name]
    assert (info["op"], info["class_name"], info["result"]) == ("class_info", name, "ok")
    assert info["inherits"] == db["inherits"] and info["inherits"][-1] == "Object"
    assert set(info["inheritors"]) <= set(db["inheritors"])


@pytest.mark.parametrize("name", CLASSES)
def test_every_stored_property_is_listed_with_classdbs_type_default_and_constants(
    infos: dict[str, Any], class_db: dict[str, Any], name: str
) -> None:
    listed = {prop["name"]: prop for prop in infos[name]["properties"]}
    for prop in class_db[name]["properties"]:
        if prop["name"] in ("script", "resource_path", "resource_scene_unique_id"):
            assert prop["name"] not in listed  # a request may not set them
            continue
        assert prop["name"] in listed, prop["name"]
        shown = listed[prop["name"]]
        assert shown["type"] == prop["type"], prop["name"]
        if prop["has_default"]:
            assert shown["default"] == pytest.approx(prop["default"]), prop["name"]
        assert shown.get("enum", {}) == prop["enum"], prop["name"]
        if "range" in prop:
            assert shown["range"]["min"] == prop["range"][0] and shown["range"]["max"] == prop["range"][1]


def test_what_users_look_for_is_there(infos: dict[str, Any]) -> None:
    material = {prop["name"]: prop for prop in infos["StandardMaterial3D"]["properties"]}
    assert material["albedo_color"] == {"name": "albedo_color", "type": "Color", "default": [1, 1, 1, 1]}
    assert material["transparency"]["enum"]["TRANSPARENCY_ALPHA"] == 1 and material["transparency"]["flags"] is False
    assert material["roughness"]["range"] == {"min": 0, "max": 1, "step": 0.01}
    assert material["albedo_texture"]["type"] == "Texture2D" and material["next_pass"]["type"] == "Material"
    assert infos["StandardMaterial3D"]["inherits"][:2] == ["BaseMaterial3D", "Material"]
    box = {prop["name"]: prop for prop in infos["BoxShape3D"]["properties"]}
    assert box["size"] == {"name": "size", "type": "Vector3", "default": [1, 1, 1]}
    noise = {prop["name"]: prop for prop in infos["NoiseTexture2D"]["properties"]}
    assert noise["width"]["range"]["max"] == 2048 and noise["width"]["range"]["or_greater"] is True


@pytest.mark.parametrize("name", ["StandardMaterial3D", "StyleBoxFlat", "BoxShape3D", "Environment", "Gradient"])
def test_every_property_listed_can_be_set_by_a_request(infos: dict[str, Any], bridge: Bridge, project: Path,
                                                       name: str) -> None:
    # Each set on its own, to its default: a value another property resets would say nothing here.
    for prop in infos[name]["properties"]:
        if prop["default"] is None:
            continue
        reply = bridge.run({"op": "resource_create", "project_path": str(project), "resource_type": name,
                            "resource_path": "info/made.tres", "properties": {prop["name"]: prop["default"]}})
        assert reply["result"] == "ok", (prop, reply)


def test_an_abstract_class_shows_what_can_be_made_from_it(bridge: Bridge, project: Path) -> None:
    reply = bridge.call(ClassInfo(project_path=str(project), class_name="Material"))
    assert {"StandardMaterial3D", "ShaderMaterial", "ORMMaterial3D"} <= set(reply["inheritors"])
    assert "Material" not in reply["inheritors"] and "BaseMaterial3D" not in reply["inheritors"]  # abstract


@pytest.mark.parametrize(("name", "says"), [
    ("Gradiant", "did you mean Gradient"),
    ("BoxShape", "did you mean BoxShape3D (its name since Godot 4)"),
    ("Node3D", "Node3D is not a Resource"),
    ("GDScript", "GDScript is code"),
    ("", "the engine has no class"),
])
def test_a_class_it_does_not_describe_is_invalid_type_with_a_way_out(bridge: Bridge, project: Path, name: str,
                                                                     says: str) -> None:
    with pytest.raises(InvalidType, match=re.escape(says)):
        bridge.call(ClassInfo(project_path=str(project), class_name=name))


def test_the_command_line_serves_it_and_writes_nothing(godot_bin: str, project: Path) -> None:
    before = sorted(project.rglob("*"))
    done = run_cli("run", json.dumps({"op": "class_info", "project_path": str(project), "class_name": "Curve"}),
                   godot=godot_bin)
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout)
    assert reply["class_name"] == "Curve" and any(prop["name"] == "point_count" for prop in reply["properties"])
    assert sorted(project.rglob("*")) == before
