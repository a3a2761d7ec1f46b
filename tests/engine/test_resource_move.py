"""resource_move on fresh clones of real projects: the file moves with its sidecars and uid, every
reference follows in the engine's view, git sees path lines and renames only, and a failure or a kill
leaves the project as it was."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest

from conftest import FIXTURES, REPO, git, snapshot, wait_for
from gdres import Bridge

pytestmark = [pytest.mark.engine, pytest.mark.timeout(300)]

ORACLE = """extends SceneTree
# For each file given: whether the engine loads it, and the files its external resources come from.
func _init() -> void:
	var seen: Dictionary = {}
	for path: String in OS.get_cmdline_user_args():
		var loaded: Resource = ResourceLoader.load(path, "", ResourceLoader.CACHE_MODE_IGNORE)
		var deps: Array = []
		if loaded is PackedScene:
			for value: Variant in loaded._bundled["variants"]:
				if value is Resource and _external(value):
					deps.append(value.resource_path)
		elif loaded != null:
			for info: Dictionary in loaded.get_property_list():
				var value: Variant = loaded.get(info["name"])
				if value is Resource and _external(value):
					deps.append(value.resource_path)
		deps.sort()
		seen[path] = {"loads": loaded != null, "deps": deps}
	print("ORACLE " + JSON.stringify(seen))
	quit()


func _external(value: Resource) -> bool:
	return value.resource_path.begins_with("res://") and not value.resource_path.contains("::")
"""


def md5(text: str) -> str:
    return hashlib.md5(text.encode()).hexdigest()


def editor_import(godot_bin: str, project: Path) -> None:
    """What the user's editor does when the project is opened: import, scan, cache uids."""
    subprocess.run([godot_bin, "--headless", "--path", str(project), "--import"], capture_output=True, timeout=240,
                   check=False)


def engine_view(godot_bin: str, project: Path, files: list[str]) -> dict[str, Any]:
    """How the engine itself (a game run, no editor) loads `files` (res:// paths)."""
    script = project.parent / "oracle.gd"
    script.write_text(ORACLE)
    done = subprocess.run([godot_bin, "--headless", "--path", str(project), "-s", str(script), "--", *files],
                          capture_output=True, text=True, timeout=120, check=False)
    line = next(line for line in done.stdout.splitlines() if line.startswith("ORACLE "))
    view: dict[str, Any] = json.loads(line.removeprefix("ORACLE "))
    return view


def resources(project: Path) -> list[str]:
    return sorted(f"res://{p.relative_to(project).as_posix()}" for p in project.rglob("*")
                  if p.suffix in (".tscn", ".tres") and ".godot" not in p.parts)


def uids(project: Path) -> dict[str, str]:
    """Each file's uid where the editor finds it: a header, a .import, a .uid."""
    found: dict[str, str] = {}
    for path in project.rglob("*"):
        if ".godot" in path.parts or ".git" in path.parts or not path.is_file():
            continue
        relative = path.relative_to(project).as_posix()
        if path.suffix in (".tscn", ".tres", ".import"):
            match = re.search(r'uid="(uid://[a-z0-9]+)"', path.read_text(encoding="utf-8"))
            if match:
                found[relative.removesuffix(".import")] = match.group(1)
        elif path.suffix == ".uid":
            found[relative.removesuffix(".uid")] = path.read_text().strip()
    return found


def moved_name(path: str, source: str, dest: str) -> str:
    """Where `path` is once `source` has moved to `dest` (a file's sidecars move with it)."""
    if path in (source, source + ".import", source + ".uid") or path.startswith(source + "/"):
        return dest + path[len(source):]
    return path


def assert_only_path_lines_changed(project: Path, source: str, dest: str) -> None:
    """git's diff of the move: renames, and changed lines that differ only in the moved paths (and the
    import artefacts named for them)."""
    git(project, "add", "-A")
    diff = git(project, "diff", "--cached", "-M", "-U0", "--no-color")
    removed = [line[1:] for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    added = [line[1:] for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert removed and len(removed) == len(added), diff

    def normal(line: str, moved: bool) -> str:
        line = re.sub(r"imported/[^\"]*-[0-9a-f]{32}\.", "imported/ARTEFACT.", line)
        return line.replace(f"res://{source}", f"res://{dest}") if moved else line

    assert [normal(line, True) for line in removed] == [normal(line, False) for line in added], diff


def move(bridge: Bridge, project: Path, source: str, dest: str, **extra: Any) -> dict[str, Any]:
    return bridge.run({"op": "resource_move", "project_path": str(project), "source_path": source,
                       "dest_path": dest, **extra})


@pytest.mark.parametrize(("source", "dest"), [
    ("art/enemyFlyingAlt_1.png", "art/enemies/flying_1.png"),  # a texture with its .import
    ("player.tscn", "actors/player.tscn"),  # a scene instanced by main.tscn
    ("art", "assets/art"),  # a folder: textures, a sound, their .import files
    ("main.tscn", "scenes/main.tscn"),  # the main scene (project.godot names it)
])
def test_a_move_on_a_real_project_keeps_every_dependent_loading_at_the_new_path(
        bridge: Bridge, demo: Path, godot_bin: str, source: str, dest: str) -> None:
    before_uids = uids(demo)
    editor_import(godot_bin, demo)  # as the user's editor left it: imported, uids cached
    files = resources(demo)
    before = engine_view(godot_bin, demo, files)
    assert all(seen["loads"] for seen in before.values()), before

    reply = move(bridge, demo, source, dest)

    assert reply["result"] == "ok", json.dumps(reply)
    assert not (demo / source).exists() and (demo / dest).exists()
    assert [pair[0] for pair in reply["moved"]] and all(
        moved_name(old, source, dest) == new for old, new in reply["moved"])
    assert {moved_name(path, source, dest): uid for path, uid in before_uids.items()} == uids(demo)
    assert_only_path_lines_changed(demo, source, dest)
    editor_import(godot_bin, demo)  # the moved assets' artefacts are made for their new names
    after = engine_view(godot_bin, demo, [moved_name(f, "res://" + source, "res://" + dest) for f in files])
    expected = {moved_name(file, "res://" + source, "res://" + dest): {
        "loads": True, "deps": sorted(moved_name(dep, "res://" + source, "res://" + dest) for dep in seen["deps"])}
        for file, seen in before.items()}
    assert after == expected
    git(demo, "add", "-A")
    assert git(demo, "status", "--porcelain", "--untracked-files=all").count("\n") == \
        git(demo, "diff", "--cached", "--name-only", "-M").count("\n")  # the editor's own import changed no file


def test_a_moved_scene_loads_in_a_game_run_without_the_editor_opening_the_project(
        bridge: Bridge, demo: Path, godot_bin: str) -> None:
    # The uid cache the editor wrote named the old path; the engine looks a uid up before an
    # ext_resource's path, so a cache left stale would fail every scene that instances the moved one.
    editor_import(godot_bin, demo)
    assert move(bridge, demo, "mob.tscn", "actors/mob.tscn")["result"] == "ok"
    view = engine_view(godot_bin, demo, ["res://main.tscn"])
    assert view["res://main.tscn"]["loads"] and "res://actors/mob.tscn" in view["res://main.tscn"]["deps"]


def test_scripts_that_name_the_file_are_listed_not_edited(bridge: Bridge, project: Path) -> None:
    script = project / "scenes" / "spawner.gd"
    script.write_text('extends Node\n\nconst BASE = preload("res://materials/base.tres")\n')
    before = script.read_bytes()
    reply = move(bridge, project, "materials/base.tres", "materials/stone/base.tres")
    assert reply["result"] == "ok", json.dumps(reply)
    assert sorted(reply["updated"]) == ["materials/layered.tres", "values/deep.tres"]
    assert reply["not_updated"] == [{"file": "scenes/spawner.gd", "line": 3,
                                     "text": 'const BASE = preload("res://materials/base.tres")'}]
    assert script.read_bytes() == before
    for updated in reply["updated"]:
        assert 'path="res://materials/stone/base.tres"' in (project / updated).read_text()


def test_a_dry_run_shows_every_change_and_makes_none(bridge: Bridge, demo: Path) -> None:
    before = snapshot(demo)
    reply = move(bridge, demo, "art/enemyWalking_1.png", "art/walk/1.png", dry_run=True)
    assert reply["result"] == "ok" and reply["dry_run"] is True, reply
    assert snapshot(demo) == before
    assert reply["moved"] == [["art/enemyWalking_1.png", "art/walk/1.png"],
                              ["art/enemyWalking_1.png.import", "art/walk/1.png.import"]]
    changes = {change["path"]: change for change in reply["changes"]}
    assert sorted(changes) == ["art/walk/1.png.import", "mob.tscn"]  # the files whose text changes
    assert 'path="res://art/walk/1.png"' in changes["mob.tscn"]["diff"]
    # The moved .import, diffed from its old path: its source and artefact names change, nothing else.
    diff = changes["art/walk/1.png.import"]["diff"]
    assert changes["art/walk/1.png.import"]["action"] == "modify"
    assert diff.startswith("--- a/art/enemyWalking_1.png.import\n+++ b/art/walk/1.png.import\n")
    assert [line[1:] for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")] == [
        f'path="res://.godot/imported/1.png-{md5("res://art/walk/1.png")}.ctex"',
        'source_file="res://art/walk/1.png"',
        f'dest_files=["res://.godot/imported/1.png-{md5("res://art/walk/1.png")}.ctex"]']
    assert not (demo / "art" / "walk").exists()


@pytest.mark.parametrize(("source", "dest", "code", "field", "words"), [
    ("materials/base.tres", "materials/layered.tres", "invalid_path", "dest_path", "exists already"),
    ("materials/base.tres", "materials/base.res", "invalid_path", "dest_path", "keep the extension"),
    ("materials", "materials/inner", "invalid_path", "dest_path", "inside"),
    ("materials/none.tres", "materials/other.tres", "not_found", "source_path", "does not exist"),
    ("materials/base.tres", "../outside.tres", "path_outside_project", "dest_path", "outside"),
    ("materials/base.tres", "project.godot", "invalid_path", "dest_path", "not the project's"),
])
def test_a_move_that_cannot_be_made_is_refused_and_changes_nothing(
        bridge: Bridge, project: Path, source: str, dest: str, code: str, field: str, words: str) -> None:
    before = snapshot(project)
    reply = move(bridge, project, source, dest)
    assert reply["result"] == "error", reply
    assert (reply["error"]["code"], reply["error"]["field"]) == (code, field), reply
    assert words in reply["error"]["message"]
    assert snapshot(project) == before


def test_a_sidecar_moves_with_its_file_only(bridge: Bridge, demo: Path) -> None:
    reply = move(bridge, demo, "icon.webp.import", "art/icon.webp.import")
    assert reply["error"]["code"] == "invalid_path" and "move that file" in reply["error"]["message"]


def test_if_match_guards_the_moved_file(bridge: Bridge, project: Path) -> None:
    read = {"op": "resource_read", "project_path": str(project), "resource_path": "materials/base.tres"}
    etag = bridge.run(read)["etag"]
    (project / "materials" / "base.tres").write_text((project / "materials" / "base.tres").read_text() + "\n")
    before = snapshot(project)
    stale = move(bridge, project, "materials/base.tres", "materials/b.tres", if_match=etag)
    assert stale["error"]["code"] == "conflict" and snapshot(project) == before, stale
    etag = bridge.run(read)["etag"]
    done = move(bridge, project, "materials/base.tres", "materials/b.tres", if_match=etag)
    assert done["result"] == "ok" and done["etag"] == etag, done  # the same bytes, at the new path


def binary_copy(godot_bin: str, project: Path, compress: bool = False) -> Path:
    """materials/layered.tres saved as a binary materials/layered.res (it names base.tres)."""
    script = project.parent / "to_binary.gd"
    flags = "ResourceSaver.FLAG_COMPRESS" if compress else "0"
    script.write_text('extends SceneTree\nfunc _init() -> void:\n\tResourceSaver.save('
                      f'load("res://materials/layered.tres"), "res://materials/layered.res", {flags})\n\tquit()\n')
    subprocess.run([godot_bin, "--headless", "--path", str(project), "-s", str(script)], capture_output=True,
                   timeout=120, check=False)
    shutil.rmtree(project / ".godot", ignore_errors=True)
    binary = project / "materials" / "layered.res"
    assert binary.read_bytes()[:4] == (b"RSCC" if compress else b"RSRC")
    return binary


def test_a_binary_resource_naming_the_file_is_rewritten_the_engines_way(
        bridge: Bridge, project: Path, godot_bin: str) -> None:
    binary = binary_copy(godot_bin, project)
    before = binary.read_bytes()
    view = engine_view(godot_bin, project, ["res://materials/layered.res"])
    assert view["res://materials/layered.res"]["deps"] == ["res://materials/base.tres"]
    reply = move(bridge, project, "materials/base.tres", "shared/stone_base.tres")
    assert reply["result"] == "ok" and "materials/layered.res" in reply["updated"], reply
    after = binary.read_bytes()
    # The path in the table changed, with its length, and the internal resources' offsets after it (by
    # as many bytes): every other byte is as it was.
    old, new = b"res://materials/base.tres", b"res://shared/stone_base.tres"
    renamed = before.replace(old + b"\x00", new + b"\x00")
    renamed = renamed[:before.index(old) - 4] + (len(new) + 1).to_bytes(4, "little") + renamed[before.index(old):]
    assert len(after) == len(renamed)
    differing = [i for i in range(len(after)) if after[i] != renamed[i]]
    table_end = before.index(old) + len(new) + 200
    assert differing and all(before.index(old) < i < table_end for i in differing), differing
    view = engine_view(godot_bin, project, ["res://materials/layered.res"])
    assert view["res://materials/layered.res"] == {"loads": True, "deps": ["res://shared/stone_base.tres"]}


def test_a_compressed_binary_resource_naming_the_file_stops_the_move(
        bridge: Bridge, project: Path, godot_bin: str) -> None:
    binary_copy(godot_bin, project, compress=True)
    before = snapshot(project)
    reply = move(bridge, project, "materials/base.tres", "materials/b.tres")
    assert reply["error"]["code"] == "invalid_request", reply
    assert "materials/layered.res" in reply["error"]["message"] and "compressed" in reply["error"]["message"]
    assert snapshot(project) == before


def test_a_kill_during_a_move_of_200_files_leaves_the_project_as_it_was_or_wholly_moved(
        tmp_path: Path, godot_bin: str) -> None:
    project = tmp_path / "big"
    shutil.copytree(FIXTURES / "project", project)
    folder = project / "many"
    folder.mkdir()
    for i in range(200):
        (folder / f"m{i:03}.tres").write_text(
            f'[gd_resource type="StandardMaterial3D" format=3 uid="uid://bmany{i:07}"]\n\n'
            f'[resource]\nroughness = 0.{i % 10}\n')
    (project / "uses.tres").write_text(
        '[gd_resource type="ArrayMesh" load_steps=3 format=3]\n\n'
        + "".join(f'[ext_resource type="Material" path="res://many/m{i:03}.tres" id="{i}"]\n'
                  for i in range(0, 200, 20))
        + "\n[resource]\n")
    before = snapshot(project)
    request = json.dumps({"op": "resource_move", "project_path": str(project), "source_path": "many",
                          "dest_path": "moved/many"})
    bridge = subprocess.Popen([sys.executable, "-m", "gdres", "run", request], cwd=REPO, env=dict(os.environ),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    wait_for(lambda: (project / "moved").exists() or bridge.poll() is not None, 60, "the move to begin")
    os.kill(bridge.pid, signal.SIGKILL)  # the bridge only: its engine notices and ends by itself
    bridge.wait()
    wait_for(lambda: not [p for p in psutil.process_iter(["cmdline"])
                          if str(project) in " ".join(p.info["cmdline"] or ())], 30, "the engine to end")
    recovered = subprocess.run([sys.executable, "-m", "gdres", "run", json.dumps(
        {"op": "resource_read", "project_path": str(project), "resource_path": "materials/base.tres"})],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    assert '"result":"ok"' in recovered.stdout, recovered.stderr
    after = snapshot(project)
    if after != before:
        moved = {moved_name(path, "many", "moved/many"): sha for path, sha in before.items() if path != "uses.tres"}
        assert {path: sha for path, sha in after.items() if path != "uses.tres"} == moved
        assert 'path="res://moved/many/m000.tres"' in (project / "uses.tres").read_text()
    assert not list(project.rglob("*.tmp*"))


def test_a_uid_cache_left_stale_by_a_move_outside_the_bridge_is_mended_where_the_file_names_its_path(
        bridge: Bridge, project: Path, godot_bin: str) -> None:
    # As a move by hand (or one undone after its uid cache was written) leaves it: the editor's cache
    # names the old path, the file the new one. The engine takes the uid first, and would fail.
    editor_import(godot_bin, project)
    assert (project / ".godot" / "uid_cache.bin").exists()
    (project / "materials" / "base.tres").rename(project / "materials" / "moved.tres")
    layered = project / "materials" / "layered.tres"
    layered.write_text(layered.read_text().replace("res://materials/base.tres", "res://materials/moved.tres"))
    reply = bridge.run({"op": "resource_read", "project_path": str(project), "resource_path": "materials/layered.tres"})
    assert reply["result"] == "ok", json.dumps(reply)
    assert reply["properties"]["next_pass"]["path"] == "res://materials/moved.tres"


def test_a_sidecar_or_source_that_is_a_link_is_refused(bridge: Bridge, project: Path) -> None:
    # Renaming a link's target would move whatever it leads to (project.godot, .godot/, .git/).
    (project / "materials" / "base.tres.uid").symlink_to("../project.godot")
    (project / "link.tres").symlink_to("materials/layered.tres")
    (project / "linked").symlink_to("materials")

    def files() -> dict[str, bytes]:
        return {path.relative_to(project).as_posix(): path.read_bytes() for path in project.rglob("*")
                if path.is_file() and not path.is_symlink() and "linked" not in path.parts}

    before = files()
    for source in ("materials/base.tres", "link.tres", "linked"):
        reply = move(bridge, project, source, "m/" + source.rsplit("/", 1)[-1])
        assert reply["error"]["code"] == "invalid_path" and "link" in reply["error"]["message"], reply
    assert files() == before and (project / "project.godot").is_file()


def test_a_relative_reference_from_a_file_that_stays_is_rewritten(bridge: Bridge, project: Path) -> None:
    holder = project / "values" / "relative.tres"
    holder.write_text('[gd_resource type="StandardMaterial3D" load_steps=2 format=3]\n\n'
                      '[ext_resource type="Material" path="../materials/base.tres" id="1"]\n\n'
                      '[resource]\nnext_pass = ExtResource("1")\n')
    reply = move(bridge, project, "materials/base.tres", "shared/base.tres")
    assert "values/relative.tres" in reply["updated"], reply
    assert '[ext_resource type="Material" path="res://shared/base.tres" id="1"]' in holder.read_text()


@pytest.mark.parametrize(("tag", "why"), [
    ('[ext_resource type="Material"\npath="res://materials/base.tres" id="1"]', "a tag over two lines"),
    ('[ext_resource type="Material" path="res://values/none.tres" path="res://materials/base.tres" id="1"]',
     "a field given twice: the engine takes the last"),
])
def test_an_ext_resource_tag_is_read_as_the_engine_reads_it(
        bridge: Bridge, project: Path, godot_bin: str, tag: str, why: str) -> None:
    holder = project / "values" / "holder.tres"
    holder.write_text(f'[gd_resource type="StandardMaterial3D" load_steps=2 format=3]\n\n{tag}\n\n'
                      '[resource]\nnext_pass = ExtResource("1")\n')
    assert engine_view(godot_bin, project, ["res://values/holder.tres"])["res://values/holder.tres"]["loads"], why
    reply = move(bridge, project, "materials/base.tres", "shared/base.tres")
    assert "values/holder.tres" in reply["updated"] and reply["not_updated"] == [], (why, reply)
    view = engine_view(godot_bin, project, ["res://values/holder.tres"])["res://values/holder.tres"]
    assert view == {"loads": True, "deps": ["res://shared/base.tres"]}, (why, view)


def test_a_dependent_that_is_not_utf8_stops_the_move_and_changes_nothing(bridge: Bridge, project: Path) -> None:
    # A red-team find: the line offsets were counted on the decoded text, so each invalid byte moved
    # the splice, and the file was written back decoded; the reply was ok, the file would not load.
    holder = project / "values" / "holder.tres"
    holder.write_bytes(b'[gd_resource type="StandardMaterial3D" load_steps=2 format=3]\n\n; comment \xff\xfe\xfd\n'
                       b'[ext_resource type="Material" path="res://materials/base.tres" id="1"]\n\n'
                       b'[resource]\nnext_pass = ExtResource("1")\n')
    before = snapshot(project)
    reply = move(bridge, project, "materials/base.tres", "shared/base.tres")
    assert reply["result"] == "error" and reply["error"]["code"] == "invalid_request", reply
    assert "values/holder.tres" in reply["error"]["message"] and "UTF-8" in reply["error"]["message"], reply
    assert snapshot(project) == before


def test_a_path_with_an_escape_is_listed_not_rewritten(bridge: Bridge, project: Path) -> None:
    folder = project / "quoted"
    folder.mkdir()
    (folder / 'a"b.tres').write_text('[gd_resource type="Gradient" format=3]\n\n[resource]\n')
    holder = folder / "holder.tres"
    text = ('[gd_resource type="Resource" load_steps=2 format=3]\n\n'
            '[ext_resource type="Gradient" path="res://quoted/a\\"b.tres" id="1"]\n\n[resource]\n'
            'metadata/x = ExtResource("1")\n')
    holder.write_text(text)
    reply = move(bridge, project, "quoted", "moved")
    assert reply["result"] == "ok", reply
    assert [entry["file"] for entry in reply["not_updated"]] == ["quoted/holder.tres"]
    assert (project / "moved" / "holder.tres").read_text() == text


def test_an_empty_folder_moves_with_its_folder(bridge: Bridge, project: Path) -> None:
    (project / "materials" / "empty" / "deeper").mkdir(parents=True)
    assert move(bridge, project, "materials", "shared/materials")["result"] == "ok"
    assert (project / "shared" / "materials" / "empty" / "deeper").is_dir()
    assert not (project / "materials").exists()


def test_an_undone_move_puts_the_uid_cache_back_too(project: Path, godot_bin: str) -> None:
    editor_import(godot_bin, project)
    before = snapshot(project)
    lines = [{"op": "resource_move", "project_path": str(project), "source_path": "materials/base.tres",
              "dest_path": "m/base.tres"},
             {"op": "resource_read", "project_path": str(project), "resource_path": "missing.tres"}]
    with Bridge(godot_bin) as bridge:
        replies = list(bridge.batch(lines, atomic=True))
    assert replies[0]["error"]["code"] == "rolled_back", replies
    after = snapshot(project)
    assert after[".godot/uid_cache.bin"] == before[".godot/uid_cache.bin"]
    assert {path: sha for path, sha in after.items() if not path.startswith(".godot/")} == \
        {path: sha for path, sha in before.items() if not path.startswith(".godot/")}
