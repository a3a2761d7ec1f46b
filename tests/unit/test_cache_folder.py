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
from gdres.errors import InvalidRequest
from gdres.requests import paths
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


def test_a_journal_planted_in_a_cache_the_project_holds_is_never_played(
        fake_godot: str, game: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The refusal comes before anything of the cache is used: recovering an atomic batch's journal
    # once wrote the planted bytes into the project, then refused the request (a red-team read).
    import base64
    import hashlib

    monkeypatch.setenv("XDG_CACHE_HOME", str(game / ".cache"))
    journal = Path(cache_dir(), "journals", hashlib.sha256(os.fsencode(game.resolve())).hexdigest()[:32])
    journal.mkdir(parents=True)
    (journal / "journal.jsonl").write_text(json.dumps(
        {"commit": str(game.resolve() / "planted.txt"), "old": base64.b64encode(b"planted").decode(),
         "new": None, "mode": 0o755}) + "\n")
    request = {"op": "resource_read", "project_path": str(game), "resource_path": "a.tres"}
    reply = json.loads(run_cli("--godot", fake_godot, "run", json.dumps(request)).stdout)
    assert reply["error"]["code"] == "invalid_request", reply
    assert not (game / "planted.txt").exists() and (journal / "journal.jsonl").exists()


def test_a_link_the_project_ships_at_the_cache_path_is_no_way_round(
        fake_godot: str, game: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The path as given lies in the project; its real path leads out, to what the checkout holds.
    (tmp_path / "cachedata").mkdir()
    (game / ".cache").symlink_to(tmp_path / "cachedata")
    monkeypatch.setenv("XDG_CACHE_HOME", str(game / ".cache"))
    request = {"op": "resource_read", "project_path": str(game), "resource_path": "a.tres"}
    reply = json.loads(run_cli("--godot", fake_godot, "run", json.dumps(request)).stdout)
    assert reply["error"]["code"] == "invalid_request" and "cache folder" in reply["error"]["message"], reply


def test_no_warm_host_keeps_its_socket_in_the_project(fake_godot: str, game: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # Code that allow_scripts lets run could take the host's secret there, or put a socket of its own.
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(game / "run"))
    request = {"op": "resource_read", "project_path": str(game), "resource_path": "a.tres"}
    done = run_cli("--godot", fake_godot, "run", "--warm", json.dumps(request))
    assert json.loads(done.stdout)["result"] == "ok"  # served cold, by the fake engine
    assert "served without a warm host" in done.stderr and "XDG_RUNTIME_DIR" in done.stderr
    assert not (game / "run").exists()


def test_doctor_makes_nothing_in_a_cache_the_project_holds(fake_godot: str, game: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(game / ".cache"))
    report = json.loads(run_cli("--godot", fake_godot, "doctor", "--json", str(game)).stdout)
    assert report["project"]["valid"] is False and "scripts" not in report
    assert not (game / ".cache" / "gdres" / "scripts").exists()


MOUNTINFO = [
    ("0:31", "/", "/"),
    ("8:1", "/", "/data"),
    ("8:1", "/games/mine/.cache", "/root/.cache"),  # a bind mount of the project's .cache
    ("0:55", "/", "/tmp"),
    ("0:60", "/volumes/cache", "/data/games/other/.cache"),  # a cache volume shown inside a project
    ("0:60", "/", "/srv/cache"),
]


@pytest.mark.parametrize(("folder", "root", "inside"), [
    ("/root/.cache/gdres", "/data/games/mine", True),
    ("/root/.cache/gdres", "/data/games/mine2", False),
    ("/root/.cache/gdres", "/data/games", True),
    ("/tmp/cache/gdres", "/data/games/mine", False),
    ("/data/games/mine/.cache/gdres", "/data/games/mine", True),
    ("/home/u/.cache/gdres", "/data/games/mine", False),
    ("/srv/cache/volumes/cache/gdres", "/data/games/other", True),  # writable from the project
    ("/srv/cache/volumes/other/gdres", "/data/games/other", False),
])
def test_a_mount_that_shows_a_project_s_folder_elsewhere_is_seen_through(folder: str, root: str,
                                                                          inside: bool) -> None:
    assert paths._mounted_inside(folder, root, MOUNTINFO) is inside


ROOT = [("8:1", "/", "/")]


@pytest.mark.parametrize(("folder", "root", "extra"), [
    # A mount inside the project shows a folder of the cache.
    ("/home/u/.cache/gdres", "/home/u/proj", [("8:1", "/home/u/.cache/gdres/journals", "/home/u/proj/j")]),
    # A mount below the cache shows a part of the project.
    ("/home/u/.cache/gdres", "/home/u/proj", [("8:1", "/home/u/proj/s", "/home/u/.cache/gdres/scripts")]),
    # The cache is a mount point showing the top of a file system the project shows too.
    ("/cache", "/proj", [("8:17", "/", "/cache"), ("8:17", "/", "/proj/vol")]),
    # A later mount hides the one at a longer mount point.
    ("/home/u/.cache/gdres", "/srv/proj",
     [("8:1", "/elsewhere", "/home/u/.cache"), ("8:1", "/srv/proj/home", "/home/u")]),
    # Two mounts at one point, the one listed last not on top.
    ("/home/u/.cache/gdres", "/srv/proj",
     [("8:1", "/srv/proj/c", "/home/u/.cache"), ("8:1", "/elsewhere", "/home/u/.cache")]),
])
def test_every_mount_that_shows_either_counts(folder: str, root: str, extra: list[tuple[str, str, str]]) -> None:
    # Found by a review: each of these was taken for outside the project.
    assert paths._mounted_inside(folder, root, ROOT + extra)


def test_a_carriage_return_in_a_name_does_not_end_a_mount_s_line() -> None:
    table = b"36 1 8:1 / / rw - ext4 /dev/sda1 rw\n37 36 8:1 /proj/c\rd /home/u/.cache rw - ext4 /dev/sda1 rw\n"
    assert paths._parsed(table)[1] == ("8:1", "/proj/c\rd", "/home/u/.cache")


def test_a_link_the_project_ships_part_way_to_the_cache_is_followed(tmp_path: Path) -> None:
    # ~/.cache is the user's link into the project; the project's link there leads out again.
    project = tmp_path / "repo" / "proj"
    (project / "cachedir").mkdir(parents=True)
    (tmp_path / "repo" / "shared" / "gdres").mkdir(parents=True)
    (project / "cachedir" / "gdres").symlink_to("../../shared/gdres")
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / ".cache").symlink_to(project / "cachedir")
    with pytest.raises(InvalidRequest, match="cache folder"):
        paths.folder_outside(str(tmp_path / "home" / ".cache" / "gdres"), str(project), "the cache folder", "X")
    paths.folder_outside(str(tmp_path / "repo" / "shared" / "gdres"), str(project), "the cache folder", "X")


def test_mount_points_are_read_as_the_file_system_names_them() -> None:
    assert paths._unescaped(b"/my\\040game/.cache") == "/my game/.cache"
    # Not UTF-8: the same text realpath() gives for it (a red-team read slipped past with one).
    assert paths._unescaped(b"/g\\377me") == os.fsdecode(b"/g\xffme")


def test_a_process_of_the_bridge_keeps_a_safe_path_s_first_entry(tmp_path: Path) -> None:
    # Under PYTHONSAFEPATH no current folder is first on the path: the user's own first entry is.
    code = "import sys; sys.stdout.write('\\n'.join(sys.path[:2]))"
    done = subprocess.run(platform.own_python(code), cwd=tmp_path, capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONSAFEPATH": "1", "PYTHONPATH": str(tmp_path / "mine")})
    assert done.stdout.splitlines() == [str(Path(platform.__file__).parent.parent), str(tmp_path / "mine")]
