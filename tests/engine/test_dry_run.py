"""dry_run: every writing operation does all it would do (validation, the engine's save to a temp
file, the proof) and changes nothing; its reply lists each file with the unified diff that the
real run then writes."""

from __future__ import annotations

import difflib
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from conftest import file_etag, run_cli
from engine.test_imports import style_box, textured  # noqa: F401  (the fixture)
from gdres import Bridge
from gdres.requests.models import parse_request

WRITES: dict[str, list[dict[str, Any]]] = {
    "material_create, new folders": [
        {"op": "material_create", "material_type": "StandardMaterial3D", "resource_path": "new/deep/red.tres",
         "properties": {"albedo_color": "#ff0000", "roughness": 0.25}}],
    "material_create over a file": [
        {"op": "material_create", "material_type": "StandardMaterial3D", "save_path": "materials/base.tres",
         "properties": {"metallic": 1.0}}],
    "style_box_create": [
        {"op": "style_box_create", "style_type": "StyleBoxFlat", "resource_path": "ui/panel.tres",
         "properties": {"bg_color": "#202830", "corner_radius_top_left": 6}}],
    "resource_create with embedded resources": [
        {"op": "resource_create", "resource_type": "Environment", "resource_path": "env.tres",
         "properties": {"background_mode": "BG_SKY", "sky": {"type": "Sky", "properties": {
             "sky_material": {"type": "ProceduralSkyMaterial",
                              "properties": {"sky_top_color": [0.2, 0.4, 0.8, 1]}}}}}}],
    "shape_create into a file and a scene": [
        {"op": "shape_create", "shape_type": "BoxShape3D", "shape_params": {"size": [1, 2, 3]},
         "save_path": "shapes/box.tres", "scene_path": "scenes/level.tscn", "node_path": "Floor/FloorShape"}],
    "resource_duplicate": [
        {"op": "resource_duplicate", "source_path": "materials/layered.tres", "dest_path": "copies/layered.tres",
         "property_overrides": {"roughness": 0.1}}],
    "resource_duplicate, deep": [
        {"op": "resource_duplicate", "source_path": "materials/layered.tres", "dest_path": "copies/deep.tres",
         "deep_copy": True}],
    "resource_update": [
        {"op": "resource_update", "path": "materials/layered.tres", "properties": {"roughness": 0.3},
         "reset": ["next_pass"]}],
}


def state(root: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (None) under `root`: what "nothing changed" compares."""
    return {p.relative_to(root).as_posix(): p.read_bytes() if p.is_file() else None for p in sorted(root.rglob("*"))}


def real_diff(path: str, before: bytes | None, after: bytes) -> str:
    """The unified diff of one file from before to after a real run, named as git names them."""
    old = before.decode().splitlines(keepends=True) if before is not None else []
    return "".join(difflib.unified_diff(old, after.decode().splitlines(keepends=True),
                                        "/dev/null" if before is None else f"a/{path}", f"b/{path}"))


@pytest.mark.parametrize("what", sorted(WRITES))
def test_a_dry_run_changes_nothing_and_its_diff_is_what_the_real_run_writes(
        bridge: Bridge, project: Path, what: str) -> None:
    for each in WRITES[what]:
        request = {**each, "project_path": str(project)}
        before = state(project)
        dry = bridge.run({**request, "dry_run": True})
        assert dry["result"] == "ok" and dry["dry_run"] is True, dry
        assert state(project) == before, "the dry run changed the project"
        real = bridge.run(request)
        assert real["result"] == "ok" and "dry_run" not in real and "changes" not in real, real
        after = state(project)
        changed = sorted(path for path, data in after.items() if data is not None and before.get(path) != data)
        assert sorted(change["path"] for change in dry["changes"]) == changed
        for change in dry["changes"]:
            path = change["path"]
            assert change["action"] == ("modify" if before.get(path) is not None else "create")
            expected = real_diff(path, before.get(path), after[path])  # type: ignore[arg-type]
            # A new file's uid is drawn at random on each save, as the editor draws it: the dry run
            # says the one it drew; the rest of the diff is the real run's, line for line.
            assert change["diff"].replace(dry.get("uid", "-"), real.get("uid", "-")) == expected
        assert {key: value for key, value in dry.items() if key not in ("dry_run", "changes", "uid", "etag")} == {
            key: value for key, value in real.items() if key not in ("uid", "etag")}
        # The etag of the file the request rewrites: a dry run's of it as it is (none for a file not
        # there yet), the real run's of what it wrote.
        model = parse_request(request)
        assert model.subject is not None
        subject = str(request[model.spelled(model.subject)]).removeprefix("res://")
        old = before.get(subject)
        assert dry.get("etag") == (hashlib.sha256(old).hexdigest() if old is not None else None)
        assert real["etag"] == file_etag(project / subject)


def test_a_dry_run_of_a_shape_kept_in_memory_lists_no_change(bridge: Bridge, project: Path) -> None:
    reply = bridge.run({"op": "shape_create", "project_path": str(project), "shape_type": "SphereShape3D",
                        "shape_params": {"radius": 2}, "dry_run": True})
    assert reply == {"op": "shape_create", "shape_type": "SphereShape3D", "type": "SphereShape3D", "dry_run": True,
                     "changes": [],
                     "result": "ok"}


@pytest.mark.parametrize(("request_", "code"), [
    ({"op": "material_create", "material_type": "StandardMaterial3D", "resource_path": "new/x.tres",
      "properties": {"albedo_colour": "#ff0000"}}, "unknown_property"),
    ({"op": "resource_update", "resource_path": "materials/base.tres", "properties": {"metallic": "shiny"}},
     "invalid_value"),
    ({"op": "resource_duplicate", "source_path": "materials/none.tres", "dest_path": "new/x.tres"}, "not_found"),
    ({"op": "shape_create", "shape_type": "CircleShape2D", "scene_path": "scenes/level.tscn",
      "node_path": "Floor/FloorShape"}, "incompatible_node"),
])
def test_a_dry_run_fails_as_the_real_run_would(
        bridge: Bridge, project: Path, request_: dict[str, Any], code: str) -> None:
    request = {**request_, "project_path": str(project)}
    before = state(project)
    dry = bridge.run({**request, "dry_run": True})
    assert dry["error"]["code"] == code
    assert dry == bridge.run(request)
    assert state(project) == before


def test_a_dry_run_does_not_import_the_project(textured: Path, bridge: Bridge) -> None:  # noqa: F811
    before = state(textured)
    reply = bridge.run({**style_box(textured), "dry_run": True})
    assert reply["error"]["code"] == "not_imported"
    assert "a dry run does not import" in reply["error"]["message"]
    assert state(textured) == before


def test_a_dry_run_is_a_member_of_writing_operations_only(bridge: Bridge, project: Path) -> None:
    reply = bridge.run({"op": "resource_read", "project_path": str(project), "resource_path": "materials/base.tres",
                        "dry_run": True})
    assert reply["error"]["code"] == "invalid_request" and "dry_run" in reply["error"]["message"]


def test_the_cli_prints_a_dry_runs_diff(project: Path, godot_bin: str) -> None:

    request = {"op": "resource_update", "project_path": str(project), "resource_path": "materials/base.tres",
               "properties": {"metallic": 0.75}, "dry_run": True}
    done = run_cli("run", json.dumps(request), godot=godot_bin)
    assert done.returncode == 0, done.stderr
    (change,) = json.loads(done.stdout)["changes"]
    assert change["path"] == "materials/base.tres" and "\n+metallic = 0.75\n" in change["diff"]
