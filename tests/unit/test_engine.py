"""The 4.4+ version gate with stand-ins for older engines and for none (the real binary, and doctor:
tests/engine/test_engine.py; where Godot is looked for: test_discovery.py)."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from conftest import run_cli
from gdres import Bridge
from gdres.engine.godot import parse_version, probe
from gdres.errors import EngineUnsupported

# Versions are cached per binary: each test asks its own stand-ins afresh.
pytestmark = pytest.mark.usefixtures("private_cache")


def fake_godot(folder: Path, version: str, name: str = "godot") -> Path:
    """A script that answers --version like a Godot of `version` would."""
    path = folder / name
    path.write_text(f"#!/bin/sh\necho 'Godot Engine v{version} - https://godotengine.org' >&2\necho '{version}'\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


# 4.3 lacks OS.read_buffer_from_stdin, which the worker reads requests with (tests/unit/test_api_version.py).
@pytest.mark.parametrize("version", ["4.3.stable.official.77dcf97d8", "4.2.2.stable", "3.5.3.stable", "garbage"])
def test_old_or_unknown_engine_is_unsupported(tmp_path: Path, version: str) -> None:
    with pytest.raises(EngineUnsupported, match=r"4\.4 or newer"):
        probe(str(fake_godot(tmp_path, version)))


def test_version_parsing() -> None:
    assert parse_version("4.6.3.stable.debian4.6.3+ds-3") == (4, 6, 3)
    assert parse_version("4.3.stable.official.77dcf97d8") == (4, 3, 0)
    assert parse_version("") == (0, 0, 0)


def test_unsupported_engine_is_an_error_reply(tmp_path: Path, project: Path) -> None:
    old = fake_godot(tmp_path, "4.3.stable")
    request = {"op": "resource_read", "project_path": str(project), "resource_path": "materials/base.tres"}
    with Bridge(str(old)) as bridge:
        reply = bridge.run(request)
    assert reply["result"] == "error"
    assert reply["error"]["code"] == "engine_unsupported"


def test_missing_engine_through_cli(tmp_path: Path, project: Path) -> None:
    request = json.dumps({"op": "resource_read", "project_path": str(project), "resource_path": "materials/base.tres"})
    done = run_cli("--godot", str(tmp_path / "nope"), "run", request)
    assert done.returncode == 1
    assert json.loads(done.stdout)["error"]["code"] == "engine_not_found"
    assert "Traceback" not in done.stderr
