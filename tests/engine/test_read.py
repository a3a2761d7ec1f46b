"""resource_read against the real engine: fresh from disk on every request, and no script runs unasked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import snapshot
from gdres import Bridge

MARKS = ("values/scripted/loaded.txt", "values/scripted/created.txt")


def _read(bridge: Bridge, project: Path, path: str, **fields: object) -> dict[str, Any]:
    return bridge.run({"op": "resource_read", "project_path": str(project), "resource_path": path, **fields})


def test_a_file_changed_between_requests_is_seen(project: Path, bridge: Bridge) -> None:
    base = project / "materials" / "base.tres"
    first = _read(bridge, project, "values/deep.tres")
    base.write_text(base.read_text().replace("roughness = 0.25", "roughness = 0.75"))
    nested = _read(bridge, project, "values/deep.tres")
    direct = _read(bridge, project, "materials/base.tres")
    assert first["properties"]["next_pass"]["properties"]["roughness"] == 0.25
    assert direct["properties"]["roughness"] == 0.75
    assert nested["properties"]["next_pass"]["properties"]["roughness"] == 0.75


@pytest.mark.parametrize("path", ["values/scripted/carrier.tres", "values/scripted/wrapper.tres",
                                  "values/scripted/scene.tscn"])
def test_no_script_runs_without_allow_scripts(project: Path, bridge: Bridge, path: str) -> None:
    before = snapshot(project)
    reply = _read(bridge, project, path)
    assert reply["error"]["code"] == "unsafe_resource"
    assert snapshot(project) == before
    assert not any((project / mark).exists() for mark in MARKS)


def test_allow_scripts_loads_and_reports_the_script(project: Path, bridge: Bridge) -> None:
    reply = _read(bridge, project, "values/scripted/carrier.tres", allow_scripts=True)
    assert reply["result"] == "ok", reply
    assert reply["type"] == "ShaderMaterial"
    assert reply["script"] == "res://values/scripted/marker.gd"
    # Proof that the gate above is real: loading with permission does run the script's code.
    assert (project / "values/scripted/created.txt").exists()


def test_a_scene_without_scripts_reads_without_instancing(project: Path, bridge: Bridge) -> None:
    reply = _read(bridge, project, "values/plain.tscn")
    assert reply["type"] == "PackedScene"
    bundled = reply["properties"]["_bundled"]
    assert bundled["names"][:2] == ["Root", "Node3D"] and bundled["node_count"] == 2


def test_a_dependency_cycle_fails_cleanly(project: Path, bridge: Bridge) -> None:
    reply = _read(bridge, project, "values/cycle_a.tres", depth=50)
    assert reply["error"]["code"] == "load_failed"
    assert _read(bridge, project, "materials/base.tres")["result"] == "ok"


def test_reading_a_scene_loads_its_scripts_but_instances_no_node(project: Path, bridge: Bridge) -> None:
    reply = _read(bridge, project, "values/scripted/scene.tscn", allow_scripts=True)
    assert reply["type"] == "PackedScene", reply
    # Why a scene with scripts needs allow_scripts: the static initialiser ran at load...
    assert (project / "values/scripted/loaded.txt").exists()
    # ...but no node was created, so no _init ran.
    assert not (project / "values/scripted/created.txt").exists()


def test_a_property_shown_only_in_some_states_is_not_stored_at_its_default(project: Path, bridge: Bridge) -> None:
    # Particle billboards and deep parallax show properties the class hides otherwise, so ClassDB
    # knows no default for them; a fresh instance does.
    (project / "shown.tres").write_text('[gd_resource type="StandardMaterial3D" format=3]\n\n[resource]\n'
                                        'billboard_mode = 3\nheightmap_enabled = true\nheightmap_deep_parallax = true\n'
                                        'particles_anim_h_frames = 4\n')
    reply = bridge.resource_read(str(project), "shown.tres")
    assert reply["properties"] == {"heightmap_enabled": True, "heightmap_deep_parallax": True,
                                   "billboard_mode": 3, "particles_anim_h_frames": 4}
