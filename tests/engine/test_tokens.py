"""The bridge's scripts as the engine's binary tokens (gdres/engine/tokens.py): made by `gdres doctor`,
run by every worker started after, and never half made or made for other scripts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import psutil
import pytest

from conftest import run_cli, snapshot
from gdres import Bridge
from gdres.engine import godot as engines
from gdres.engine import tokens
from gdres.scripts import gdscript_dir

pytestmark = [pytest.mark.engine, pytest.mark.usefixtures("private_cache"), pytest.mark.timeout(300)]

REQUEST = {"op": "material_create", "material_type": "StandardMaterial3D", "resource_path": "tokens.tres",
           "properties": {"metallic": 0.5, "albedo_color": "#cc3311"}}


def _worker_scripts(bridge: Bridge) -> Path:
    """The folder of the scripts this process's one worker runs (its `-s` script's)."""
    del bridge  # its worker is alive while it is open
    (argv,) = [argv for child in psutil.Process().children(recursive=True)
               if "-s" in (argv := child.cmdline()) and argv[argv.index("-s") + 1].endswith("main.gd")]
    return Path(argv[argv.index("-s") + 1]).parent


def test_doctor_makes_them_and_workers_then_run_them(godot_bin: str, project: Path) -> None:
    engine = engines.probe(godot_bin)
    assert tokens.folder(engine.path, engine.version, gdscript_dir()) is None
    done = run_cli("--godot", godot_bin, "doctor", "--json")
    report = json.loads(done.stdout)
    assert report["result"] == "ok" and report["scripts"]["binary_tokens"] is True
    made = Path(report["scripts"]["path"])
    assert tokens.folder(engine.path, engine.version, gdscript_dir()) == made
    # Tokens only: no script source is there, so a worker that serves from it runs the tokens.
    assert not list(made.rglob("*.gd")) and (made / "main.gdc").is_file()
    before = snapshot(project)
    with Bridge(godot_bin) as bridge:
        reply = bridge.run({**REQUEST, "project_path": str(project)})
        assert _worker_scripts(bridge) == made
    assert reply["result"] == "ok", reply
    assert set(snapshot(project)) - set(before) == {"tokens.tres"}
    assert "metallic = 0.5" in (project / "tokens.tres").read_text()


def test_without_them_workers_run_the_sources(godot_bin: str, project: Path) -> None:
    with Bridge(godot_bin) as bridge:
        assert bridge.run({**REQUEST, "project_path": str(project)})["result"] == "ok"
        assert _worker_scripts(bridge) == gdscript_dir()


def test_a_copy_not_finished_is_never_run_and_is_made_anew(godot_bin: str, project: Path) -> None:
    engine = engines.probe(godot_bin)
    made = engines.compile_scripts(engine)
    (made / ".complete").unlink()
    (made / "main.gdc").write_bytes(b"cut short")
    assert tokens.folder(engine.path, engine.version, gdscript_dir()) is None
    with Bridge(godot_bin) as bridge:
        assert bridge.run({**REQUEST, "project_path": str(project)})["result"] == "ok"
        assert _worker_scripts(bridge) == gdscript_dir()
    assert engines.compile_scripts(engine) == made
    assert (made / "main.gdc").read_bytes() != b"cut short"
    with Bridge(godot_bin) as bridge:
        assert bridge.run({**REQUEST, "project_path": str(project), "resource_path": "again.tres"})["result"] == "ok"
        assert _worker_scripts(bridge) == made


def test_changed_scripts_are_never_served_from_tokens_of_others(godot_bin: str, tmp_path: Path) -> None:
    engine = engines.probe(godot_bin)
    engines.compile_scripts(engine)
    copy = tmp_path / "gdscript"
    shutil.copytree(gdscript_dir(), copy)
    assert tokens.folder(engine.path, engine.version, copy) is not None  # the same text: the same tokens
    job = copy / "job.gd"
    job.write_text(job.read_text() + "\n")
    assert tokens.folder(engine.path, engine.version, copy) is None


def test_a_cache_folder_reached_through_a_link_serves_from_tokens(godot_bin: str, project: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # The gate takes for its own only scripts under the real folder main.gd runs from: a cache
    # path through a link (/home -> /var/home on Fedora Silverblue) once made every worker refuse
    # the bridge's own scripts, and time out (found by a red-team read).
    real = tmp_path / "real-cache"
    real.mkdir()
    (tmp_path / "linked-cache").symlink_to(real)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "linked-cache"))
    assert json.loads(run_cli("--godot", godot_bin, "doctor", "--json").stdout)["scripts"]["binary_tokens"]
    with Bridge(godot_bin, timeout=60) as bridge:
        reply = bridge.run({**REQUEST, "project_path": str(project)})
        assert _worker_scripts(bridge).is_relative_to(real)
    assert reply["result"] == "ok", reply
