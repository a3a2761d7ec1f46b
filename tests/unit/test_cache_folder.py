"""The bridge's cache folder holds what its engines start with (settings packs, the binary tokens of
its scripts) and the journals that undo atomic batches: it is used as the file system knows it, and a
project that holds it is not served (a red-team read planted scripts and packs there that ran)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import run_cli
from gdres import platform
from gdres.settings import cache_dir


@pytest.fixture
def game(tmp_path: Path) -> Path:
    project = tmp_path / "game"
    project.mkdir()
    (project / "project.godot").write_text("config_version=5\n")
    return project


def test_the_cache_folder_is_its_real_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # An engine opens the settings pack once it works in the project's folder: a cache path through
    # a link (to /proc/self/cwd, say) or a relative HOME led it to a pack the project shipped.
    (tmp_path / "real").mkdir()
    (tmp_path / "linked").symlink_to(tmp_path / "real")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "linked"))
    assert cache_dir() == str((tmp_path / "real" / "gdres").resolve())
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", ".")
    monkeypatch.chdir(tmp_path)
    assert cache_dir() == str(tmp_path.resolve() / ".cache" / "gdres")


@pytest.mark.parametrize("command", [["run"], ["run", "--warm"]])
def test_a_project_that_holds_the_cache_folder_is_not_served(
        fake_godot: str, game: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(game / ".cache"))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)  # a warm host's socket would be in the cache
    request = {"op": "resource_read", "project_path": str(game), "resource_path": "a.tres"}
    reply = json.loads(run_cli("--godot", fake_godot, *command, json.dumps(request)).stdout)
    assert reply["result"] == "error" and reply["error"]["code"] == "invalid_request", reply
    assert "cache folder" in reply["error"]["message"] and "XDG_CACHE_HOME" in reply["error"]["message"]
    assert not (tmp_path / "received.jsonl").exists()  # no engine started
    assert not (game / ".cache" / "gdres" / "hosts").exists()  # and no warm host


def test_import_and_doctor_refuse_it_too(fake_godot: str, game: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(game / "sub" / ".." / ".cache"))
    done = run_cli("--godot", fake_godot, "import", str(game))
    assert json.loads(done.stdout)["error"]["code"] == "invalid_request"
    report = json.loads(run_cli("--godot", fake_godot, "doctor", "--json", str(game)).stdout)
    assert report["project"]["valid"] is False and "cache folder" in report["project"]["error"]["message"]


def test_a_process_of_the_bridge_imports_its_own_package_not_the_current_folder_s(tmp_path: Path) -> None:
    # A warm host runs in its hosts folder and a batch's parts in the command's folder: a `gdres`
    # package there (a checkout, or what a project ships) is never what they import.
    planted = tmp_path / "gdres"
    planted.mkdir()
    (planted / "__init__.py").write_text("open('PLANTED_RAN', 'w').close()\n")
    code = "import gdres, sys; sys.stdout.write(gdres.__file__)"
    done = subprocess.run(platform.own_python(code), cwd=tmp_path, capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": ""})
    assert not (tmp_path / "PLANTED_RAN").exists()
    assert Path(done.stdout).parent == Path(platform.__file__).parent
