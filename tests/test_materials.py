"""material_create against the real engine: UIDs as the editor keeps them, read from the written files."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bridge import Bridge

pytestmark = pytest.mark.godot

UID = re.compile(r'^\[gd_resource [^\n]*uid="(uid://[a-z0-9]+)"', re.M)


def _create(bridge: Bridge, project: Path, path: str, **properties: object) -> None:
    reply = bridge.run({"op": "material_create", "project_path": str(project), "resource_path": path,
                        "material_type": "StandardMaterial3D", "properties": properties})
    assert reply["result"] == "ok", reply


def _uid(path: Path) -> str:
    found = UID.search(path.read_text())
    assert found, path.read_text()
    return found.group(1)


def test_overwriting_keeps_the_uid(project: Path, bridge: Bridge) -> None:
    base = project / "materials" / "base.tres"
    kept = _uid(base)
    _create(bridge, project, "materials/base.tres", roughness=0.9)
    assert _uid(base) == kept
    assert "roughness = 0.9" in base.read_text()


def test_new_files_get_distinct_uids(project: Path, bridge: Bridge) -> None:
    _create(bridge, project, "new/a.tres")
    _create(bridge, project, "new/b.tres")
    uids = {_uid(project / "new/a.tres"), _uid(project / "new/b.tres"), _uid(project / "materials/base.tres")}
    assert len(uids) == 3


def test_references_carry_the_targets_uid(project: Path, bridge: Bridge) -> None:
    _create(bridge, project, "new/c.tres", next_pass="materials/base.tres")
    text = (project / "new/c.tres").read_text()
    target = _uid(project / "materials/base.tres")
    assert f'[ext_resource type="Material" uid="{target}" path="res://materials/base.tres"' in text
