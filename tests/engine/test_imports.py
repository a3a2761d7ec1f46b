"""Requests that need an imported asset: one import of a never-imported project, or not_imported.

The fixture project has never been imported (no .godot/); each test writes a PNG into its copy.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
import zlib
from hashlib import md5
from pathlib import Path

import psutil
import pytest

from conftest import (
    REPO,
    broken_scripts,
    cmdline,
    file_etag,
    file_uid,
    fresh_clone,
    run_cli,
    running,
    snapshot,
    wait_for,
)
from gdres import Bridge
from gdres.engine import wall

IMPORTING = "gdres: importing the assets of"


def png(width: int = 4, height: int = 4) -> bytes:
    """A small opaque red RGBA PNG."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + b"\xff\x00\x00\xff" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def md5_of(text: str) -> str:
    return md5(text.encode()).hexdigest()


@pytest.fixture
def textured(project: Path) -> Path:
    """The project with icons/red.png and no import data."""
    (project / "icons").mkdir()
    (project / "icons" / "red.png").write_bytes(png())
    assert not (project / ".godot").exists()
    return project


def style_box(project: Path, path: str = "ui/panel.tres") -> dict[str, object]:
    return {"op": "style_box_create", "project_path": str(project), "style_type": "StyleBoxTexture",
            "resource_path": path, "properties": {"texture": "icons/red.png"}}


@pytest.mark.timeout(180)
def test_a_texture_in_a_never_imported_project_is_imported_then_used(textured: Path, godot_bin: str) -> None:
    done = run_cli("run", json.dumps(style_box(textured)), godot=godot_bin)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"op": "style_box_create", "resource_path": "ui/panel.tres",
                                       "type": "StyleBoxTexture", "uid": file_uid(textured / "ui/panel.tres"),
                                       "etag": file_etag(textured / "ui/panel.tres"), "result": "ok"}
    assert done.stderr.count(IMPORTING) == 1
    assert (textured / "icons/red.png.import").is_file()
    import_uid = (textured / "icons/red.png.import").read_text().split('uid="', 1)[1].split('"', 1)[0]
    text = (textured / "ui/panel.tres").read_text()
    assert f'[ext_resource type="Texture2D" uid="{import_uid}" path="res://icons/red.png"' in text
    with Bridge(godot_bin) as bridge:
        read = bridge.resource_read(str(textured), "ui/panel.tres", depth=0)
    assert read["properties"]["texture"] == "res://icons/red.png"


@pytest.mark.timeout(180)
def test_a_request_imports_only_the_assets_it_needs_announced_by_name_with_counts_that_agree(
    textured: Path, godot_bin: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before: the whole project was imported (12 assets, "1 of 12" ... "12 of 12") for one texture.
    monkeypatch.setattr("gdres.serving.starter.IMPORT_PROGRESS_EVERY", 0.0)
    for i in range(11):
        (textured / "icons" / f"tile_{i}.png").write_bytes(png(8, 8))
    with Bridge(godot_bin) as bridge:
        assert bridge.run(style_box(textured))["result"] == "ok"
    messages = [record.getMessage() for record in caplog.records]
    assert [m for m in messages if m.startswith(IMPORTING)] == [
        f"{IMPORTING} {textured} that the request needs (1, once): icons/red.png"]
    steps = [m.removeprefix("gdres: importing: ") for m in messages if m.startswith("gdres: importing: ")]
    assert [step.split(" assets, ")[0] for step in steps] == ["1 of 1"]
    assert sorted(p.name for p in (textured / ".godot" / "imported").iterdir()
                  if p.suffix == ".md5") == [f"red.png-{md5_of('res://icons/red.png')}.md5"]


@pytest.mark.timeout(180)
def test_a_bridge_imports_each_asset_once_when_a_request_first_needs_it(
    textured: Path, godot_bin: str, caplog: pytest.LogCaptureFixture
) -> None:
    (textured / "icons" / "blue.png").write_bytes(png(2, 2))
    with Bridge(godot_bin) as bridge:
        first = bridge.run(style_box(textured, "ui/a.tres"))
        second = bridge.run({**style_box(textured, "ui/b.tres"), "properties": {"texture": "icons/blue.png"}})
        third = bridge.run(style_box(textured, "ui/c.tres"))
    assert (first["result"], second["result"], third["result"]) == ("ok", "ok", "ok")
    messages = [record.getMessage() for record in caplog.records]  # the library logs them (logger "gdres")
    assert [m for m in messages if m.startswith(IMPORTING)] == [
        f"{IMPORTING} {textured} that the request needs (1, once): icons/red.png",
        f"{IMPORTING} {textured} that the request needs (1, once): icons/blue.png"]
    assert len([m for m in messages if m.startswith(f"gdres: imported the assets of {textured} in ")]) == 2


def test_import_checks_that_do_not_load_refuse_the_asset(
        textured: Path, godot_bin: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The gate's import checks are compiled on the first imported asset: should they not load, the
    # asset is refused, not handed to the engine unchecked.
    with Bridge(godot_bin) as bridge:
        assert bridge.run(style_box(textured))["result"] == "ok"
    broken_scripts(tmp_path, monkeypatch, "safety/imported.gd")
    with Bridge(godot_bin) as bridge:
        for _ in range(2):
            reply = bridge.run({"op": "resource_read", "project_path": str(textured), "resource_path": "ui/panel.tres"})
            assert reply["result"] == "error" and reply["error"]["code"] == "unsafe_resource", reply
            assert "res://icons/red.png" in reply["error"]["message"]


def test_no_import_answers_not_imported_and_changes_nothing(textured: Path, godot_bin: str) -> None:
    before = snapshot(textured)
    done = run_cli("--no-import", "run", json.dumps(style_box(textured)), godot=godot_bin)
    assert done.returncode == 1
    reply = json.loads(done.stdout)
    assert reply["error"]["code"] == "not_imported"
    assert reply["error"]["field"] == "properties"
    assert "res://icons/red.png" in reply["error"]["message"]
    assert "run without it, or run `gdres import` once" in reply["error"]["message"]
    assert IMPORTING not in done.stderr
    assert snapshot(textured) == before


def test_bridge_without_auto_import_answers_not_imported(textured: Path, godot_bin: str) -> None:
    before = snapshot(textured)
    with Bridge(godot_bin, auto_import=False) as bridge:
        reply = bridge.run({"op": "material_create", "project_path": str(textured),
                            "material_type": "StandardMaterial3D", "resource_path": "m.tres",
                            "properties": {"albedo_texture": "res://icons/red.png"}})
    assert reply["error"]["code"] == "not_imported"
    assert snapshot(textured) == before


@pytest.mark.timeout(180)
def test_deep_duplicate_keeps_an_imported_texture_as_a_reference(textured: Path, bridge: Bridge) -> None:
    (textured / "materials/painted.tres").write_text(
        '[gd_resource type="StandardMaterial3D" format=3]\n\n'
        '[ext_resource type="Texture2D" path="res://icons/red.png" id="1_tex"]\n'
        '[ext_resource type="Material" path="res://materials/base.tres" id="2_base"]\n\n'
        '[resource]\nalbedo_texture = ExtResource("1_tex")\nnext_pass = ExtResource("2_base")\n'
    )
    reply = bridge.run({"op": "resource_duplicate", "project_path": str(textured),
                        "source_path": "materials/painted.tres", "dest_path": "materials/copy.tres",
                        "deep_copy": True})
    assert reply["result"] == "ok", reply
    text = (textured / "materials/copy.tres").read_text()
    assert text.count("[ext_resource") == 1
    assert 'path="res://icons/red.png"' in text
    assert '[sub_resource type="StandardMaterial3D"' in text


def test_a_file_that_is_no_resource_stays_not_imported_after_the_import(
    textured: Path, bridge: Bridge
) -> None:
    (textured / "notes.txt").write_text("not an asset")
    reply = bridge.run({"op": "material_create", "project_path": str(textured),
                        "material_type": "StandardMaterial3D", "resource_path": "m.tres",
                        "properties": {"albedo_texture": "notes.txt"}})
    assert reply["error"]["code"] == "not_imported"
    assert not (textured / "m.tres").exists()


@pytest.mark.timeout(180)
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_batch_imports_once_and_serves_every_request(textured: Path, godot_bin: str, jobs: str) -> None:
    lines = [style_box(textured, f"ui/panel_{i}.tres") for i in range(6)]
    lines.insert(3, {"op": "resource_read", "project_path": str(textured), "resource_path": "materials/base.tres"})
    done = run_cli("batch", "--jobs", jobs, input="".join(json.dumps(r) + "\n" for r in lines), godot=godot_bin)
    assert done.returncode == 0, done.stdout + done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["result"] for r in replies] == ["ok"] * 7
    assert [r["resource_path"] for r in replies] == [r["resource_path"] for r in lines]
    assert done.stderr.count(IMPORTING) == 1
    assert all('path="res://icons/red.png"' in (textured / f"ui/panel_{i}.tres").read_text() for i in range(6))


TEXTURED_MATERIAL = ('[gd_resource type="StandardMaterial3D" format=3]\n\n'
                     '[ext_resource type="Texture2D" path="res://icons/red.png" id="1_tex"]\n\n'
                     '[resource]\nalbedo_texture = ExtResource("1_tex")\nroughness = 0.5\n')


@pytest.fixture(scope="module")
def cloned_template(tmp_path_factory: pytest.TempPathFactory, godot_bin: str) -> Path:
    """A project imported once by the editor, then stripped of .godot/ as a git checkout is."""
    root = tmp_path_factory.mktemp("clone") / "project"
    (root / "icons").mkdir(parents=True)
    (root / "project.godot").write_text('config_version=5\n\n[application]\nconfig/name="clone"\n')
    (root / "icons" / "red.png").write_bytes(png())
    (root / "textured.tres").write_text(TEXTURED_MATERIAL)
    subprocess.run([godot_bin, "--headless", "--path", str(root), "--import"], capture_output=True, timeout=180)
    assert (root / "icons" / "red.png.import").is_file()
    shutil.rmtree(root / ".godot")
    return root


@pytest.fixture
def clone(cloned_template: Path, tmp_path: Path) -> Path:
    return fresh_clone(cloned_template, tmp_path)


@pytest.mark.timeout(180)
def test_a_fresh_clone_is_imported_once_then_served(clone: Path, godot_bin: str) -> None:
    requests = [{"op": "resource_read", "project_path": str(clone), "resource_path": "textured.tres"},
                {**style_box(clone), "project_path": str(clone)}]
    done = run_cli("batch", input="".join(json.dumps(r) + "\n" for r in requests), godot=godot_bin)
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["result"] for r in replies] == ["ok", "ok"], replies
    assert replies[0]["properties"]["albedo_texture"]["path"] == "res://icons/red.png"
    assert done.stderr.count(IMPORTING) == 1


@pytest.mark.timeout(240)
def test_a_read_leaves_the_users_import_and_uid_files_as_they_are(clone: Path, godot_bin: str) -> None:
    # As a tps-demo clone keeps them: .import files written by an older editor (fewer parameters than
    # the editor here writes) and a shader with no .uid file beside it.
    settings = clone / "icons" / "red.png.import"
    kept = [line for line in settings.read_text().splitlines(keepends=True)
            if not line.startswith(("compress/uastc_level", "process/channel_remap", "compress/rdo_quality_loss"))]
    settings.write_text("".join(kept))
    (clone / "glow.gdshader").write_text("shader_type spatial;\n")
    before = snapshot(clone)
    done = run_cli("run", json.dumps({"op": "resource_read", "project_path": str(clone),
                                      "resource_path": "textured.tres"}), godot=godot_bin)
    assert json.loads(done.stdout)["result"] == "ok", done.stdout
    after = snapshot(clone)
    outside_godot = {name: data for name, data in after.items() if not name.startswith(".godot/")}
    assert outside_godot == before


def test_a_fresh_clone_without_import_is_not_imported_naming_the_asset(clone: Path, godot_bin: str) -> None:
    before = snapshot(clone)
    done = run_cli("--no-import", "run",
                   json.dumps({"op": "resource_read", "project_path": str(clone), "resource_path": "textured.tres"}),
                   godot=godot_bin)
    reply = json.loads(done.stdout)
    assert reply["error"]["code"] == "not_imported", reply
    assert "res://icons/red.png" in reply["error"]["message"]
    assert snapshot(clone) == before


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_an_asset_changed_since_its_import_is_imported_again(clone: Path, godot_bin: str) -> None:
    read = {"op": "resource_read", "project_path": str(clone), "resource_path": "textured.tres"}
    with Bridge(godot_bin) as bridge:
        assert bridge.run(read)["result"] == "ok"
        (clone / "icons" / "red.png").write_bytes(png(8, 8))
    with Bridge(godot_bin, auto_import=False) as bridge:
        stale = bridge.run(read)
    assert stale["error"]["code"] == "not_imported", stale
    with Bridge(godot_bin) as bridge:
        assert bridge.run(read)["result"] == "ok"
        info = bridge.run({"op": "resource_read", "project_path": str(clone), "resource_path": "textured.tres",
                           "depth": 0})
    assert info["properties"]["albedo_texture"] == "res://icons/red.png"


@pytest.mark.timeout(240)
def test_the_import_runs_none_of_the_projects_code(clone: Path, godot_bin: str, tmp_path: Path) -> None:
    marker = "FileAccess.open(\"res://MARK_%s.txt\", FileAccess.WRITE).store_string(\"ran\")"
    (clone / "project.godot").write_text(
        'config_version=5\n\n[application]\nconfig/name="clone"\n\n[autoload]\nAuto="*res://auto.gd"\n\n'
        '[editor_plugins]\nenabled=PackedStringArray("res://addons/plug/plugin.cfg")\n')
    (clone / "auto.gd").write_text(f"@tool\nextends Node\nstatic var _x: bool = _m()\nstatic func _m() -> bool:\n"
                                   f"\t{marker % 'autoload'}\n\treturn true\n")
    (clone / "addons" / "plug").mkdir(parents=True)
    (clone / "addons" / "plug" / "plugin.cfg").write_text(
        '[plugin]\nname="p"\ndescription=""\nauthor=""\nversion="1"\nscript="plugin.gd"\n')
    (clone / "addons" / "plug" / "plugin.gd").write_text(
        f"@tool\nextends EditorPlugin\nstatic var _x: bool = _m()\nstatic func _m() -> bool:\n"
        f"\t{marker % 'plugin'}\n\treturn true\n")
    source = tmp_path / "mark.c"
    source.write_text('#include <stdio.h>\n__attribute__((constructor)) static void ran(void) {\n'
                      f'  FILE *f = fopen("{clone / "MARK_extension.txt"}", "w");\n'
                      '  if (f) { fputs("ran", f); fclose(f); }\n'
                      '}\nint entry(void *a, void *b, void *c) { return 0; }\n')
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(clone / "libmark.so"), str(source)], check=True, timeout=60)
    (clone / "mark.gdextension").write_text('[configuration]\nentry_symbol = "entry"\ncompatibility_minimum = "4.1"\n\n'
                                            '[libraries]\nlinux.x86_64 = "res://libmark.so"\n')
    with Bridge(godot_bin) as bridge:
        reply = bridge.run({"op": "resource_read", "project_path": str(clone), "resource_path": "textured.tres"})
    assert reply["result"] == "ok", reply
    assert sorted(p.name for p in clone.glob("MARK_*")) == []
    assert not (clone / ".godot" / "extension_list.cfg").exists()


@pytest.mark.timeout(300)
def test_two_processes_meeting_an_unimported_project_import_it_once(clone: Path, godot_bin: str) -> None:
    request = json.dumps({"op": "resource_read", "project_path": str(clone), "resource_path": "textured.tres"})
    runs = [subprocess.Popen([sys.executable, "-m", "gdres", "--godot", godot_bin, "run", request],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO) for _ in range(2)]
    outputs = [run.communicate(timeout=240) for run in runs]
    assert [json.loads(out)["result"] for out, _ in outputs] == ["ok", "ok"], outputs
    assert sum(err.decode().count(IMPORTING) for _, err in outputs) == 1


@pytest.mark.timeout(180)
def test_an_imported_asset_is_a_leaf_at_every_depth(clone: Path, godot_bin: str) -> None:
    with Bridge(godot_bin) as bridge:
        deep = bridge.run({"op": "resource_read", "project_path": str(clone), "resource_path": "textured.tres",
                           "depth": 5})
        flat = bridge.run({"op": "resource_read", "project_path": str(clone), "resource_path": "textured.tres",
                           "depth": 0})
    assert deep["properties"]["albedo_texture"] == {"type": "CompressedTexture2D", "path": "res://icons/red.png"}
    assert flat["properties"]["albedo_texture"] == "res://icons/red.png"


@pytest.mark.timeout(180)
def test_requests_on_another_worker_are_not_timed_out_by_an_import_longer_than_their_deadline(
    textured: Path, godot_bin: str, caplog: pytest.LogCaptureFixture
) -> None:
    # The import runs on the bridge's one thread. Requests the loop had just queued for the other
    # worker were handed to its engine only after the import, by then past their deadline: the
    # first of them got `timeout` and its engine was killed (in 3 of 8 runs of this batch).
    for i in range(40):
        (textured / "icons" / f"tile_{i}.png").write_bytes(png(64, 64))
    (textured / "m").mkdir()
    materials = [{"op": "material_create", "project_path": str(textured), "material_type": "StandardMaterial3D",
                  "resource_path": f"m/m{i}.tres"} for i in range(300)]
    with Bridge(godot_bin, jobs=2, timeout=1.0) as bridge:
        replies = list(bridge.batch([*materials[:150], style_box(textured), *materials[150:]]))
    (took,) = [float(m.rsplit(" in ", 1)[1].removesuffix(" s")) for m in (r.getMessage() for r in caplog.records)
               if m.startswith("gdres: imported the assets of")]
    assert took > 1.0  # longer than the requests' deadline
    assert [reply["error"] for reply in replies if reply["result"] != "ok"] == []


@pytest.mark.timeout(180)
@pytest.mark.parametrize("to", ["the terminal's group", "the bridge alone"])
@pytest.mark.usefixtures("ctrl_c")
def test_a_ctrl_c_during_an_import_ends_the_command_at_once_and_changes_nothing(
        textured: Path, godot_bin: str, to: str) -> None:
    # The import holds no hand-over of the pool's: a Ctrl-C there is raised at once
    # (serving/pool.py, Pool.interruptible()), not once the engine has imported every asset. A
    # terminal's Ctrl-C reaches the import's engine too; `kill -INT` of the bridge (an IDE's stop
    # button) reaches the bridge alone, which then ends the import itself.
    for i in range(800):
        (textured / "icons" / f"tile_{i}.png").write_bytes(png(16, 16))
    before = snapshot(textured)
    command = [sys.executable, "-m", "gdres", "--godot", godot_bin, "run", json.dumps(style_box(textured))]
    bridge = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO,
                              start_new_session=True)
    assert bridge.stderr is not None
    try:
        for line in bridge.stderr:
            if line.decode().startswith(IMPORTING):
                break
        # The import's engine starts after that line (once its shadow is built): wait for it, however
        # busy the machine is, rather than guess how long it takes.
        wait_for(lambda: any("--import" in cmdline(p) for p in psutil.Process(bridge.pid).children(recursive=True)),
                 60, "the import's engine starting")
        tree = psutil.Process(bridge.pid).children(recursive=True)
        if to == "the bridge alone":
            os.kill(bridge.pid, signal.SIGINT)
        else:
            os.killpg(bridge.pid, signal.SIGINT)
        interrupted = time.monotonic()
        assert bridge.wait(30) == 130
        took = time.monotonic() - interrupted
    finally:
        bridge.kill()
    assert took < 1.5, f"the command ended {took:.1f} s after the Ctrl-C"
    time.sleep(0.5)
    assert not [p for p in tree if running(p.pid)]
    assert snapshot(textured) == before, "the cut-short import changed the project"
    done = run_cli("run", json.dumps(style_box(textured)), godot=godot_bin, timeout=150)
    assert done.returncode == 0 and json.loads(done.stdout)["result"] == "ok", done.stderr[-1500:]


SCRIPTED_CLONE = {
    "stats.gd": "class_name Stats\nextends Resource\n@export var hp: int = 3\n@export var buddy: Buddy\n",
    "buddy.gd": 'class_name Buddy\nextends Resource\n@export var nick: String = ""\n',
    "hero.tres": '[gd_resource type="Resource" script_class="Stats" load_steps=2 format=3]\n\n'
                 '[ext_resource type="Script" path="res://stats.gd" id="1"]\n\n'
                 '[resource]\nscript = ExtResource("1")\nhp = 10\n',
}


ENGINE_VIEW = """extends SceneTree
func _initialize() -> void:
	var hero: Resource = load("res://hero.tres")
	var script: Script = hero.get_script()
	print("VIEW " + JSON.stringify({"script": script.resource_path if script else null, "hp": hero.get("hp")}))
	quit()
"""


@pytest.fixture
def scripted_clone(project: Path) -> Path:
    """A fresh clone whose resource carries a script that names another script's class."""
    for name, text in SCRIPTED_CLONE.items():
        (project / name).write_text(text)
    return project


def engine_view(godot_bin: str, clone: Path, tmp_path: Path) -> dict[str, object]:
    """The engine's own view of hero.tres in a copy of `clone` the editor has imported."""
    copy = tmp_path / "editor-imported"
    shutil.copytree(clone, copy)
    subprocess.run([godot_bin, "--headless", "--path", str(copy), "--import"], capture_output=True, timeout=120)
    (tmp_path / "view.gd").write_text(ENGINE_VIEW)
    done = subprocess.run([godot_bin, "--headless", "--path", str(copy), "-s", str(tmp_path / "view.gd")],
                          capture_output=True, text=True, timeout=120)
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("VIEW ")]
    view: dict[str, object] = json.loads(line.removeprefix("VIEW "))
    return view


@pytest.mark.timeout(240)
def test_a_scripted_resource_of_a_fresh_clone_reads_with_allow_scripts_as_the_engine_sees_it(
        scripted_clone: Path, godot_bin: str, tmp_path: Path) -> None:
    # Before: {"script": null, "properties": {}} and "ok": without the editor's class cache, stats.gd
    # did not compile (it names Buddy), and the resource loaded without its script.
    view = engine_view(godot_bin, scripted_clone, tmp_path)
    assert view == {"script": "res://stats.gd", "hp": 10}
    before = snapshot(scripted_clone)
    done = run_cli("run", json.dumps({"op": "resource_read", "project_path": str(scripted_clone),
                                      "resource_path": "hero.tres", "allow_scripts": True}), godot=godot_bin)
    reply = json.loads(done.stdout)
    assert reply["result"] == "ok", reply
    assert {"script": reply["script"], "hp": reply["properties"].get("hp")} == view
    assert "as the Godot editor does, its scripts allowed" in done.stderr
    after = snapshot(scripted_clone)
    assert {name: data for name, data in after.items() if not name.startswith(".godot/")} == before


def test_without_allow_scripts_a_scripted_resource_stays_refused_and_nothing_is_imported(
        scripted_clone: Path, godot_bin: str) -> None:
    before = snapshot(scripted_clone)
    done = run_cli("run", json.dumps({"op": "resource_read", "project_path": str(scripted_clone),
                                      "resource_path": "hero.tres"}), godot=godot_bin)
    assert json.loads(done.stdout)["error"]["code"] == "unsafe_resource"
    assert snapshot(scripted_clone) == before


SPY_PLUGIN = """@tool
extends EditorPlugin
static var _done: bool = _probe()
static func _probe() -> bool:
	var report: Dictionary = {
		"read_outside": FileAccess.open("{outside}/secret.txt", FileAccess.READ) != null,
		"write_outside": FileAccess.open("{outside}/written.txt", FileAccess.WRITE) != null,
		"connect_tcp": StreamPeerTCP.new().connect_to_host("127.0.0.1", {port}) == OK,
	}
	DirAccess.make_dir_recursive_absolute("res://.godot/imported")
	FileAccess.open("res://.godot/imported/spy.json", FileAccess.WRITE).store_string(JSON.stringify(report))
	return true
"""


@pytest.mark.skipif(not wall.status()[0], reason="no Landlock on this kernel: doctor says the wall is down")
@pytest.mark.timeout(240)
def test_the_import_with_scripts_runs_them_behind_the_wall(scripted_clone: Path, tmp_path: Path,
                                                           godot_bin: str) -> None:
    # The editor's import runs the project's plugins when a request allows scripts: they may read and
    # write only the project's copy (the spy's report comes back with the artefacts), and no TCP.
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    listener = socket.create_server(("127.0.0.1", 0))
    (scripted_clone / "addons" / "spy").mkdir(parents=True)
    (scripted_clone / "addons" / "spy" / "plugin.cfg").write_text(
        '[plugin]\n\nname="spy"\ndescription=""\nauthor=""\nversion="1"\nscript="spy.gd"\n')
    (scripted_clone / "addons" / "spy" / "spy.gd").write_text(
        SPY_PLUGIN.replace("{outside}", str(outside)).replace("{port}", str(listener.getsockname()[1])))
    (scripted_clone / "project.godot").write_text(
        (scripted_clone / "project.godot").read_text()
        + '\n[editor_plugins]\n\nenabled=PackedStringArray("res://addons/spy/plugin.cfg")\n')
    with listener:
        done = run_cli("run", json.dumps({"op": "resource_read", "project_path": str(scripted_clone),
                                          "resource_path": "hero.tres", "allow_scripts": True}), godot=godot_bin)
        assert json.loads(done.stdout)["result"] == "ok", done.stdout + done.stderr
        report = json.loads((scripted_clone / ".godot" / "imported" / "spy.json").read_text())
        assert report == {"read_outside": False, "write_outside": False, "connect_tcp": wall.abi() < 4}
        assert not (outside / "written.txt").exists()


@pytest.mark.timeout(180)
def test_an_import_during_a_batch_has_a_bar_of_its_own_and_stops_the_batch_clock(
        textured: Path, godot_bin: str) -> None:
    # Before: the import's log lines broke into the batch's bar, and that bar's rate and time left
    # counted the import ("3.45s/req", "03:20" left for a batch that ended in a second).
    lines = [json.dumps(style_box(textured, f"ui/p{i}.tres")) for i in range(40)]
    done = run_cli("batch", "--progress", "-j", "1", input="".join(line + "\n" for line in lines), godot=godot_bin)
    assert done.returncode == 0, done.stderr
    shown = [part.strip() for line in done.stderr.splitlines() for part in line.split("\r") if part.strip()]
    named = next(i for i, part in enumerate(shown) if part.startswith(IMPORTING))
    assert shown[named] == f"{IMPORTING} {textured} that the request needs (1, once): icons/red.png"
    assert any(part.startswith("import: 100%") and "1/1" in part for part in shown[named:])
    imported = next(i for i, part in enumerate(shown) if part.startswith("gdres: imported the assets of"))
    assert all(part.startswith(("batch:", "gdres: ")) for part in shown[imported:])
    last = [part for part in shown if part.startswith("batch:")][-1]
    assert "40req" in last
    elapsed = re.search(r"\[(\d\d):(\d\d)[<,]", last)
    assert elapsed is not None and int(elapsed[1]) * 60 + int(elapsed[2]) < 3, last  # the import took seconds


@pytest.mark.timeout(180)
@pytest.mark.parametrize("bar", [False, True])
def test_the_import_command_imports_every_asset_not_yet_imported_with_counts_that_agree(
        textured: Path, godot_bin: str, bar: bool) -> None:
    for i in range(2):
        (textured / "icons" / f"tile_{i}.png").write_bytes(png(8, 8))
    done = run_cli("import", str(textured), "--progress" if bar else "--no-progress", godot=godot_bin)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"op": "import", "project_path": str(textured), "imported": 3, "refused": {},
                                       "result": "ok"}
    assert f"{IMPORTING} {textured} (3, once): icons/" in done.stderr
    assert ("3/3" if bar else "gdres: importing: 3 of 3 assets") in done.stderr, done.stderr
    again = run_cli("import", str(textured), "--no-progress", godot=godot_bin)
    assert json.loads(again.stdout)["imported"] == 0  # each is current now: nothing to do
    with Bridge(godot_bin, auto_import=False) as bridge:
        assert bridge.run(style_box(textured))["result"] == "ok"


THIEF_PLUGIN = """@tool
extends EditorPlugin
static var _done: bool = _swap()
static func _swap() -> bool:
	DirAccess.make_dir_recursive_absolute("res://.godot/imported")
	DirAccess.rename_absolute(ProjectSettings.globalize_path("res://.godot/imported"),
		ProjectSettings.globalize_path("res://.godot/aside"))
	DirAccess.open("res://").create_link("{outside}", ProjectSettings.globalize_path("res://.godot/imported"))
	return true
"""


@pytest.mark.timeout(240)
def test_the_import_with_scripts_brings_back_nothing_through_a_link_its_code_made(
        scripted_clone: Path, tmp_path: Path, godot_bin: str) -> None:
    # The project's code runs in the copy the editor imports, and swapped the copy's .godot/imported
    # for a link to a folder it cannot read: the bridge, reading the artefacts back, copied that
    # folder's files into the project (a red-team read found it).
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "id_rsa").write_text("TOPSECRET")
    (scripted_clone / "addons" / "thief").mkdir(parents=True)
    (scripted_clone / "addons" / "thief" / "plugin.cfg").write_text(
        '[plugin]\n\nname="thief"\ndescription=""\nauthor=""\nversion="1"\nscript="thief.gd"\n')
    (scripted_clone / "addons" / "thief" / "thief.gd").write_text(THIEF_PLUGIN.replace("{outside}", str(outside)))
    (scripted_clone / "project.godot").write_text(
        (scripted_clone / "project.godot").read_text()
        + '\n[editor_plugins]\n\nenabled=PackedStringArray("res://addons/thief/plugin.cfg")\n')
    done = run_cli("run", json.dumps({"op": "resource_read", "project_path": str(scripted_clone),
                                      "resource_path": "hero.tres", "allow_scripts": True}), godot=godot_bin)
    assert "as the Godot editor does" in done.stderr, done.stderr
    assert not (scripted_clone / ".godot" / "imported" / "id_rsa").exists()
    assert [path.name for path in outside.iterdir()] == ["id_rsa"]
