"""The version gate and doctor against the real binary (stand-ins for older ones: tests/unit/test_engine.py;
where Godot is looked for: test_discovery.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, run_cli
from gdres.engine import wall
from gdres.engine.godot import probe

# Versions are cached per binary: each test asks its own stand-ins afresh.
pytestmark = pytest.mark.usefixtures("private_cache")


def test_real_engine_is_found_and_supported(godot_bin: str) -> None:
    engine = probe(godot_bin)
    assert engine.version_tuple >= (4, 4, 0)
    assert engine.version.startswith(f"{engine.version_tuple[0]}.{engine.version_tuple[1]}")


def test_doctor_reports_engine_and_project(godot_bin: str, project: Path) -> None:
    done = run_cli("--godot", godot_bin, "doctor", "--json", str(project))
    report = json.loads(done.stdout)
    assert done.returncode == 0
    assert report["godot"]["supported"] is True and report["godot"]["version"].startswith("4.")
    assert report["project"] == {"path": str(project), "valid": True, "imported": False}


def test_doctor_flags_an_invalid_project(godot_bin: str, tmp_path: Path) -> None:
    done = run_cli("--godot", godot_bin, "doctor", "--json", str(tmp_path))
    report = json.loads(done.stdout)
    assert done.returncode == 1
    assert report["project"]["error"]["code"] == "project_not_found"


def test_doctor_speaks_to_people_by_default(godot_bin: str, project: Path, tmp_path: Path) -> None:
    good = run_cli("--godot", godot_bin, "doctor", str(project))
    bad = run_cli("--godot", godot_bin, "doctor", str(tmp_path))
    assert good.returncode == 0 and bad.returncode == 1
    lines = good.stdout.splitlines()
    assert lines[0].startswith(f"Godot:   {godot_bin} (version 4.")
    assert lines[0].endswith(": supported, found by --godot")
    assert lines[-4] == (f"Project: {project}: a Godot project, not imported yet "
                         "(a request imports the assets it needs; `gdres import` imports all)")
    assert lines[-3].startswith("Scripts: compiled to this Godot's binary tokens, so engines start sooner (")
    assert lines[-2].startswith("Wall:    up (Landlock" if wall.abi() else "Wall:    down")
    assert lines[-1] == "Ready."
    assert "has no project.godot" in bad.stdout and bad.stdout.endswith("Not ready: see above.\n")


def test_a_project_that_turns_stderr_off_is_served(godot_bin: str, project: Path) -> None:
    # The engine's replies travel on stderr; the worker's own settings pack keeps it on.
    with (project / "project.godot").open("a") as settings:
        settings.write("\n[application]\nrun/disable_stderr=true\n")
    done = run_cli("--godot", godot_bin, "run", json.dumps({"op": "resource_read", "project_path": str(project),
                                                           "resource_path": "materials/base.tres"}), timeout=60)
    assert json.loads(done.stdout)["result"] == "ok"


def test_doctor_checks_the_project_it_is_run_in(godot_bin: str, project: Path, tmp_path: Path) -> None:
    # Before, `doctor` with no argument checked no project, even run in one.
    inside = subprocess.run([sys.executable, "-m", "gdres", "--godot", godot_bin, "doctor", "--json"],
                            capture_output=True, text=True, cwd=project, env={**os.environ, "PYTHONPATH": str(REPO)},
                            timeout=120)
    assert json.loads(inside.stdout)["project"] == {"path": str(project), "valid": True, "imported": False}
    outside = subprocess.run([sys.executable, "-m", "gdres", "--godot", godot_bin, "doctor", "--json"],
                             capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)},
                             timeout=120)
    assert "project" not in json.loads(outside.stdout)  # not a project: nothing to check, and no error
