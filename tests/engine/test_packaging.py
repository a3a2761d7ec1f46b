"""An installed wheel carries the engine-side scripts and runs them from where it is installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

import gdres
from conftest import REPO, snapshot

pytestmark = [pytest.mark.engine, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package built as a wheel and installed into a folder of its own."""
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                    "-w", str(out), str(REPO)], check=True, capture_output=True, timeout=240)
    wheel = next(out.glob("gdres-*.whl"))
    (out / "wheel.path").write_text(str(wheel))
    target = out / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(target)
    return target


def test_the_wheel_carries_every_gdscript_file(installed: Path) -> None:
    shipped = {p.relative_to(installed / "gdres" / "gdscript").as_posix()
               for p in (installed / "gdres" / "gdscript").rglob("*.gd")}
    in_repo = {p.relative_to(REPO / "gdscript").as_posix() for p in (REPO / "gdscript").rglob("*.gd")}
    assert shipped == in_repo and "main.gd" in shipped


def test_installed_bridge_serves_from_its_own_scripts(installed: Path, godot_bin: str, project: Path) -> None:
    before = snapshot(project)
    env = {**os.environ, "PYTHONPATH": str(installed), "GODOT_BIN": godot_bin}
    request = {"op": "material_create", "project_path": str(project), "material_type": "StandardMaterial3D",
               "resource_path": "wheel.tres", "properties": {"metallic": 0.5}}
    code = ("import json, sys; from gdres import Bridge; from gdres.scripts import gdscript_dir; "
            "print(gdscript_dir()); b = Bridge(); print(json.dumps(b.run(json.loads(sys.argv[1])))); b.close()")
    done = subprocess.run([sys.executable, "-c", code, json.dumps(request)], env=env, cwd=installed,
                          capture_output=True, text=True, timeout=120)
    folder, reply = done.stdout.splitlines()
    assert Path(folder) == installed / "gdres" / "gdscript"
    assert json.loads(reply)["result"] == "ok"
    assert set(snapshot(project)) - set(before) == {"wheel.tres"}


def _metadata(installed: Path) -> list[tuple[str, str]]:
    text = next(installed.glob("gdres-*.dist-info")).joinpath("METADATA").read_text()
    headers = text.split("\n\n")[0].splitlines()
    return [(key, value.strip()) for key, _, value in (line.partition(":") for line in headers)]


def test_the_wheel_says_its_licence_version_and_typing(installed: Path) -> None:
    fields = _metadata(installed)
    assert ("License-Expression", "MIT") in fields
    assert ("Version", gdres.__version__) in fields
    assert ("Name", "gdres") in fields and any(key == "Classifier" for key, _ in fields)
    # No home page yet: the metadata names no address that does not exist (issue 44).
    assert not any(key == "Project-URL" for key, _ in fields)
    dist_info = next(installed.glob("gdres-*.dist-info"))
    assert "MIT License" in next(dist_info.rglob("LICENSE")).read_text()
    assert (installed / "gdres" / "py.typed").is_file()


def test_the_core_needs_pydantic_psutil_tqdm_and_filelock_only(installed: Path) -> None:
    from importlib import metadata

    from packaging.requirements import Requirement

    required = [Requirement(value) for key, value in _metadata(installed) if key == "Requires-Dist"]
    core = sorted(req.name for req in required if req.marker is None)
    assert core == ["filelock", "psutil", "pydantic", "tqdm"]
    assert [req.name for req in required if req.marker is not None and req.marker.evaluate({"extra": "mcp"})
            and not req.marker.evaluate({"extra": ""})][:1] == ["mcp"]
    # What installing the core brings, resolved against this environment's installed packages.
    closure: set[str] = set()
    pending = list(core)
    while pending:
        name = pending.pop()
        if name.lower() in closure:
            continue
        closure.add(name.lower())
        for text in metadata.requires(name) or []:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                pending.append(req.name)
    print(f"core install: {len(closure)} packages: {sorted(closure)}")
    assert len(closure) <= 9


def test_version_on_the_command_line_matches_the_package() -> None:
    done = subprocess.run([sys.executable, "-m", "gdres", "--version"], capture_output=True, text=True,
                          timeout=60)
    assert (done.returncode, done.stdout.strip()) == (0, f"gdres {gdres.__version__}")


def test_mcp_without_the_sdk_says_how_to_install_it() -> None:
    code = "import sys; sys.modules['mcp'] = None; from gdres.front.cli import main; sys.exit(main(['mcp']))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert done.returncode == 2
    assert "pip install 'gdres[mcp]'" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.slow
def test_the_sdist_builds_a_wheel_that_a_clean_venv_installs_and_runs(tmp_path: Path, godot_bin: str,
                                                                     project: Path) -> None:
    """What a release is: the sdist, a wheel built from it alone, installed with its eight core packages
    into a venv of its own, whose command then serves requests on a project."""
    subprocess.run([sys.executable, "-m", "hatchling", "build", "-t", "sdist", "-d", str(tmp_path / "dist")],
                   cwd=REPO, check=True, capture_output=True, timeout=240)
    sdist = next((tmp_path / "dist").glob("gdres-*.tar.gz"))
    with tarfile.open(sdist) as archive:
        archive.extractall(tmp_path / "src", filter="data")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                    "-w", str(tmp_path / "dist"), str(next((tmp_path / "src").iterdir()))],
                   check=True, capture_output=True, timeout=240)
    wheel = next((tmp_path / "dist").glob("gdres-*.whl"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    pip = bin_dir / "pip"
    done = subprocess.run([str(pip), "install", "-q", str(wheel)], capture_output=True, text=True, timeout=280)
    assert done.returncode == 0, done.stderr
    listed = json.loads(subprocess.run([str(pip), "list", "--format", "json"], capture_output=True, text=True,
                                       check=True, timeout=60).stdout)
    names = sorted(entry["name"].lower() for entry in listed if entry["name"].lower() not in {"pip", "setuptools"})
    print(f"clean venv: {len(names)} packages: {names}")
    assert "mcp" not in names and len(names) == 9  # gdres and the core's eight
    command = str(bin_dir / "gdres")
    env = {**os.environ, "GODOT_BIN": godot_bin}
    doctor = subprocess.run([command, "doctor"], cwd=project, env=env, capture_output=True, text=True, timeout=120)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    request = {"op": "material_create", "project_path": ".", "material_type": "StandardMaterial3D",
               "resource_path": "smoke.tres", "properties": {"roughness": 0.25}}
    run = subprocess.run([command, "run", json.dumps(request)], cwd=project, env=env, capture_output=True,
                         text=True, timeout=120)
    assert json.loads(run.stdout)["result"] == "ok", run.stdout + run.stderr
    read = subprocess.run([command, "run", json.dumps({"op": "resource_read", "project_path": ".",
                                                       "resource_path": "smoke.tres"})],
                          cwd=project, env=env, capture_output=True, text=True, timeout=120)
    assert json.loads(read.stdout)["properties"]["roughness"] == 0.25
