"""Every path is confined to the project: through the real engine, each refusal changes nothing."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import snapshot
from gdres import Bridge


def create(bridge: Bridge, project: Path | str, path: str, **extra: object) -> dict[str, Any]:
    return bridge.run({"op": "material_create", "project_path": str(project),
                       "material_type": "StandardMaterial3D", "resource_path": path, **extra})


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.tres").write_text('[gd_resource type="StandardMaterial3D" format=3]\n\n[resource]\n')
    return folder


# Paths refused alike as request members and as values, and links: tests/unit/test_path_table.py.
REFUSED = [
    ("materials/wrong.txt", "invalid_path"),
    ("materials/no_extension", "invalid_path"),
]


@pytest.mark.parametrize(("path", "code"), REFUSED, ids=[repr(p[:40]) for p, _ in REFUSED])
def test_refused_save_paths_change_nothing(bridge: Bridge, project: Path, path: str, code: str) -> None:
    before = snapshot(project)
    reply = create(bridge, project, path)
    assert reply["result"] == "error"
    assert reply["error"]["code"] == code
    assert reply["error"]["field"] == "resource_path"
    assert reply["resource_path"] == path
    assert snapshot(project) == before


def test_symlinked_file_leading_out_is_refused(bridge: Bridge, project: Path, outside: Path) -> None:
    os.symlink(outside / "secret.tres", project / "secret.tres")
    reply = bridge.run({"op": "resource_read", "project_path": str(project), "path": "secret.tres"})
    assert reply["error"]["code"] == "path_outside_project"
    assert reply["error"]["field"] == "path"


@pytest.mark.parametrize(("make", "why"), [
    # A relative path is taken against the current folder, as on the command line (issue 26).
    (lambda tmp: "relative/project", "relative/project' is not a directory"),
    (lambda tmp: str(tmp / "missing"), "not a directory"),
    (str, "no project.godot"),
])
def test_bad_project_path(bridge: Bridge, tmp_path: Path, make: Callable[[Path], str], why: str) -> None:
    project_path = make(tmp_path)
    reply = create(bridge, project_path, "a.tres")
    assert reply["error"]["code"] == "project_not_found"
    assert why in reply["error"]["message"]
    assert reply["error"]["field"] == "project_path"


def test_res_prefix_dot_segments_and_missing_folders(bridge: Bridge, project: Path) -> None:
    for path in ("res://deep/er/a.tres", "deep/./er/../er/b.tres"):
        reply = create(bridge, project, path)
        assert reply["result"] == "ok", reply
        assert reply["resource_path"] == path
    assert sorted(p.name for p in (project / "deep/er").iterdir()) == ["a.tres", "b.tres"]


def test_a_failed_save_creates_no_folders(bridge: Bridge, project: Path) -> None:
    before = snapshot(project)
    reply = create(bridge, project, "new/folder/m.tres", properties={"roughness": "very"})
    assert reply["error"]["code"] == "invalid_value"
    assert not (project / "new").exists()
    assert snapshot(project) == before


def test_shader_and_source_paths_are_confined_too(bridge: Bridge, project: Path) -> None:
    shader = bridge.run({"op": "material_create", "project_path": str(project), "material_type": "ShaderMaterial",
                         "resource_path": "s.tres", "shader_path": "../x.gdshader"})
    assert (shader["error"]["code"], shader["error"]["field"]) == ("path_outside_project", "shader_path")
    wrong = bridge.run({"op": "material_create", "project_path": str(project), "material_type": "ShaderMaterial",
                        "resource_path": "s.tres", "shader_path": "x.tres"})
    assert (wrong["error"]["code"], wrong["error"]["field"]) == ("invalid_path", "shader_path")
    dup = bridge.run({"op": "resource_duplicate", "project_path": str(project),
                      "source_path": "/etc/passwd", "dest_path": "copy.tres"})
    assert (dup["error"]["code"], dup["error"]["field"]) == ("invalid_path", "source_path")
