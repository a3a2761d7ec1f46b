"""Binary tokens of the bridge's scripts with engines that cannot make them: nothing half made is
left or used, and `gdres doctor` says so without failing (made and run: tests/engine/test_tokens.py)."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from conftest import run_cli
from gdres.engine import godot as engines
from gdres.engine import tokens
from gdres.errors import EngineUnsupported
from gdres.scripts import gdscript_dir

pytestmark = pytest.mark.usefixtures("private_cache")


def _engine_that_says_yes(tmp_path: Path) -> engines.Engine:
    """An "engine" that answers every command line with success and does nothing."""
    path = tmp_path / "godot"
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return engines.Engine(str(path), "4.6.3.stable")


def test_an_engine_that_makes_nothing_leaves_nothing(tmp_path: Path) -> None:
    engine = _engine_that_says_yes(tmp_path)
    with pytest.raises(EngineUnsupported, match=r"lay out its scripts' binary tokens: .*main\.gdc"):
        engines.compile_scripts(engine)
    assert tokens.folder(engine.path, engine.version, gdscript_dir()) is None
    assert not tokens._place(engine.path, engine.version, gdscript_dir()).exists()
    assert engines.worker_scripts(engine) == gdscript_dir()


def test_doctor_says_the_scripts_run_from_source_where_the_engine_cannot_export(fake_godot: str) -> None:
    done = run_cli("--godot", fake_godot, "doctor", "--json")
    report = json.loads(done.stdout)
    assert report["scripts"]["binary_tokens"] is False
    assert "could not export its scripts as binary tokens" in report["scripts"]["error"]["message"]
    assert report["result"] == "ok" and done.returncode == 0
    text = run_cli("--godot", fake_godot, "doctor").stdout
    assert "Scripts: engines compile them from source" in text


def test_what_a_build_cut_short_left_goes_with_the_next_build(tmp_path: Path) -> None:
    engine = _engine_that_says_yes(tmp_path)
    final = tokens._place(engine.path, engine.version, gdscript_dir())
    left = final.parent / f".{final.name}-killed"  # a build's scratch folder, its process killed
    (left / "project").mkdir(parents=True)
    (final / "ops").mkdir(parents=True)  # its copy, never marked complete
    with pytest.raises(EngineUnsupported):
        engines.compile_scripts(engine)
    assert not left.exists() and not final.exists()
