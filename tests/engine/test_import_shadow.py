"""The import runs on a shadow built from checked values: no project code runs, nothing outside is opened.

Each case plants, in a copy of the fixture project laid out as git keeps it, a way the editor's import
would run the project's code (a script that writes a marker file at an absolute path when its static
initialiser runs) or open a file outside the project, then asks for an ordinary request or
`gdres import`. Before the shadow was built by construction, each of these ran the marker
script or opened the bait (issue 42). The wall is taken down for the marker cases, so that the
construction alone is what keeps the code from running; the wall's own case runs with it up.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, run_cli
from engine.test_imports import png
from opened import opened, traced_godot

pytestmark = [pytest.mark.engine, pytest.mark.timeout(240)]

GLTF = json.dumps({"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}], "nodes": [{"name": "n"}]})


def marker_script(marker: Path) -> str:
    return (f'@tool\nextends Resource\nstatic var _x: int = _m()\nstatic func _m() -> int:\n'
            f'\tvar f := FileAccess.open("{marker}", FileAccess.WRITE)\n\tf.store_string("ran")\n\treturn 1\n')


def scripted_resource(marker: Path, kind: str = "Theme") -> str:
    source = json.dumps(marker_script(marker).replace("extends Resource", f"extends {kind}"))
    return (f'[gd_resource type="{kind}" load_steps=2 format=3]\n\n[sub_resource type="GDScript" id="1"]\n'
            f'script/source = {source}\n\n[resource]\nscript = SubResource("1")\n')


RED_CTEX = f"res://.godot/imported/red.png-{hashlib.md5(b'res://icons/red.png').hexdigest()}.ctex"


def texture_import(params: str = "", extra: str = "") -> str:
    """A texture's .import as the editor writes it, with `params` added and `extra` after it."""
    return (f'[remap]\n\nimporter="texture"\ntype="CompressedTexture2D"\nuid="uid://b1red"\npath="{RED_CTEX}"\n\n'
            f'[deps]\n\nsource_file="res://icons/red.png"\ndest_files=["{RED_CTEX}"]\n\n'
            f'[params]\n\ncompress/mode=0\n{params}\n{extra}')


def scene_import(params: str = "", extra: str = "") -> str:
    return (f'[remap]\n\nimporter="scene"\ntype="PackedScene"\n\n[deps]\n\nsource_file="res://model.gltf"\n\n'
            f'[params]\n\n{params}\n{extra}')


@pytest.fixture
def hostile(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """The project with an unimported texture and glTF scene, a marker path outside it, and the
    scripts and resources a case points at. The wall is down: the construction stands alone."""
    monkeypatch.setenv("GDRES_WALL", "off")
    marker = tmp_path / "MARKER"
    (project / "icons").mkdir()
    (project / "icons" / "red.png").write_bytes(png())
    (project / "icons" / "red.png.import").write_text(texture_import())
    (project / "model.gltf").write_text(GLTF)
    (project / "model.gltf.import").write_text(scene_import())
    (project / "post.gd").write_text(marker_script(marker).replace("extends Resource", "extends EditorScenePostImport"))
    (project / "evil.tres").write_text(scripted_resource(marker))
    (project / "evil_material.tres").write_text(scripted_resource(marker, "StandardMaterial3D"))
    (project.parent / "outside").mkdir()
    (project.parent / "outside" / "bait.bin").write_bytes(b"SECRET!!")
    return {"project": project, "marker": marker, "bait": project.parent / "outside" / "bait.bin"}


def import_all(project: Path, godot_bin: str, log: Path | None = None) -> dict[str, Any]:
    """`gdres import PROJECT`'s reply; with `log`, run under `strace -f` from outside the wall
    (every process of the command traced: the bridge, the shadow's builder and the editor)."""
    if log is None:
        done = run_cli("import", str(project), "--no-progress", godot=godot_bin, timeout=200)
    else:
        strace = shutil.which("strace")
        assert strace, "the import's tests need strace (scripts/setup.sh installs it)"
        ran = subprocess.run([strace, "-f", "-qq", "-e", "trace=open,openat,openat2,creat", "-s", "4096",
                              "-o", str(log), sys.executable, "-m", "gdres", "--godot", godot_bin, "import",
                              str(project), "--no-progress"], capture_output=True, text=True, timeout=200, cwd=REPO)
        done = subprocess.CompletedProcess(ran.args, ran.returncode, ran.stdout, ran.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    reply: dict[str, Any] = json.loads(done.stdout)
    return reply


def material_with_texture(project: Path) -> dict[str, Any]:
    return {"op": "material_create", "project_path": str(project), "material_type": "StandardMaterial3D",
            "resource_path": "m.tres", "properties": {"albedo_texture": "res://icons/red.png"}}


# (name, file -> text): each is planted, then the whole project imported.
PLANTED: list[tuple[str, dict[str, str], str | None]] = [
    ("a project setting the editor loads at start names a scripted resource",
     {"project.godot": 'config_version=5\n\n[gui]\n\ntheme/custom="res://evil.tres"\n'}, None),
    ("every setting the editor loads at start names a scripted resource",
     {"project.godot": 'config_version=5\n\n[gui]\n\ntheme/custom="res://evil.tres"\ntheme/custom_font="res://evil.tres"'
                       '\n\n[audio]\n\nbuses/default_bus_layout="res://evil.tres"\n\n[rendering]\n\n'
                       'environment/defaults/default_environment="res://evil.tres"\n'}, None),
    ("a committed .godot/imported/ holds the scripted resource a setting names",
     {".godot/imported/evil.tres": "@evil.tres",
      "project.godot": 'config_version=5\n\n[gui]\n\ntheme/custom="res://.godot/imported/evil.tres"\n'}, None),
    ("a committed .godot/ holds a script class cache and an extension list",
     {".godot/global_script_class_cache.cfg": 'list=[{"base": &"Resource", "class": &"Evil", "icon": "", '
                                              '"language": &"GDScript", "path": "res://evil.gd"}]\n',
      ".godot/extension_list.cfg": "res://evil.gdextension\n"}, None),
    ("importer_defaults in project.godot name an import script",
     {"project.godot": 'config_version=5\n\n[importer_defaults]\n\nscene={\n"import_script/path": "res://post.gd"\n}\n'},
     None),
    ("import_script/path names a script",
     {"model.gltf.import": scene_import('import_script/path="res://post.gd"')}, "a script the importer would run"),
    ("import_script/path is written as a NodePath",
     {"model.gltf.import": scene_import('import_script/path=NodePath("res://post.gd")')}, "is a NodePath"),
    ("a second [params] section names the import script",
     {"model.gltf.import": scene_import("", '[params]\n\nimport_script/path="res://post.gd"\n')},
     "a script the importer would run"),
    ("a value is written as Resource()",
     {"icons/red.png.import": texture_import('roughness/src_normal=Resource("res://evil.tres")')},
     "makes the engine load or create an object"),
    ("a value nested in a dictionary is written as Resource()",
     {"model.gltf.import": scene_import('_subresources={"a": [Resource("res://evil.tres")]}')},
     "makes the engine load or create an object"),
    ("_subresources names an external material",
     {"model.gltf.import": scene_import('_subresources={"materials": {"m": {"use_external/enabled": true, '
                                        '"use_external/path": "res://evil_material.tres"}}}')},
     "a file the importer would open"),
    ("a glTF image names a scripted resource whose .import names no importer",
     {"model.gltf": json.dumps({**json.loads(GLTF), "images": [{"uri": "evil.tres"}]}),
      "evil.tres.import": "[remap]\n"},
     "it is a resource file, which the engine loads as it is"),
    ("a glTF image's .import names no importer",
     {"model.gltf": json.dumps({**json.loads(GLTF), "images": [{"uri": "icons/red.png"}]}),
      "icons/red.png.import": "[remap]\n"},
     "its .import file names no importer"),
    ("a glTF image names a scripted resource with no .import",
     {"model.gltf": json.dumps({**json.loads(GLTF), "images": [{"uri": "evil.tres"}]})},
     "names res://evil.tres, which is neither an asset nor a raw file"),
    ("_subresources names an external material by a relative path",
     {"model.gltf.import": scene_import('_subresources={"materials": {"m": {"use_external/enabled": true, '
                                        '"use_external/path": "evil_material.tres"}}}')},
     "a file the importer would open"),
    ("a glTF buffer leads out of the project",
     {"model.gltf": json.dumps({**json.loads(GLTF), "buffers": [{"uri": "../outside/bait.bin", "byteLength": 4}]})},
     "outside the project"),
    ("a glTF image is an absolute path",
     {"model.gltf": json.dumps({**json.loads(GLTF), "images": [{"uri": "/etc/hostname"}]})},
     "outside the project"),
    ("the root script is set",
     {"model.gltf.import": scene_import('nodes/root_script=Resource("res://post.gd")')},
     "makes the engine load or create an object"),
]


@pytest.mark.parametrize(("files", "refusal"), [case[1:] for case in PLANTED], ids=[case[0] for case in PLANTED])
def test_nothing_the_project_plants_runs_during_its_import(
        hostile: dict[str, Path], godot_bin: str, files: dict[str, str], refusal: str | None) -> None:
    project = hostile["project"]
    for name, text in files.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text((project / text[1:]).read_text() if text.startswith("@") else text)
    log = project.parent / "strace.log"
    reply = import_all(project, godot_bin, log)
    assert not hostile["marker"].exists(), "the project's code ran during the import"
    assert [path for path in opened(log) if path.endswith(("bait.bin", "/etc/hostname"))] == []
    if refusal is None:
        assert reply["result"] == "ok", reply
    else:
        assert reply["error"]["code"] == "not_imported", reply
        assert refusal in reply["error"]["message"], reply
        assert ("res://model.gltf" if "gltf" in next(iter(files)) else "res://icons/red.png") in reply["refused"]


def test_a_request_needing_a_texture_runs_none_of_what_the_project_plants(
        hostile: dict[str, Path], godot_bin: str) -> None:
    project = hostile["project"]
    (project / "project.godot").write_text('config_version=5\n\n[gui]\n\ntheme/custom="res://evil.tres"\n')
    (project / "icons" / "red.png.import").write_text(
        texture_import("", '[params]\n\n_subresources={}\nroughness/src_normal=""\n'))
    done = run_cli("run", json.dumps(material_with_texture(project)), godot=godot_bin)
    assert json.loads(done.stdout)["result"] == "ok", done.stdout + done.stderr
    assert not hostile["marker"].exists()


def test_a_godot_folder_that_links_out_of_the_project_is_refused_and_nothing_is_written_through_it(
        project: Path, tmp_path: Path, godot_bin: str) -> None:
    (project / "icons").mkdir()
    (project / "icons" / "red.png").write_bytes(png())
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project / ".godot").symlink_to(elsewhere)
    done = run_cli("run", json.dumps(material_with_texture(project)), godot=godot_bin)
    reply = json.loads(done.stdout)
    assert reply["error"]["code"] == "not_imported", reply
    assert "is a symbolic link" in reply["error"]["message"]
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("exists", [True, False])
def test_the_serving_engine_opens_no_artefact_a_dot_import_lists_outside_the_project(
        project: Path, tmp_path: Path, godot_bin: str, exists: bool) -> None:
    bait = tmp_path / "outside" / "bait.ctex"
    bait.parent.mkdir()
    if exists:
        bait.write_bytes(b"x")
    (project / "icons").mkdir()
    (project / "icons" / "red.png").write_bytes(png())
    (project / "icons" / "red.png.import").write_text(texture_import().replace(f'dest_files=["{RED_CTEX}"]',
                                                                             f'dest_files=["{bait}"]'))
    record = project / ".godot" / "imported" / RED_CTEX.removeprefix("res://.godot/imported/").replace(".ctex", ".md5")
    record.parent.mkdir(parents=True)
    record.write_text('source_md5="0"\ndest_md5="0"\n')
    godot, log = traced_godot(godot_bin, tmp_path / "trace", project / ".godot" / "opened.log")
    done = run_cli("--no-import", "run", json.dumps(material_with_texture(project)), godot=godot)
    reply = json.loads(done.stdout)
    assert reply["error"]["code"] == "not_imported", reply
    assert "lists an import artefact outside the project" in reply["error"]["message"]
    assert str(bait) not in reply["error"]["message"]
    paths = opened(log)
    assert paths, "strace recorded nothing"
    assert [path for path in paths if os.path.realpath(path).startswith(str(bait.parent))] == []


def test_the_bridge_writes_no_artefact_through_a_link_the_project_planted_at_its_temp_names(
        project: Path, tmp_path: Path, godot_bin: str) -> None:
    # The artefacts were written to `.<name>.bridge-<pid>.tmp` (a name a project can plant as a link
    # for every pid) with a call that follows links: the bridge wrote outside the project.
    from gdres.engine import godot as engines
    from gdres.serving import imports

    (project / "icons").mkdir()
    (project / "icons" / "red.png").write_bytes(png())
    (project / "icons" / "red.png.import").write_text(texture_import())
    victim = tmp_path / "victim"
    victim.write_text("kept")
    imported = project / ".godot" / "imported"
    imported.mkdir(parents=True)
    stem = RED_CTEX.removeprefix("res://.godot/imported/").removesuffix(".ctex")
    for name in (f"{stem}.ctex", f"{stem}.md5"):
        (imported / f".{name}.bridge-{os.getpid()}.tmp").symlink_to(victim)
    engine = engines.probe(godot_bin)
    outcome = imports.import_project(engine, project.resolve(), engines.settings_pack(engine), 200,
                                     imports.stamp(project.resolve()), lambda assets: None, lambda done, total: None,
                                     ("res://icons/red.png",))
    assert outcome.imported == ["res://icons/red.png"], outcome
    assert victim.read_text() == "kept"
    assert (imported / f"{stem}.ctex").is_file() and not (imported / f"{stem}.ctex").is_symlink()


def test_a_translation_table_brings_back_only_its_own_files(project: Path, godot_bin: str) -> None:
    # A locale of "../x" made the importer write x.translation beside the folder, brought back.
    (project / "text").mkdir()
    (project / "text" / "lines.csv").write_text("keys,en,../x\nHELLO,Hello,Hallo\n")
    reply = import_all(project, godot_bin)
    assert reply["result"] == "ok", reply
    assert sorted(path.name for path in project.rglob("*.translation")) == ["lines.en.translation"]


def test_an_asset_still_not_current_after_its_import_is_not_imported_again(
        project: Path, godot_bin: str) -> None:
    # A .import without dest_files (an older editor's) stays stale after the import: each retry of
    # the request imported it again, three times (~10 s each).
    (project / "icons").mkdir()
    (project / "icons" / "red.png").write_bytes(png())
    (project / "icons" / "red.png.import").write_text(texture_import().replace(f'dest_files=["{RED_CTEX}"]', ""))
    (project / "icons" / "blue.png").write_bytes(png(2, 2))
    (project / "two.tres").write_text(
        '[gd_resource type="StandardMaterial3D" load_steps=3 format=3]\n\n'
        '[ext_resource type="Texture2D" path="res://icons/red.png" id="1"]\n'
        '[ext_resource type="Texture2D" path="res://icons/blue.png" id="2"]\n\n'
        '[resource]\nalbedo_texture = ExtResource("1")\nnormal_texture = ExtResource("2")\n')
    request = {"op": "resource_read", "project_path": str(project), "resource_path": "two.tres"}
    done = run_cli("run", json.dumps(request), godot=godot_bin)
    reply = json.loads(done.stdout)
    assert reply["error"]["code"] == "not_imported", reply
    assert "res://icons/red.png" in reply["error"]["message"]
    # Before: both imported, then red.png alone again (the engine named another set of assets).
    assert done.stderr.count("gdres: importing the assets of") == 1, done.stderr


def test_the_import_gets_none_of_the_users_environment_but_what_a_process_needs(tmp_path: Path) -> None:
    from gdres.serving import imports

    os.environ["GDRES_TEST_SECRET"] = "hunter2"
    try:
        env = imports._private_environment(tmp_path)
    finally:
        del os.environ["GDRES_TEST_SECRET"]
    assert "GDRES_TEST_SECRET" not in env
    assert env["HOME"] == str(tmp_path)
    assert set(env) <= {"PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "SYSTEMROOT", "WINDIR", "TEMP", "TMP", "TMPDIR",
                        "HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "APPDATA", "LOCALAPPDATA"}


# ----- the corpus: every loader extension holding a script, named every way, one import watched ----

SETTINGS_LOADED_AT_START = [
    ("gui", "theme/custom"), ("gui", "theme/custom_font"), ("audio", "buses/default_bus_layout"),
    ("rendering", "environment/defaults/default_environment"), ("application", "boot_splash/image"),
    ("application", "config/icon"), ("application", "run/main_scene"), ("display", "mouse_cursor/custom_image"),
    ("xr", "openxr/default_action_map"), ("physics", "3d/default_physics_material"),
]
"""Project settings whose value the editor (or the engine at start) loads as a resource."""
NOT_BINARY = {"ogv", "gdshaderinc", "gdshader", "tscn", "tres", "po", "mo", "image", "crt", "key", "pub", "json",
              "gdextension", "gd", "gdc", "ctex", "ctexarray", "ccube", "ccubearray", "ctex3d", "dds", "ktx", "ktx2"}
"""Loader extensions that are not the binary resource format's (asked of the engine: the rest are)."""
IMPORT_FORMS: list[tuple[str, str]] = [
    ("import_script/path", 'import_script/path="{path}"'),
    ("import_script/path as a NodePath", 'import_script/path=NodePath("{path}")'),
    ("a repeated [params] section", '\n[params]\n\nimport_script/path="{path}"'),
    ("_subresources use_external/path", ('_subresources={{"materials": {{"m": {{"use_external/enabled": true, '
                                         '"use_external/path": "{path}"}}}}}}')),
    ("Resource() nested in a dictionary and an array", '_subresources={{"x": [{{"y": Resource("{path}")}}]}}'),
    ("nodes/root_script", 'nodes/root_script=Resource("{path}")'),
]
MAKE_SCRIPTED = """extends SceneTree
func _initialize() -> void:
	print("EXT " + ",".join(ResourceLoader.get_recognized_extensions_for_type("")))
	var script := GDScript.new()
	script.source_code = {source}
	script.reload()
	var scripted := Resource.new()
	scripted.set_script(script)
	ResourceSaver.save(scripted, "res://evil.res")
	ResourceSaver.save(scripted, "res://evil.tres")
	quit()
"""


def test_the_corpus_runs_nothing_and_opens_none_of_the_files_it_names(
        project: Path, tmp_path: Path, godot_bin: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GDRES_WALL", "off")  # the construction alone
    marker = tmp_path / "MARKER"
    made = tmp_path / "made"
    made.mkdir()
    (made / "project.godot").write_text("config_version=5\n")
    (made / "make.gd").write_text(MAKE_SCRIPTED.format(source=json.dumps(marker_script(marker))))
    done = subprocess.run([godot_bin, "--headless", "--path", str(made), "-s", "make.gd"], capture_output=True,
                          text=True, timeout=120, cwd=made)
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("EXT ")]
    binary = sorted(set(line.removeprefix("EXT ").split(",")) - NOT_BINARY)
    marker.unlink()  # the maker compiled the script: it ran there, as it should
    outside = tmp_path / "outside"
    outside.mkdir()
    evil: list[str] = []
    for extension in [*binary, "tres", "tscn"]:
        source = made / ("evil.tres" if extension in ("tres", "tscn") else "evil.res")
        data = source.read_bytes()
        if extension == "tscn":
            data = scripted_scene(marker).encode()
        for folder, prefix in ((project, "res://"), (outside, f"{outside}/")):
            (folder / f"evil_{extension}.{extension}").write_bytes(data)
            evil.append(f"{prefix}evil_{extension}.{extension}")
    (project / "icons").mkdir()
    (project / "icons" / "red.png").write_bytes(png())  # one asset to import: the editor does run
    cases = 0
    for i, path in enumerate(evil):
        for j, (_name, form) in enumerate(IMPORT_FORMS):
            (project / f"m{i}_{j}.gltf").write_text(GLTF)
            (project / f"m{i}_{j}.gltf.import").write_text(scene_import(form.format(path=path)))
            cases += 1
        if path.startswith("res://"):
            (project / f"i{i}.gltf").write_text(json.dumps({**json.loads(GLTF), "images": [{"uri": path[6:]}]}))
            cases += 1
    sections: dict[str, list[str]] = {}
    for k, (section, key) in enumerate(SETTINGS_LOADED_AT_START):
        sections.setdefault(section, []).append(f'{key}="{evil[k % len(evil)]}"')
        cases += 1
    (project / "project.godot").write_text("config_version=5\n" + "".join(
        f"\n[{section}]\n\n" + "\n".join(lines) + "\n" for section, lines in sections.items()))
    godot_folder = {
        ".godot/imported/evil.res": (made / "evil.res").read_bytes(),
        ".godot/global_script_class_cache.cfg": b'list=[{"base": &"Resource", "class": &"Evil", "icon": "", '
                                                b'"language": &"GDScript", "path": "res://evil_res.res"}]\n',
        ".godot/extension_list.cfg": b"res://evil.gdextension\n",
        ".godot/editor/project_metadata.cfg": b'[editor_metadata]\n\nexecutable_path="/bin/sh"\n',
        ".godot/editor/filesystem_cache10": b"res://evil_res.res\n",
    }
    for name, data in godot_folder.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_bytes(data)
        cases += 1
    log = tmp_path / "strace.log"
    reply = import_all(project, godot_bin, log)
    print(f"{cases} ways of naming {len(evil)} scripted files of {len(binary) + 2} extensions")
    assert not marker.exists(), "the project's code ran during the import"
    assert reply["imported"] == 1 and len(reply["refused"]) == cases - len(SETTINGS_LOADED_AT_START) - len(
        godot_folder), reply["refused"]
    paths = opened(log)
    assert any(path.endswith("red.png") for path in paths), "strace recorded nothing of the import"
    names = {Path(path).name for path in evil}
    assert [path for path in paths if Path(path).name in names or path.startswith(str(outside))] == []
    planted = {str(project / name) for name in godot_folder}
    assert [path for path in paths if path in planted] == []


def scripted_scene(marker: Path) -> str:
    source = json.dumps(marker_script(marker).replace("extends Resource", "extends Node"))
    return (f'[gd_scene load_steps=2 format=3]\n\n[sub_resource type="GDScript" id="1"]\nscript/source = {source}\n\n'
            '[node name="Root" type="Node"]\nscript = SubResource("1")\n')


def test_a_path_that_climbs_out_of_the_project_and_back_in_is_refused(hostile: dict[str, Path], godot_bin: str) -> None:
    # Checked against the real project, "../" x depth + the project's own path came back inside it;
    # copied into the shadow, the same text led out of the shadow: the builder wrote outside it, and
    # an image named so was loaded through the project's .remap by the import's editor.
    project = hostile["project"]
    back_in = "../" * len(project.resolve().parts[1:]) + "/".join(project.resolve().parts[1:])
    (project / "pos.bin").write_bytes(b"\0" * 12)
    (project / "model.gltf").write_text(json.dumps(
        {**json.loads(GLTF), "buffers": [{"uri": f"{back_in}/pos.bin", "byteLength": 12}]}))
    (project / "icons" / "red.png.import").write_text(texture_import(f'roughness/src_normal="res://{back_in}/icons/red.png"'))
    reply = import_all(project, godot_bin)
    assert "outside the project" in reply["refused"]["res://model.gltf"], reply
    assert "outside the project" in reply["refused"]["res://icons/red.png"], reply


@pytest.mark.parametrize("name", ["override.cfg", "project.binary", "icons/red.png.remap", ".hidden/blue.png"])
def test_only_files_an_importer_reads_go_into_the_shadow(hostile: dict[str, Path], godot_bin: str, name: str) -> None:
    # override.cfg with a .import naming the texture importer went into the shadow's root as it was,
    # where the engine reads it as settings over the shadow's project.godot.
    project = hostile["project"]
    (project / name).parent.mkdir(parents=True, exist_ok=True)
    (project / name).write_bytes(png() if name.endswith(".png") else b'[gui]\n\ntheme/custom="res://evil.tres"\n')
    (project / f"{name}.import").write_text(texture_import().replace("res://icons/red.png", f"res://{name}"))
    reply = import_all(project, godot_bin)
    assert not hostile["marker"].exists()
    if name.startswith("."):
        assert f"res://{name}" not in reply["refused"], reply  # the editor never meets it: nor does the bridge
    else:
        assert "the editor's importers take no" in reply["refused"][f"res://{name}"], reply
