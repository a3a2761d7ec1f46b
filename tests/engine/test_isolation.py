"""Starting an engine on a project runs none of the project's code.

A project can make the engine run its code at start-up in several ways: an autoload, a custom theme,
font or audio bus layout (each loaded at start, each may carry a script), a project.binary beside
project.godot (read before it), a script class cache whose values are loaded, and GDExtension
libraries listed in .godot/extension_list.cfg (native code). The workers start with the bridge's own
settings pack (gdres/engine/godot.py settings_pack), so a request on such a project leaves no marker.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from gdres import Bridge
from hostile_corpus import gd_source, quoted
from opened import opened, traced_godot, under

EXTENSION = """#include <stdio.h>
__attribute__((constructor)) static void ran(void) {
    FILE *f = fopen(MARKER, "w");
    if (f) { fputs("ran", f); fclose(f); }
}
int entry(void *a, void *b, void *c) { return 0; }
"""


def scripted(case: str, resource_type: str) -> str:
    """A resource of `resource_type` whose embedded script leaves the marker MARK_<case>.txt."""
    return (f'[gd_resource type="{resource_type}" format=3]\n\n[sub_resource type="GDScript" id="S"]\n'
            f"script/source = {quoted(gd_source(case, resource_type))}\n\n[resource]\nscript = SubResource(\"S\")\n")


def settings_binary(godot: str, folder: Path, settings: dict[str, str]) -> bytes:
    """A project.binary holding `settings`, written by the engine."""
    scratch = folder / "binary_writer"
    scratch.mkdir()
    (scratch / "project.godot").write_text("config_version=5\n")
    lines = "".join(f'\tProjectSettings.set_setting("{key}", "{value}")\n' for key, value in settings.items())
    (scratch / "write.gd").write_text(
        f'extends SceneTree\nfunc _initialize() -> void:\n{lines}'
        f'\tProjectSettings.save_custom("{scratch / "project.binary"}")\n\tquit()\n')
    subprocess.run([godot, "--headless", "--path", str(scratch), "-s", str(scratch / "write.gd")],
                   check=True, capture_output=True, timeout=60)
    data = (scratch / "project.binary").read_bytes()
    shutil.rmtree(scratch)
    return data


@pytest.fixture
def hostile_project(tmp_path: Path, godot_bin: str) -> Path:
    project = tmp_path / "project"
    (project / ".godot").mkdir(parents=True)
    (project / "project.godot").write_text(
        'config_version=5\n\n[application]\nconfig/name="hostile"\n\n'
        '[autoload]\nAuto="*res://auto.gd"\n\n'
        '[audio]\nbuses/default_bus_layout="res://bus.tres"\n\n'
        '[gui]\ntheme/custom="res://theme.tres"\ntheme/custom_font="res://font.tres"\n')
    (project / "auto.gd").write_text(gd_source("autoload", "Node"))
    (project / "theme.tres").write_text(scripted("theme", "Theme"))
    (project / "font.tres").write_text(scripted("font", "FontFile"))
    (project / "bus.tres").write_text(scripted("bus", "AudioBusLayout"))
    (project / "binary_theme.tres").write_text(scripted("binary_settings", "Theme"))
    (project / "project.binary").write_bytes(
        settings_binary(godot_bin, tmp_path, {"gui/theme/custom": "res://binary_theme.tres"}))
    (project / "cached.gd").write_text(gd_source("class_cache", "Object"))
    (project / ".godot" / "global_script_class_cache.cfg").write_text(
        'list=[{\n"base": &"Object",\n"class": &"Cached",\n"icon": Resource("res://cached.gd"),\n'
        '"is_abstract": false,\n"is_tool": false,\n"language": &"GDScript",\n"path": "res://cached.gd"\n}]\n')
    library = project / "bin" / "libmark.so"
    library.parent.mkdir()
    source = tmp_path / "mark.c"
    source.write_text(EXTENSION.replace("MARKER", quoted(str(project / "MARK_extension.txt"))))
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(library), str(source)], check=True, timeout=60)
    (project / "mark.gdextension").write_text(
        '[configuration]\nentry_symbol = "entry"\ncompatibility_minimum = "4.1"\n\n'
        '[libraries]\nlinux.x86_64 = "res://bin/libmark.so"\n')
    (project / ".godot" / "extension_list.cfg").write_text("res://mark.gdextension\n")
    (project / "plain.tres").write_text(
        '[gd_resource type="StandardMaterial3D" format=3]\n\n[resource]\nroughness = 0.5\n')
    return project


def markers(project: Path) -> list[str]:
    return sorted(path.name for path in project.glob("MARK_*"))


def test_a_request_on_a_project_runs_none_of_its_start_up_code(hostile_project: Path, godot_bin: str) -> None:
    with Bridge(godot_bin) as bridge:
        reply = bridge.run({"op": "resource_read", "project_path": str(hostile_project), "resource_path": "plain.tres"})
        created = bridge.run({"op": "material_create", "project_path": str(hostile_project),
                              "material_type": "StandardMaterial3D", "resource_path": "made.tres"})
    assert reply["result"] == "ok" and reply["properties"] == {"roughness": 0.5}, reply
    assert created["result"] == "ok", created
    assert markers(hostile_project) == []


def test_the_same_project_runs_that_code_when_the_engine_starts_as_itself(
    hostile_project: Path, godot_bin: str
) -> None:
    """The project is really hostile: the engine started plainly on it runs every piece."""
    probe = hostile_project.parent / "probe.gd"
    probe.write_text("extends SceneTree\nfunc _process(_delta: float) -> bool:\n\treturn true\n")

    def start_plainly() -> set[str]:
        subprocess.run([godot_bin, "--headless", "--path", str(hostile_project), "-s", str(probe)],
                       capture_output=True, timeout=60)
        found = set(markers(hostile_project))
        for marker in hostile_project.glob("MARK_*"):
            marker.unlink()
        return found

    # The engine reads project.binary instead of project.godot when there is one.
    assert start_plainly() >= {"MARK_binary_settings.txt", "MARK_extension.txt"}
    (hostile_project / "project.binary").unlink()
    assert start_plainly() >= {"MARK_autoload.txt", "MARK_theme.txt", "MARK_font.txt", "MARK_bus.txt"}


def remapped_to_code(case: str) -> str:
    """A `.remap` file whose text makes the engine's parser build a script that leaves a marker."""
    return f'[remap]\n\npath=Object(RefCounted,"script":Object(GDScript,"script/source":{quoted(gd_source(case))}))\n'


def test_no_remap_beside_a_start_up_file_is_read(tmp_path: Path, godot_bin: str) -> None:
    # Before it runs the bridge's main.gd (whose gate judges every load), the engine looks for the
    # audio bus layout its settings name, and reads the .remap beside that path with the parser
    # that builds scripts. The settings pack once left the engine's default, res://default_bus_layout.tres
    # (found by a red-team read), and an empty path would name the project's `.remap`.
    project = tmp_path / "project"
    project.mkdir()
    (project / "project.godot").write_text('config_version=5\n\n[audio]\nbuses/default_bus_layout="res://bus.tres"\n')
    for name in ("default_bus_layout.tres.remap", ".remap", "bus.tres.remap"):
        (project / name).write_text(remapped_to_code(name.split(".")[0] or "dot"))
    traced, log = traced_godot(godot_bin, tmp_path / "traced", project / ".godot" / "start.trace")
    with Bridge(traced) as bridge:
        reply = bridge.run({"op": "material_create", "project_path": str(project),
                            "material_type": "StandardMaterial3D", "resource_path": "made.tres"})
    assert reply["result"] == "ok", reply
    assert markers(project) == []
    assert [path for path in under(opened(log), project) if path.endswith(".remap")] == []
