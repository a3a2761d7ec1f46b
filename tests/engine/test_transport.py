"""The pipe to the engine: framing survives whatever else is printed, any size, any text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import file_etag, file_uid, run_cli, snapshot
from gdres import Bridge


def read(bridge: Bridge, project: Path, path: str, **extra: object) -> dict[str, Any]:
    return bridge.run({"op": "resource_read", "project_path": str(project), "resource_path": path, **extra})


def test_material_created_reads_back_as_the_engine_saved_it(bridge: Bridge, project: Path) -> None:
    created = bridge.run({
        "op": "material_create", "project_path": str(project), "material_type": "StandardMaterial3D",
        "resource_path": "materials/red.tres",
        "properties": {"albedo_color": "#ff8000", "roughness": 0.3, "metallic": 1, "normal_enabled": True},
    })
    assert created == {"op": "material_create", "resource_path": "materials/red.tres",
                       "type": "StandardMaterial3D", "uid": file_uid(project / "materials/red.tres"),
                       "etag": file_etag(project / "materials/red.tres"), "result": "ok"}
    text = (project / "materials/red.tres").read_text()
    assert text.startswith('[gd_resource type="StandardMaterial3D" format=3 uid="uid://')
    assert "albedo_color = Color(1, 0.5019608, 0, 1)" in text and "roughness = 0.3" in text
    reply = read(bridge, project, "materials/red.tres")
    assert reply["properties"] == {"albedo_color": [1.0, 0.5019608, 0.0, 1.0], "roughness": 0.3,
                                   "metallic": 1.0, "normal_enabled": True}
    assert reply["type"] == "StandardMaterial3D" and reply["script"] is None


def test_user_script_printing_on_both_streams_cannot_forge_a_reply(bridge: Bridge, project: Path) -> None:
    reply = read(bridge, project, "noisy.tres", allow_scripts=True, id="n1")
    assert reply["result"] == "ok", reply
    assert reply["id"] == "n1"
    assert reply["script"] == "res://scripts/noisy.gd"
    assert reply["properties"]["label"] == "loud"
    assert read(bridge, project, "materials/base.tres")["result"] == "ok"


def test_cli_stdout_carries_only_the_reply_when_scripts_print(godot_bin: str, project: Path) -> None:
    request = {"op": "resource_read", "project_path": str(project), "resource_path": "noisy.tres",
               "allow_scripts": True}
    done = run_cli("--godot", godot_bin, "run", json.dumps(request))
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["properties"]["label"] == "loud"


def test_project_with_stdout_flushing_off_is_served(bridge: Bridge, project: Path) -> None:
    with (project / "project.godot").open("a") as f:
        f.write("\n[application]\n\nrun/flush_stdout_on_print=false\nrun/flush_stdout_on_print.debug=false\n")
    reply = read(bridge, project, "materials/base.tres")
    assert reply["result"] == "ok" and reply["properties"]["roughness"] == 0.25


def test_a_20_mb_request_round_trips(bridge: Bridge, project: Path) -> None:
    name = ("ünïcødé \"quoted\" back\\slash\nnew line 🎮 " * 400_000)[:20_000_000]
    assert len(json.dumps(name)) > 20_000_000
    created = bridge.run({"op": "material_create", "project_path": str(project),
                          "material_type": "StandardMaterial3D", "resource_path": "big.tres",
                          "properties": {"resource_name": name}})
    assert created["result"] == "ok", created.get("error")
    reply = read(bridge, project, "big.tres", properties=["resource_name"])
    assert reply["properties"]["resource_name"] == name


def test_unicode_paths_and_values(bridge: Bridge, project: Path) -> None:
    path = "matériaux/日本語 ñandú.tres"
    created = bridge.run({"op": "material_create", "project_path": str(project),
                          "material_type": "StandardMaterial3D", "resource_path": path,
                          "properties": {"resource_name": "Grüße, мир, 世界 🎮"}})
    assert created["resource_path"] == path and created["result"] == "ok"
    assert (project / path).is_file()
    reply = read(bridge, project, path)
    assert reply["resource_path"] == path
    assert reply["properties"]["resource_name"] == "Grüße, мир, 世界 🎮"


def test_one_warm_engine_serves_many_requests_and_sees_fresh_files(bridge: Bridge, project: Path) -> None:
    first = read(bridge, project, "materials/base.tres")
    pid = bridge.prewarm(str(project), wait=True)[0].pid
    target = project / "materials/base.tres"
    target.write_text(target.read_text().replace("roughness = 0.25", "roughness = 0.75"))
    second = read(bridge, project, "materials/base.tres")
    assert (first["properties"]["roughness"], second["properties"]["roughness"]) == (0.25, 0.75)
    assert bridge.prewarm(str(project), wait=True)[0].pid == pid


def test_the_project_receives_only_the_requested_file(bridge: Bridge, project: Path) -> None:
    before = snapshot(project)
    bridge.run({"op": "material_create", "project_path": str(project), "material_type": "PhysicsMaterial",
                "save_path": "physics/ice.tres", "properties": {"friction": 0.05, "rough": True}})
    read(bridge, project, "physics/ice.tres")
    after = snapshot(project)
    assert set(after) - set(before) == {"physics/ice.tres"}
    assert {k: v for k, v in after.items() if k in before} == before
