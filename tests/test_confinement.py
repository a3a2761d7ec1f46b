"""Values Python must refuse itself: what no property can hold, in the member it appears in."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from bridge import Bridge

pytestmark = pytest.mark.godot


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("plain") / "project"
    project.mkdir()
    (project / "project.godot").write_text("config_version=5\n")
    return project


@pytest.fixture(scope="module")
def bridge(godot_bin: str) -> Iterator[Bridge]:
    with Bridge(godot_bin) as b:
        yield b


@pytest.mark.parametrize("request_, code", [
    ({"op": "material_create", "material_type": "StandardMaterial3D", "resource_path": "n.tres",
      "properties": {"resource_name": "before\0after"}}, "invalid_value"),
    ({"op": "material_create", "material_type": "StandardMaterial3D", "resource_path": "n.tres",
      "properties": {"metadata/list": ["a\0b"]}}, "invalid_value"),
    ({"op": "resource_read", "resource_path": "n.tres", "depth": float("inf")}, "invalid_request"),
    ({"op": "resource_read", "resource_path": "n.tres", "depth": float("nan")}, "invalid_request"),
])
def test_values_python_must_refuse(plain: Path, bridge: Bridge, request_: dict[str, Any], code: str) -> None:
    reply = bridge.run({**request_, "project_path": str(plain)})
    assert reply["result"] == "error" and reply["error"]["code"] == code, reply
    assert not (plain / "n.tres").exists()
