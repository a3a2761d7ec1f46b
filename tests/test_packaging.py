"""An installed wheel carries the engine-side scripts and runs them from where it is installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import REPO, snapshot

pytestmark = [pytest.mark.godot, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package built as a wheel and installed into a folder of its own."""
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                    "-w", str(out), str(REPO)], check=True, capture_output=True, timeout=240)
    wheel = next(out.glob("godot_bridge-*.whl"))
    target = out / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(target)
    return target


def test_the_wheel_carries_every_gdscript_file(installed: Path) -> None:
    shipped = {p.relative_to(installed / "bridge" / "gdscript").as_posix()
               for p in (installed / "bridge" / "gdscript").rglob("*.gd")}
    in_repo = {p.relative_to(REPO / "gdscript").as_posix() for p in (REPO / "gdscript").rglob("*.gd")}
    assert shipped == in_repo and "main.gd" in shipped


def test_installed_bridge_serves_from_its_own_scripts(installed: Path, godot_bin: str, project: Path) -> None:
    before = snapshot(project)
    env = {**os.environ, "PYTHONPATH": str(installed), "GODOT_BIN": godot_bin}
    request = {"op": "material_create", "project_path": str(project), "material_type": "StandardMaterial3D",
               "resource_path": "wheel.tres", "properties": {"metallic": 0.5}}
    code = ("import json, sys; from bridge import Bridge; from bridge.engine import gdscript_dir; "
            "print(gdscript_dir()); b = Bridge(); print(json.dumps(b.run(json.loads(sys.argv[1])))); b.close()")
    done = subprocess.run([sys.executable, "-c", code, json.dumps(request)], env=env, cwd=installed,
                          capture_output=True, text=True, timeout=120)
    folder, reply = done.stdout.splitlines()
    assert Path(folder) == installed / "bridge" / "gdscript"
    assert json.loads(reply)["result"] == "ok"
    assert set(snapshot(project)) - set(before) == {"wheel.tres"}
