"""uid:// names a project file wherever a request member names one, resolved from the project's files
as the editor resolves it, on a fresh clone (no .godot/) too; replies carry the file's uid."""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, file_uid, fresh_clone, snapshot
from engine.test_imports import png
from gdres import Bridge
from gdres.engine import wall
from gdres.requests import uids

SHAPED_SCENE = ('[gd_scene format=3 uid="uid://bshapedscene1"]\n\n'
                '[node name="Body" type="StaticBody3D"]\n\n'
                '[node name="Shape" type="CollisionShape3D" parent="."]\n')
BINARY = """extends SceneTree
func _initialize() -> void:
	ResourceSaver.save(Gradient.new(), "res://data/ramp.res")
	ResourceSaver.set_uid("res://data/ramp.res", ResourceUID.create_id())
	quit()
"""


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory, godot_bin: str) -> Path:
    """A project the editor has imported (so every file has its uid, where the editor puts it), with
    the engine's own uid table beside it; the project is then stripped of .godot/ as git keeps it."""
    root = tmp_path_factory.mktemp("uids") / "project"
    for folder in ("icons", "shaders", "materials", "scenes", "data", ".hidden"):
        (root / folder).mkdir(parents=True)
    (root / "project.godot").write_text('config_version=5\n\n[application]\nconfig/name="uids"\n')
    (root / "icons" / "red.png").write_bytes(png())
    (root / "shaders" / "glow.gdshader").write_text("shader_type spatial;\nuniform float glow = 1.0;\n")
    shutil.copy(REPO / "tests/fixtures/project/materials/base.tres", root / "materials" / "base.tres")
    (root / "scenes" / "shaped.tscn").write_text(SHAPED_SCENE)
    (root / ".hidden" / "x.tres").write_text(
        '[gd_resource type="Gradient" format=3 uid="uid://bhiddenfile01"]\n\n[resource]\n')
    (root / "binary.gd").write_text(BINARY)
    subprocess.run([godot_bin, "--headless", "--path", str(root), "-s", "binary.gd"], capture_output=True,
                   timeout=120, check=True)
    (root / "binary.gd").unlink()
    subprocess.run([godot_bin, "--headless", "--path", str(root), "--import"], capture_output=True, timeout=180)
    assert (root / "icons/red.png.import").is_file() and (root / "shaders/glow.gdshader.uid").is_file()
    table = uids.scan(root)
    done = subprocess.run([godot_bin, "--headless", "--path", str(root), "-s",
                           str(REPO / "tests/gdscript/uid_table.gd"), "--", *table],
                          capture_output=True, timeout=120, text=True)
    (root.parent / "engine_table.json").write_text(done.stdout.strip().splitlines()[-1])
    shutil.rmtree(root / ".godot")
    return root


@pytest.fixture
def clone(template: Path, tmp_path: Path) -> Path:
    return fresh_clone(template, tmp_path)


def test_the_bridge_finds_each_uid_where_the_editor_put_it(template: Path) -> None:
    engine = json.loads((template.parent / "engine_table.json").read_text())
    ours = {uid: "res://" + paths[0] for uid, paths in uids.scan(template).items()}
    assert ours == engine
    # A text resource, a scene, an imported texture, a shader (its .uid file), a binary resource.
    kinds = {path.rsplit(".", 1)[1] for path in ours.values()}
    assert kinds == {"tres", "tscn", "png", "gdshader", "res"}
    assert "uid://bhiddenfile01" not in ours  # the editor does not scan hidden folders


def test_a_read_by_uid_on_a_fresh_clone(clone: Path, bridge: Bridge) -> None:
    uid = file_uid(clone / "materials/base.tres")
    before = snapshot(clone)
    reply = bridge.run({"op": "resource_read", "project_path": str(clone), "resource_path": uid})
    assert reply["result"] == "ok" and reply["resource_path"] == uid and reply["uid"] == uid, reply
    assert reply["properties"]["roughness"] == 0.25
    assert snapshot(clone) == before


def test_a_binary_resource_is_read_by_its_uid(clone: Path, bridge: Bridge) -> None:
    (uid,) = [uid for uid, paths in uids.scan(clone).items() if paths == ["data/ramp.res"]]
    reply = bridge.run({"op": "resource_read", "project_path": str(clone), "path": uid})
    assert reply["result"] == "ok" and reply["type"] == "Gradient" and reply["uid"] == uid, reply


def test_a_duplicate_by_uid_on_a_fresh_clone_gets_a_uid_of_its_own(clone: Path, bridge: Bridge) -> None:
    source = file_uid(clone / "materials/base.tres")
    reply = bridge.run({"op": "resource_duplicate", "project_path": str(clone), "source_path": source,
                        "dest_path": "materials/copy.tres", "property_overrides": {"metallic": 1.0}})
    assert reply["result"] == "ok" and reply["source_path"] == source, reply
    assert reply["uid"] == file_uid(clone / "materials/copy.tres") != source
    # The copy is found by its new uid at once (the bridge looks again for a uid it does not know).
    again = bridge.run({"op": "resource_update", "project_path": str(clone), "resource_path": reply["uid"],
                        "properties": {"roughness": 0.5}})
    assert again["result"] == "ok" and again["uid"] == reply["uid"], again
    assert "roughness = 0.5" in (clone / "materials/copy.tres").read_text()


def test_every_member_naming_a_file_takes_a_uid(clone: Path, bridge: Bridge) -> None:
    table = {paths[0]: uid for uid, paths in uids.scan(clone).items()}
    shader = bridge.run({"op": "material_create", "project_path": str(clone), "material_type": "ShaderMaterial",
                         "shader_path": table["shaders/glow.gdshader"], "resource_path": "materials/glow.tres",
                         "properties": {"shader_parameter/glow": 2.0}})
    assert shader["result"] == "ok", shader
    assert 'path="res://shaders/glow.gdshader"' in (clone / "materials/glow.tres").read_text()
    shape = bridge.run({"op": "shape_create", "project_path": str(clone), "shape_type": "BoxShape3D",
                        "scene_path": table["scenes/shaped.tscn"], "node_path": "Shape", "save_path": "box.tres"})
    assert shape["result"] == "ok" and shape["scene_path"] == table["scenes/shaped.tscn"], shape
    assert 'ExtResource("' in (clone / "scenes/shaped.tscn").read_text()
    over = bridge.run({"op": "style_box_create", "project_path": str(clone), "style_type": "StyleBoxFlat",
                       "resource_path": shape["uid"]})
    assert over["result"] == "ok" and over["uid"] == shape["uid"], over
    assert (clone / "box.tres").read_text().startswith('[gd_resource type="StyleBoxFlat"')


@pytest.mark.parametrize(("uid", "code", "said"), [
    ("uid://bnosuchfile01", "not_found", "uid://bnosuchfile01 names no file of the project"),
    ("uid://bhiddenfile01", "not_found", "names no file"),
])
def test_a_uid_no_file_claims_is_not_found(clone: Path, bridge: Bridge, uid: str, code: str, said: str) -> None:
    before = snapshot(clone)
    reply = bridge.run({"op": "resource_read", "project_path": str(clone), "resource_path": uid})
    assert reply["error"]["code"] == code and said in reply["error"]["message"], reply
    assert reply["error"]["field"] == "resource_path" and reply["resource_path"] == uid
    assert snapshot(clone) == before


def test_a_uid_two_files_claim_names_neither(clone: Path, bridge: Bridge) -> None:
    shutil.copy(clone / "materials/base.tres", clone / "materials/copied.tres")  # copied outside the editor
    uid = file_uid(clone / "materials/base.tres")
    reply = bridge.run({"op": "resource_update", "project_path": str(clone), "resource_path": uid,
                        "properties": {"metallic": 0.0}})
    assert reply["error"]["code"] == "invalid_path", reply
    assert "materials/base.tres and materials/copied.tres" in reply["error"]["message"]


def test_a_fifo_named_like_a_resource_does_not_hold_up_the_search(clone: Path, bridge: Bridge) -> None:
    os.mkfifo(clone / "materials" / "pipe.tres")
    os.mkfifo(clone / "shaders" / "pipe.gdshader.uid")
    uid = file_uid(clone / "materials/base.tres")
    reply = bridge.run({"op": "resource_read", "project_path": str(clone), "resource_path": uid})
    assert reply["result"] == "ok", reply


def test_a_link_beside_a_file_lends_it_no_uid(clone: Path, godot_bin: str, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Where no wall keeps the engine from reading outside the project (macOS, Windows; here: off)."""
    secret = tmp_path / "secret.txt"
    secret.write_text("uid://bsecretoutside\n")
    (clone / "materials/base.tres.uid").symlink_to(secret)
    monkeypatch.setenv(wall.OFF_VARIABLE, "off")
    with Bridge(godot_bin) as bridge:
        reply = bridge.run({"op": "resource_read", "project_path": str(clone), "resource_path": "materials/base.tres"})
    assert reply["result"] == "ok" and "secret" not in json.dumps(reply), reply


def test_a_hidden_file_claims_no_uid(clone: Path, bridge: Bridge) -> None:
    shutil.copy(clone / "materials/base.tres", clone / "materials/.base.tres.1234-5678.tmp.tres")  # a stray temp
    uid = file_uid(clone / "materials/base.tres")
    reply = bridge.run({"op": "resource_read", "project_path": str(clone), "resource_path": uid})
    assert reply["result"] == "ok", reply


def test_a_binary_resource_updated_keeps_its_uid_and_nothing_is_left_beside_it(clone: Path, bridge: Bridge) -> None:
    (uid,) = [uid for uid, paths in uids.scan(clone).items() if paths == ["data/ramp.res"]]
    for offsets in ([0.0, 0.5], [0.0, 0.25]):
        reply = bridge.run({"op": "resource_update", "project_path": str(clone), "resource_path": uid,
                            "properties": {"offsets": offsets}})
        assert reply["result"] == "ok" and reply["uid"] == uid, reply
    read = bridge.run({"op": "resource_read", "project_path": str(clone), "resource_path": "data/ramp.res"})
    assert read["uid"] == uid and read["properties"]["offsets"] == [0.0, 0.25], read
    assert sorted(path.name for path in (clone / "data").iterdir()) == ["ramp.res"]


@pytest.mark.parametrize("old", ["x" * 200, "short"])
def test_a_file_stamped_in_place_holds_the_stamped_text_alone(old: str, tmp_path: Path, godot_bin: str) -> None:
    # The stamp rewrites the saver's temp file in place (gdscript/files/atomic_write.gd rewrite()):
    # what was longer than the stamped text must not trail after it.
    target = tmp_path / "made.tres"
    target.write_text(old)
    new = '[gd_resource type="Resource" format=3 uid="uid://bstamped0001"]\n\n[resource]'
    done = subprocess.run([godot_bin, "--headless", "-s", str(REPO / "tests" / "gdscript" / "rewrite_check.gd"), "--",
                           str(REPO / "gdscript" / "files" / "atomic_write.gd"), str(target), new],
                          capture_output=True, text=True, timeout=60, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {"error": 0, "text": new}
    assert target.read_text() == new


def test_a_stamp_the_file_system_cuts_short_is_an_error(tmp_path: Path, godot_bin: str) -> None:
    # A file size limit stands in for a full disk: the stamped text (longer than the saved one) can
    # be written only in part, and the rewrite must say so, not leave the saved text with a reply of ok.
    target = tmp_path / "made.tres"
    old = '[gd_resource type="Resource" format=3]\n\n[resource]\n'
    target.write_text(old)
    new = '[gd_resource type="Resource" format=3 uid="uid://bstamped0002"]\n\n[resource]'
    limit = len(old) + 4

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    # SIGXFSZ stays ignored (Python ignores it), so the write fails with EFBIG instead of ending the engine.
    done = subprocess.run([godot_bin, "--headless", "-s", str(REPO / "tests" / "gdscript" / "rewrite_check.gd"), "--",
                           str(REPO / "gdscript" / "files" / "atomic_write.gd"), str(target), new],
                          capture_output=True, text=True, timeout=60, check=True, preexec_fn=limited,
                          restore_signals=False)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["error"] != 0, result


STALE_HOLDER = ('[gd_resource type="Resource" load_steps=2 format=3]\n\n'
                '[ext_resource type="{type}" uid="{uid}" path="res://old/place/{name}" id="1"]\n\n'
                '[resource]\nmetadata/named = ExtResource("1")\n')


@pytest.mark.parametrize("moved", ["materials/base.tres", "icons/red.png"])
def test_a_file_whose_dependency_moved_loads_it_by_its_uid_on_a_fresh_clone(
        template: Path, tmp_path: Path, godot_bin: str, moved: str) -> None:
    # The editor finds a moved dependency by its uid; on a fresh clone (no uid cache) the bridge
    # answered not_found for the stale path until something had imported the whole project.
    clone = fresh_clone(template, tmp_path)
    if moved.endswith(".png"):
        found = re.search(r'^uid="(uid://[a-z0-9]+)"', (clone / f"{moved}.import").read_text(), re.MULTILINE)
        assert found is not None
        uid = found[1]
    else:
        uid = file_uid(clone / moved)
    assert uid
    kind = "Texture2D" if moved.endswith(".png") else "Material"
    (clone / "holder.tres").write_text(STALE_HOLDER.format(type=kind, uid=uid, name=Path(moved).name))
    with Bridge(godot_bin) as bridge:
        reply = bridge.run({"op": "resource_read", "project_path": str(clone), "resource_path": "holder.tres",
                            "depth": 0})
    assert reply["result"] == "ok", reply
    assert reply["properties"]["metadata/named"] == f"res://{moved}"


SAVE_HOLDER = """extends SceneTree
func _initialize() -> void:
	var holder := Resource.new()
	holder.set_meta("named", load("res://materials/base.tres"))
	ResourceSaver.save(holder, "res://holder.res")
	quit()
"""


def test_a_binary_file_whose_dependency_moved_loads_it_by_its_uid_on_a_fresh_clone(
        template: Path, tmp_path: Path, godot_bin: str) -> None:
    scratch = fresh_clone(template, tmp_path / "scratch")
    (scratch / "save.gd").write_text(SAVE_HOLDER)
    subprocess.run([godot_bin, "--headless", "--path", str(scratch), "-s", "save.gd"], capture_output=True,
                   timeout=120, check=True)
    # The editor's saver records each external resource's uid after its path; a script's save outside
    # the editor (4.6.3) records none (-1): the uid is written where the editor writes it.
    named = b"res://materials/base.tres\0"
    data = (scratch / "holder.res").read_bytes()
    assert data.count(named + b"\xff" * 8) == 1
    uid = file_uid(scratch / "materials" / "base.tres").removeprefix("uid://")
    digits = "abcdefghijklmnopqrstuvwxy012345678"
    number = 0
    for digit in uid:
        number = number * len(digits) + digits.index(digit)
    clone = fresh_clone(template, tmp_path)
    (clone / "holder.res").write_bytes(data.replace(named + b"\xff" * 8, named + number.to_bytes(8, "little")))
    (clone / "materials" / "moved").mkdir()
    (clone / "materials" / "base.tres").rename(clone / "materials" / "moved" / "base.tres")
    with Bridge(godot_bin) as bridge:
        reply = bridge.run({"op": "resource_read", "project_path": str(clone), "resource_path": "holder.res",
                            "depth": 0})
    assert reply["result"] == "ok", reply
    assert reply["properties"]["metadata/named"] == "res://materials/moved/base.tres"


@pytest.mark.parametrize("written", ['uid="uid://bxyz\\n"', 'uid="uid://bxyz\n"'])
def test_a_header_uid_the_engine_would_refuse_is_no_uid(project: Path, godot_bin: str, written: str) -> None:
    # A red-team find: a uid ending in a line break passed the check ("$" matches before a last
    # newline), was given in replies and written into the files that came to name the file.
    (project / "m.tres").write_text(f'[gd_resource type="StandardMaterial3D" format=3 {written}]\n\n'
                                    "[resource]\nroughness = 0.3\n")
    with Bridge(godot_bin) as bridge:
        read = bridge.run({"op": "resource_read", "project_path": str(project), "resource_path": "m.tres"})
        assert read["result"] == "ok" and read["uid"] is None, read
        made = bridge.run({"op": "material_create", "project_path": str(project), "material_type": "StandardMaterial3D",
                           "resource_path": "n.tres", "properties": {"next_pass": "m.tres"}})
    assert made["result"] == "ok", made
    line = next(line for line in (project / "n.tres").read_text().splitlines() if 'path="res://m.tres"' in line)
    assert "uid=" not in line, line
