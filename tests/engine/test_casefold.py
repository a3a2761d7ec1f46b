"""Confinement on a file system that ignores case, as macOS and Windows have by default, run for real.

The projects live on a case-insensitive folder: the temporary folder itself where it is one (macOS,
Windows), else a case-folding FUSE mount of one (tests/casefold_fs.py). There `.GODOT` is `.godot`,
`MATERIALS/BASE.TRES` opens materials/base.tres, and a link reached through a name in another case
is still a link. Each case runs through the Bridge API and the real engine, as a request member
(checked in Python) and as a property value (checked in the engine), and they must answer alike.

Mounting needs root and /dev/fuse (and libfuse 3, installed by scripts/setup.sh). CI runs as root;
elsewhere set GDRES_NO_ROOT_TESTS=1 to skip these tests knowingly (they fail otherwise, so
that CI cannot skip them by accident).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import casefold_fs
from conftest import FIXTURES, engine_confine, run_cli
from gdres import Bridge
from gdres.engine import wall
from gdres.requests import paths

SECRET = '[gd_resource type="StandardMaterial3D" format=3]\n\n[resource]\nresource_name = "%s"\n'


def ignores_case(folder: Path) -> bool:
    """Whether names in `folder` are matched regardless of case."""
    probe = folder / "case_probe"
    probe.write_text("")
    try:
        return (folder / "CASE_PROBE").exists()
    finally:
        probe.unlink()


@pytest.fixture(scope="module")
def folding(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A folder whose file system ignores case."""
    base = tmp_path_factory.mktemp("casefold")
    if ignores_case(base):
        yield base
        return
    (base / "backing").mkdir()
    with contextlib.ExitStack() as stack:
        try:
            mount = stack.enter_context(casefold_fs.mounted(base / "backing", base / "mount"))
        except OSError as exc:
            if os.environ.get("GDRES_NO_ROOT_TESTS") == "1":
                pytest.skip(f"mounting a case-insensitive file system needs root (GDRES_NO_ROOT_TESTS=1): {exc}")
            pytest.fail(f"mounting a case-insensitive file system needs root, /dev/fuse, libfuse3 and mfusepy "
                        f"(set GDRES_NO_ROOT_TESTS=1 to skip knowingly): {exc}")
        assert ignores_case(mount)
        yield mount


@pytest.fixture
def project(folding: Path) -> Path:
    """A copy of tests/fixtures/project on the folder that ignores case, with an import cache, a
    secret beside it, and links: out_dir to the folder outside, godot_dir to .godot, and up, to the
    project's materials through the project's own name in capitals."""
    # Not named after the test: two names that differ only in case are one folder here.
    place = Path(tempfile.mkdtemp(dir=folding))
    target = place / "project"
    shutil.copytree(FIXTURES / "project", target)
    (target / ".godot").mkdir()
    (target / ".godot" / "x.tres").write_text(SECRET % "SECRET-IN-DOT-GODOT")
    (place / "outside").mkdir()
    (place / "outside" / "secret.tres").write_text(SECRET % "SECRET-OUTSIDE")
    (target / "out_dir").symlink_to(place / "outside")
    (target / "godot_dir").symlink_to(".godot")
    (target / "up").symlink_to(place / "PROJECT" / "materials")
    return target


@pytest.fixture(scope="module")
def bridge(godot_bin: str, folding: Path) -> Iterator[Bridge]:
    """One Bridge for the module, closed (its engines gone from the mount) before the mount goes.

    Its engines start without the wall (gdres/engine/wall.py): the FUSE mount gives each spelling of a
    folder an inode of its own, and Landlock allows by inode, so `PROJECT/` would not be the
    project it allows. (A case-insensitive ext4 folder has one inode per folder; macOS and Windows,
    which ignore case by default, have no Landlock.)"""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(wall.OFF_VARIABLE, "off")
        with Bridge(godot_bin, timeout=30) as b:
            yield b


def state(base: Path) -> dict[str, bytes | str]:
    """Every file under `base` (its bytes) and link (its target), links not followed."""
    found: dict[str, bytes | str] = {}
    for folder, dirs, files in os.walk(base):
        for name in dirs + files:
            path = Path(folder, name)
            found[str(path)] = ("link to " + os.readlink(path) if path.is_symlink()
                                else "folder" if path.is_dir() else path.read_bytes())
    return found


def member(bridge: Bridge, project: Path, path: str) -> dict[str, Any]:
    return bridge.run({"op": "resource_read", "project_path": str(project), "resource_path": path})


def value(bridge: Bridge, project: Path, path: str) -> dict[str, Any]:
    return bridge.run({"op": "material_create", "project_path": str(project), "material_type": "StandardMaterial3D",
                       "resource_path": "made.tres", "properties": {"next_pass": path}})


def code(reply: dict[str, Any]) -> str:
    return "ok" if reply["result"] == "ok" else str(reply["error"]["code"])


def test_another_case_opens_the_same_file_as_member_and_as_value(bridge: Bridge, project: Path) -> None:
    plain = member(bridge, project, "materials/base.tres")
    shouted = member(bridge, project, "MATERIALS/BASE.TRES")
    assert shouted["result"] == "ok", shouted
    assert shouted["properties"] == plain["properties"]
    made = value(bridge, project, "Materials/Base.tres")
    assert made["result"] == "ok", made
    # The file refers to the material as it is stored, so it opens where names tell case apart.
    text = (project / "made.tres").read_text()
    assert 'path="res://materials/base.tres"' in text, text
    assert "Materials" not in text


def test_a_save_through_another_case_keeps_the_stored_names(bridge: Bridge, project: Path) -> None:
    before = (project / "materials" / "base.tres").read_text()
    reply = bridge.run({"op": "material_create", "project_path": str(project), "material_type": "StandardMaterial3D",
                        "resource_path": "MATERIALS/Base.tres", "properties": {"roughness": 0.25}})
    assert reply["result"] == "ok", reply
    assert reply["resource_path"] == "MATERIALS/Base.tres"
    # Replaced in place: same folder, same name, same uid; no second spelling of either.
    assert sorted(os.listdir(project / "materials")) == ["base.tres", "layered.tres"]
    assert "MATERIALS" not in os.listdir(project)
    after = (project / "materials" / "base.tres").read_text()
    assert after.splitlines()[0] == before.splitlines()[0]
    assert "roughness = 0.25" in after
    new = bridge.run({"op": "material_create", "project_path": str(project), "material_type": "StandardMaterial3D",
                      "resource_path": "MATERIALS/new/Fresh.tres"})
    assert new["result"] == "ok", new
    assert sorted(os.listdir(project / "materials")) == ["base.tres", "layered.tres", "new"]
    assert os.listdir(project / "materials" / "new") == ["Fresh.tres"]


def test_a_scene_refers_to_a_saved_shape_by_its_stored_spelling(bridge: Bridge, project: Path) -> None:
    reply = bridge.run({"op": "shape_create", "project_path": str(project), "shape_type": "BoxShape3D",
                        "save_path": "MATERIALS/Box.tres", "scene_path": "SCENES/LEVEL.TSCN",
                        "node_path": "Floor/FloorShape"})
    assert reply["result"] == "ok", reply
    assert (reply["save_path"], reply["scene_path"]) == ("MATERIALS/Box.tres", "SCENES/LEVEL.TSCN")
    assert "Box.tres" in os.listdir(project / "materials")
    assert sorted(os.listdir(project / "scenes")) == ["level.tscn", "marker.gd", "prop.tscn"]
    scene = (project / "scenes" / "level.tscn").read_text()
    assert 'path="res://materials/Box.tres"' in scene, scene
    assert "MATERIALS" not in scene


def test_two_spellings_of_one_file_are_one_file(bridge: Bridge, project: Path) -> None:
    reply = bridge.run({"op": "resource_duplicate", "project_path": str(project),
                        "source_path": "materials/base.tres", "dest_path": "MATERIALS/BASE.TRES"})
    assert reply["error"]["code"] == "invalid_path", reply
    assert reply["error"]["field"] == "dest_path"
    assert "same file" in reply["error"]["message"]


@pytest.mark.parametrize(("path", "expected"), [
    (".GODOT/x.tres", "invalid_path"),
    (".Godot/x.tres", "invalid_path"),
    ("res://.godot/../.GODOT/x.tres", "invalid_path"),
    ("GODOT_DIR/x.tres", "invalid_path"),
    ("Godot_Dir/x.tres", "invalid_path"),
    ("OUT_DIR/secret.tres", "path_outside_project"),
    ("Out_Dir/secret.tres", "path_outside_project"),
    ("MATERIALS/../../outside/secret.tres", "path_outside_project"),
    ("UP/base.tres", "ok"),
])
def test_links_and_the_engines_files_in_any_case(bridge: Bridge, project: Path, path: str, expected: str) -> None:
    """Refused or followed the same way, whether Python or the engine checks the path."""
    base = project.parent
    before = state(base)
    read = member(bridge, project, path)
    assert code(read) == expected, read
    assert "SECRET" not in json.dumps(read)
    saved = bridge.run({"op": "material_create", "project_path": str(project), "material_type": "StandardMaterial3D",
                        "resource_path": path, "properties": {"roughness": 0.5}})
    assert code(saved) == expected, saved
    if expected != "ok":
        assert state(base) == before, "a refused request changed files"
    made = value(bridge, project, path)
    assert code(made) == expected, made
    assert "SECRET" not in json.dumps(made)


def test_the_project_file_in_any_case_is_refused_as_a_value(bridge: Bridge, project: Path) -> None:
    for path in ("Project.Godot", "PROJECT.GODOT", "materials/../project.GODOT"):
        reply = value(bridge, project, path)
        assert code(reply) == "invalid_path", (path, reply)
        assert reply["error"]["field"] == "properties"


def test_python_and_the_engine_resolve_each_path_to_one_stored_name(godot_bin: str, project: Path,
                                                                    tmp_path: Path) -> None:
    """Python's resolve() and the engine's real() give the same real path and the same res:// path."""
    texts = ["materials/base.tres", "MATERIALS/BASE.TRES", "Materials/layered.TRES", "materials/missing.tres",
             "MATERIALS/New/x.tres", "UP/base.tres", "Up/BASE.tres", "Scenes/Level.tscn",
             "VALUES/SCRIPTED/CARRIER.TRES"]
    root = Path(paths.project_root(str(project.parent / "PROJECT")))
    assert root == project
    answers = engine_confine(godot_bin, root, texts, tmp_path)
    for text, answer in zip(texts, answers, strict=True):
        res, real = paths.resolve(root, text, field="path", suffixes=paths.READABLE_SUFFIXES)
        assert (answer["code"], answer["res"], answer["real"]) == ("ok", res, real), text
    assert paths.resolve(root, "MATERIALS/BASE.TRES", field="path", suffixes=(".tres",)) == (
        "res://materials/base.tres", str(project / "materials" / "base.tres"))
    assert paths.resolve(root, "Up/BASE.tres", field="path", suffixes=(".tres",)) == (
        "res://up/base.tres", str(project / "materials" / "base.tres"))


def test_the_command_line_with_the_project_folder_in_another_case(project: Path, godot_bin: str) -> None:
    request = {"op": "resource_read", "project_path": str(project.parent / "PROJECT"),
               "resource_path": "res://Materials/Base.tres"}
    done = run_cli("run", json.dumps(request), godot=godot_bin)
    reply = json.loads(done.stdout)
    assert reply["result"] == "ok", done.stderr
    assert reply["resource_path"] == "res://Materials/Base.tres"
    refused = run_cli("run", json.dumps({**request, "resource_path": ".GODOT/x.tres"}), godot=godot_bin)
    assert json.loads(refused.stdout)["error"]["code"] == "invalid_path"
    assert refused.returncode == 1
