"""A second attacker's pass: code the engine would run, and hostile input that must not harm.

Each test is one finding of that pass (issue 18): a value naming a native library, code that a
request with allow_scripts left running, quotes and line breaks in a save path, a file whose
expansion grows as 2^depth, an engine outliving its bridge, one scene named two ways in one batch,
command-line values and failures that ended in a traceback, and a handful of smaller ones.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

import hostile_corpus as corpus
from conftest import REPO, cmdline, run_cli, running, wait_for
from gdres import Bridge
from gdres.serving.pool import Pool
from gdres.serving.starter import Settings
from unit.test_attacks import new_project

LIBRARY = """#include <stdio.h>
__attribute__((constructor)) static void ran(void) {
    FILE *f = fopen(MARKER, "w");
    if (f) { fputs("ran", f); fclose(f); }
}
int entry(void *a, void *b, void *c) { return 0; }
"""


def marks(project: Path) -> list[str]:
    return sorted(p.name for p in project.glob(f"{corpus.MARK}*"))


def test_a_value_naming_a_native_library_does_not_load_it(tmp_path: Path, godot_bin: str) -> None:
    project = new_project(tmp_path)
    library = project / "libmark.so"
    source = tmp_path / "mark.c"
    source.write_text(LIBRARY.replace("MARKER", corpus.quoted(str(project / "MARK_library.txt"))))
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(library), str(source)], check=True, timeout=60)
    (project / "mark.gdextension").write_text(
        '[configuration]\nentry_symbol = "entry"\ncompatibility_minimum = "4.1"\n\n'
        '[libraries]\nlinux.x86_64 = "res://libmark.so"\n')
    with Bridge(godot_bin) as bridge:
        reply = bridge.run({"op": "material_create", "project_path": str(project),
                            "material_type": "StandardMaterial3D", "resource_path": "m.tres",
                            "properties": {"next_pass": "mark.gdextension"}})
    assert reply["error"]["code"] == "unsafe_resource", reply
    assert marks(project) == []


def hooked_project(tmp_path: Path) -> Path:
    """A project whose hooked.tres loads a script that marks a file, then starts a thread appending
    to it ten times a second."""
    project = new_project(tmp_path)
    # The first tick is written before the thread starts, so it is there before the reply is.
    hook = ("extends Resource\nstatic var _thread: Thread = _start()\nstatic func _start() -> Thread:\n"
            "\t_mark()\n\tvar thread := Thread.new()\n\tthread.start(_tick)\n\treturn thread\n"
            "static func _tick() -> void:\n\twhile true:\n\t\tOS.delay_msec(100)\n\t\t_mark()\n"
            "static func _mark() -> void:\n"
            f"\tvar f := FileAccess.open(\"res://{corpus.MARK}hook.txt\", FileAccess.READ_WRITE if "
            f"FileAccess.file_exists(\"res://{corpus.MARK}hook.txt\") else FileAccess.WRITE)\n"
            "\tf.seek_end()\n\tf.store_string(\"tick\\n\")\n\tf.close()\n")
    (project / "hook.gd").write_text(hook)
    (project / "hooked.tres").write_text('[gd_resource type="Resource" format=3]\n\n'
                                         '[ext_resource type="Script" path="res://hook.gd" id="1"]\n\n'
                                         '[resource]\nscript = ExtResource("1")\n')
    (project / "plain.tres").write_text('[gd_resource type="StandardMaterial3D" format=3]\n\n[resource]\n')
    return project


def test_code_an_allowed_request_loaded_does_not_run_on_through_later_requests(tmp_path: Path, godot_bin: str) -> None:
    project = hooked_project(tmp_path)
    marker = project / f"{corpus.MARK}hook.txt"
    with Bridge(godot_bin) as bridge:
        allowed = bridge.run({"op": "resource_read", "project_path": str(project), "resource_path": "hooked.tres",
                              "allow_scripts": True})
        assert allowed["result"] == "ok", allowed
        assert marker.exists(), "the hook never ran: the test proves nothing"
        time.sleep(0.5)
        ticks = marker.read_text().count("tick")
        for _ in range(5):
            assert bridge.run({"op": "resource_read", "project_path": str(project),
                               "resource_path": "plain.tres"})["result"] == "ok"
        time.sleep(0.5)
        assert marker.read_text().count("tick") == ticks, "the allowed request's code kept running"


def test_in_a_batch_too_an_allowed_request_has_an_engine_of_its_own(tmp_path: Path, godot_bin: str) -> None:
    project = hooked_project(tmp_path)
    marker = project / f"{corpus.MARK}hook.txt"
    plain: dict[str, Any] = {"op": "resource_read", "project_path": str(project), "resource_path": "plain.tres"}
    allowed = {**plain, "resource_path": "hooked.tres", "allow_scripts": True}
    with Pool(Settings(godot_bin), jobs=1) as pool:
        replies = pool.map(iter([plain, allowed, plain, plain]))
        assert [next(replies)["result"] for _ in range(2)] == ["ok", "ok"]
        assert marker.exists(), "the hook never ran: the test proves nothing"
        time.sleep(0.5)
        ticks = marker.read_text().count("tick")
        assert [reply["result"] for reply in replies] == ["ok", "ok"]
        time.sleep(0.5)
        assert marker.read_text().count("tick") == ticks, "the allowed request's code kept running"


@pytest.mark.parametrize("save_path", ['a"b.tres', "a\nb.tres", 'shapes/x"]\n[node name="Evil" parent="."]\n.tres'])
def test_a_save_path_cannot_break_into_the_scene_text(tmp_path: Path, godot_bin: str, save_path: str) -> None:
    project = new_project(tmp_path)
    scene = ('[gd_scene format=3]\n\n[node name="Root" type="Node3D"]\n\n'
             '[node name="Shape" type="CollisionShape3D" parent="."]\n')
    (project / "level.tscn").write_text(scene)
    with Bridge(godot_bin) as bridge:
        reply = bridge.run({"op": "shape_create", "project_path": str(project), "shape_type": "BoxShape3D",
                            "save_path": save_path, "scene_path": "level.tscn", "node_path": "Shape"})
        assert reply["error"]["code"] == "invalid_path", reply
        assert (project / "level.tscn").read_text() == scene
        read = bridge.run({"op": "resource_read", "project_path": str(project), "resource_path": "level.tscn"})
    assert read["result"] == "ok"


def test_an_exponential_file_is_expanded_once_per_resource(tmp_path: Path, godot_bin: str) -> None:
    project = new_project(tmp_path)
    lines = ['[gd_resource type="Resource" load_steps=42 format=3]', ""]
    lines += ['[sub_resource type="Resource" id="r40"]', 'resource_name = "leaf"', ""]
    for i in range(39, -1, -1):
        lines += [f'[sub_resource type="Resource" id="r{i}"]',
                  f'metadata/a = SubResource("r{i + 1}")', f'metadata/b = SubResource("r{i + 1}")', ""]
    lines += ["[resource]", 'metadata/root = SubResource("r0")', ""]
    (project / "twice.tres").write_text("\n".join(lines))
    with Bridge(godot_bin) as bridge:
        reply = bridge.run({"op": "resource_read", "project_path": str(project), "resource_path": "twice.tres",
                            "depth": 60})
    assert reply["result"] == "ok", reply
    text = json.dumps(reply)
    assert len(text) < 100_000, len(text)
    assert text.count('"leaf"') == 1
    assert '"res://twice.tres::r40"' in text  # the second mention of a resource names it instead


LONG_REQUEST = textwrap.dedent("""
    import json, sys
    from gdres import Bridge
    project = sys.argv[1]
    with Bridge(sys.argv[2], timeout=600) as bridge:
        bridge.run({"op": "resource_read", "project_path": project, "resource_path": "plain.tres"})
        print(json.dumps([w.pid for w in bridge.prewarm(project)]), flush=True)
        bridge.run({"op": "resource_read", "project_path": project, "resource_path": "slow.tres",
                    "allow_scripts": True})
""")


@pytest.mark.parametrize("engine", ["serving", "importing"])
def test_an_engine_dies_with_its_bridge(tmp_path: Path, godot_bin: str, engine: str) -> None:
    project = new_project(tmp_path)
    (project / "plain.tres").write_text('[gd_resource type="StandardMaterial3D" format=3]\n\n[resource]\n')
    (project / "slow.gd").write_text("extends Resource\nfunc _init() -> void:\n\tOS.delay_msec(60000)\n")
    (project / "slow.tres").write_text('[gd_resource type="Resource" format=3]\n\n'
                                       '[ext_resource type="Script" path="res://slow.gd" id="1"]\n\n'
                                       '[resource]\nscript = ExtResource("1")\n')
    if engine == "serving":
        # An editor has opened it: the allow_scripts request goes straight to an engine. Otherwise the
        # editor's import runs first (the project names a class), and the slow script holds it up: it
        # has no heartbeat to fail, and outlived a killed bridge before it was started to die with it.
        (project / ".godot").mkdir()
        (project / ".godot" / "global_script_class_cache.cfg").write_text("list=[]\n")
    else:
        (project / "slow.gd").write_text("class_name Slow\n" + (project / "slow.gd").read_text())
        (project / "addons" / "slow").mkdir(parents=True)
        (project / "addons" / "slow" / "plugin.cfg").write_text(
            '[plugin]\n\nname="slow"\ndescription=""\nauthor=""\nversion="1"\nscript="slow.gd"\n')
        (project / "addons" / "slow" / "slow.gd").write_text(
            "@tool\nextends EditorPlugin\nstatic var _x: int = _wait()\n"
            "static func _wait() -> int:\n\tOS.delay_msec(60000)\n\treturn 1\n")
        with (project / "project.godot").open("a") as settings:
            settings.write('\n[editor_plugins]\n\nenabled=PackedStringArray("res://addons/slow/plugin.cfg")\n')
    bridge = subprocess.Popen([sys.executable, "-c", LONG_REQUEST, str(project), godot_bin],
                              stdout=subprocess.PIPE, cwd=REPO)
    assert bridge.stdout is not None
    json.loads(bridge.stdout.readline())
    # The slow request is in an engine, or the import's: wait for that state, not a guessed time.
    wanted = "--import" if engine == "importing" else "main.gd"
    wait_for(lambda: any(wanted in " ".join(cmdline(p)) for p in psutil.Process(bridge.pid).children(recursive=True)),
             60, f"an engine ({wanted}) serving the slow request")
    time.sleep(0.5)  # well inside its work (a minute long), not at its start
    engines = psutil.Process(bridge.pid).children(recursive=True)
    assert any("--import" in cmdline(process) for process in engines) == (engine == "importing")
    bridge.send_signal(signal.SIGKILL)
    bridge.wait()
    time.sleep(2.0)
    alive = [engine.pid for engine in engines if running(engine.pid)]
    assert alive == [], f"engines {alive} outlived their bridge"


def test_one_scene_named_two_ways_in_one_batch_neither_deadlocks_nor_loses_an_edit(
    tmp_path: Path, godot_bin: str
) -> None:
    project = new_project(tmp_path)
    nodes = "".join(f'[node name="S{i}" type="CollisionShape3D" parent="."]\n\n' for i in range(40))
    (project / "level.tscn").write_text('[gd_scene format=3]\n\n[node name="Root" type="Node3D"]\n\n' + nodes)
    (project / "alias.tscn").symlink_to("level.tscn")
    lines = [json.dumps({"op": "shape_create", "project_path": str(project), "shape_type": "SphereShape3D",
                         "shape_params": {"radius": 1 + i}, "scene_path": "level.tscn" if i % 2 else "alias.tscn",
                         "node_path": f"S{i}"}) for i in range(40)]
    done = run_cli("--godot", godot_bin, "batch", "--jobs", "2", input="\n".join(lines) + "\n", timeout=120)
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["result"] for r in replies] == ["ok"] * 40, replies[:3]
    text = (project / "level.tscn").read_text()
    assert text.count("shape = SubResource(") == 40
    assert (project / "alias.tscn").is_symlink()


def test_a_write_through_a_file_link_writes_the_file_it_leads_to(tmp_path: Path, godot_bin: str) -> None:
    project = new_project(tmp_path)
    (project / "real.tres").write_text('[gd_resource type="StandardMaterial3D" format=3 uid="uid://bonlyone0001"]\n\n'
                                       '[resource]\nroughness = 0.5\n')
    (project / "link.tres").symlink_to("real.tres")
    with Bridge(godot_bin) as bridge:
        reply = bridge.run({"op": "material_create", "project_path": str(project),
                            "material_type": "StandardMaterial3D", "resource_path": "link.tres",
                            "properties": {"roughness": 0.25}})
    assert reply["result"] == "ok", reply
    assert (project / "link.tres").is_symlink()
    text = (project / "real.tres").read_text()
    assert "roughness = 0.25" in text and 'uid="uid://bonlyone0001"' in text
    files = [p.name for p in project.iterdir() if p.is_file() and not p.is_symlink() and p.suffix == ".tres"]
    assert files == ["real.tres"]


@pytest.mark.parametrize(("timeout", "status"), [("nan", 2), ("inf", 2), ("-1", 2), ("3000000", 0)])
def test_any_timeout_is_a_reply_or_a_usage_error(tmp_path: Path, godot_bin: str, timeout: str, status: int) -> None:
    project = new_project(tmp_path)
    (project / "plain.tres").write_text('[gd_resource type="StandardMaterial3D" format=3]\n\n[resource]\n')
    request = json.dumps({"op": "resource_read", "project_path": str(project), "resource_path": "plain.tres"})
    done = run_cli("--godot", godot_bin, "--timeout", timeout, "run", request)
    assert "Traceback" not in done.stderr
    assert done.returncode == status, done.stderr
    if status == 2:
        assert done.stdout == "" and "--timeout" in done.stderr


def test_an_unwritable_lock_folder_is_an_error_reply(tmp_path: Path, godot_bin: str) -> None:
    project = new_project(tmp_path)
    (project / "level.tscn").write_text('[gd_scene format=3]\n\n[node name="Root" type="Node3D"]\n\n'
                                        '[node name="Shape" type="CollisionShape3D" parent="."]\n')
    cache = tmp_path / "cache"
    (cache / "gdres" / "locks").mkdir(parents=True)
    request = json.dumps({"op": "shape_create", "project_path": str(project), "shape_type": "BoxShape3D",
                          "scene_path": "level.tscn", "node_path": "Shape"})
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "GODOT_BIN": godot_bin}
    subprocess.run([sys.executable, "-m", "gdres", "schema"], env=env, cwd=REPO, capture_output=True, check=True)
    (cache / "gdres" / "locks").chmod(0o500)
    try:
        done = subprocess.run([sys.executable, "-m", "gdres", "run", request], env=env, cwd=REPO,
                              capture_output=True, text=True, timeout=120)
    finally:
        (cache / "gdres" / "locks").chmod(0o700)
    assert "Traceback" not in done.stderr, done.stderr
    if os.geteuid() == 0:
        # root writes through a read-only folder: the edit is made, which is all this can show here.
        assert json.loads(done.stdout)["result"] == "ok"
    else:
        assert json.loads(done.stdout)["error"]["code"] == "save_failed"


def test_a_failed_save_removes_every_folder_it_made(tmp_path: Path, godot_bin: str) -> None:
    project = new_project(tmp_path)
    deep = "/".join(f"level{i}" for i in range(16)) + "/x.tres"
    with Bridge(godot_bin) as bridge:
        reply = bridge.run({"op": "material_create", "project_path": str(project),
                            "material_type": "StandardMaterial3D", "resource_path": deep,
                            "properties": {"shading_mode": "SHADING_MODE_PER_VERTEX", "normal_enabled": True}})
    assert reply["error"]["code"] == "invalid_value", reply
    assert sorted(p.name for p in project.iterdir()) == ["project.godot"]


def test_a_read_only_target_is_left_as_it_is(tmp_path: Path, godot_bin: str) -> None:
    project = new_project(tmp_path)
    target = project / "locked.tres"
    target.write_text('[gd_resource type="StandardMaterial3D" format=3]\n\n[resource]\nroughness = 0.5\n')
    target.chmod(0o444)
    before = target.read_bytes()
    with Bridge(godot_bin) as bridge:
        reply = bridge.run({"op": "material_create", "project_path": str(project),
                            "material_type": "StandardMaterial3D", "resource_path": "locked.tres"})
        kept = bridge.run({"op": "material_create", "project_path": str(project), "material_type": "StandardMaterial3D",
                           "resource_path": "group.tres"})
    assert reply["error"]["code"] == "save_failed" and "read-only" in reply["error"]["message"], reply
    assert target.read_bytes() == before and stat.S_IMODE(target.stat().st_mode) == 0o444
    assert kept["result"] == "ok"


def test_a_file_mode_is_kept_when_the_file_is_replaced(tmp_path: Path, godot_bin: str) -> None:
    project = new_project(tmp_path)
    target = project / "shared.tres"
    target.write_text('[gd_resource type="StandardMaterial3D" format=3]\n\n[resource]\n')
    target.chmod(0o664)
    with Bridge(godot_bin) as bridge:
        assert bridge.run({"op": "material_create", "project_path": str(project), "material_type": "StandardMaterial3D",
                           "resource_path": "shared.tres", "properties": {"roughness": 0.5}})["result"] == "ok"
    assert stat.S_IMODE(target.stat().st_mode) == 0o664


def test_a_shader_that_mentions_gdscript_is_no_script(tmp_path: Path, godot_bin: str) -> None:
    project = new_project(tmp_path)
    (project / "glow.gdshader").write_text("// Not GDScript, nor a Script: a shader.\nshader_type spatial;\n"
                                           "uniform float amount = 0.5;\n")
    with Bridge(godot_bin) as bridge:
        reply = bridge.run({"op": "material_create", "project_path": str(project), "material_type": "ShaderMaterial",
                            "resource_path": "glow.tres", "shader_path": "glow.gdshader",
                            "properties": {"shader_parameter/amount": 0.25}})
    assert reply["result"] == "ok", reply


@pytest.mark.parametrize(("member", "code"), [("properties", "invalid_value"), ("depth", "invalid_request")])
def test_an_integer_of_5000_digits_is_refused_by_the_member_it_is_in(tmp_path: Path, godot_bin: str,
                                                                    member: str, code: str) -> None:
    project = new_project(tmp_path)
    huge = "9" * 5000
    if member == "properties":
        text = ('{"op": "material_create", "project_path": ' + json.dumps(str(project)) + ', "material_type": '
                '"StandardMaterial3D", "resource_path": "m.tres", "properties": {"render_priority": ' + huge + '}}')
    else:
        text = ('{"op": "resource_read", "project_path": ' + json.dumps(str(project)) + ', "resource_path": "m.tres", '
                '"depth": ' + huge + '}')
    done = run_cli("--godot", godot_bin, "run", text)
    assert "Traceback" not in done.stderr
    assert json.loads(done.stdout)["error"]["code"] == code
