"""A generated hostile corpus against the load gate, watched with strace (issue 25).

Every path-taking construct of the text and binary formats, and every property that ClassDB hints as a
file on a class a request may make, is pointed at (a) a script in the project, (b) a file outside it by
absolute path and (c) the same by `res://../`; each is then reached through resource_read,
resource_duplicate, resource_update and a create whose value names the file. One engine serves each
operation's cases under strace; the assertion is on what it really opened: no file outside the project
(and the engine's own and the bridge's folders), no script of the project, no marker file.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import hostile_corpus as corpus
from opened import Watched, opened, scripts_opened, under

TARGETS = ("script", "absolute", "dotdot")
UID_BASE = 4_000_000_000_000

FILE_PROPERTIES_SCRIPT = """extends MainLoop
func _initialize() -> void:
	var found: Array = []
	for type: String in ClassDB.get_class_list():
		if not ClassDB.can_instantiate(type) or not ClassDB.is_parent_class(type, "Resource"):
			continue
		for info: Dictionary in ClassDB.class_get_property_list(type):
			if info["type"] == TYPE_STRING and info["hint"] in [PROPERTY_HINT_FILE, PROPERTY_HINT_DIR,
					PROPERTY_HINT_GLOBAL_FILE, PROPERTY_HINT_GLOBAL_DIR, PROPERTY_HINT_SAVE_FILE,
					PROPERTY_HINT_GLOBAL_SAVE_FILE, 44]:
				found.append([type, info["name"]])
	printerr("FILE_PROPERTIES " + JSON.stringify(found))
func _process(_delta: float) -> bool:
	return true
"""


@dataclass
class Construct:
    """A way a resource file names another file: `files(target, uid)` gives the case's files,
    relative to the case's folder (the one requests name is `main`); `uids`: the target is named by
    the uid given, which the project's uid cache maps to it."""

    name: str
    files: Callable[[str, int], dict[str, bytes | str]]
    main: str = "f.tres"
    uids: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


def _resource(body: str, header: str = 'type="Resource"', tags: str = "") -> str:
    return f"[gd_resource {header} format=3]\n\n{tags}[resource]\n{body}"


def _shader(kind: str) -> Callable[[str, int], dict[str, bytes | str]]:
    def files(target: str, _uid: int) -> dict[str, bytes | str]:
        code = corpus.quoted(f'shader_type spatial;\n#include "{target}"\n')
        return {"f.tres": _resource(f"code = {code}\n", f'type="{kind}"')}
    return files


def constructs(file_properties: list[list[str]]) -> list[Construct]:
    made = [
        Construct("ext_resource_path", lambda t, _uid: {"f.tres": _resource(
            'metadata/x = ExtResource("1")\n', tags=f'[ext_resource type="Resource" path="{t}" id="1"]\n\n')}),
        Construct("ext_resource_uid", lambda t, uid: {"f.tres": _resource(
            'metadata/x = ExtResource("1")\n',
            tags=f'[ext_resource type="Resource" uid="{corpus.uid_text(uid)}" path="res://gone.tres" id="1"]\n\n')},
            uids=True),
        Construct("inline_resource", lambda t, _uid: {"f.tres": _resource(f'metadata/x = Resource("{t}")\n')}),
        Construct("ext_resource_before_handlers", lambda t, _uid: {"f.tres": _resource(
            f'metadata/x = ExtResource("{t}")\n')}),
        Construct("shader_include", _shader("Shader")),
        Construct("shader_include_in_include", _shader("ShaderInclude")),
        Construct("gdshader_include", lambda t, _uid: {
            "s.gdshader": f'shader_type spatial;\n#include "{t}"\n',
            "f.tres": _resource('metadata/x = ExtResource("1")\n',
                                tags='[ext_resource type="Shader" path="s.gdshader" id="1"]\n\n')}),
        Construct("remap_of_missing_file", lambda t, _uid: {"ghost.tres.remap": f'[remap]\n\npath="{t}"\n'},
                  main="ghost.tres"),
        Construct("import_remap", lambda t, _uid: {
            "img.png": b"\x89PNG\r\n\x1a\n",
            "img.png.import": f'[remap]\n\nimporter="texture"\ntype="CompressedTexture2D"\npath="{t}"\n',
            "f.tres": _resource('metadata/x = ExtResource("1")\n',
                                tags='[ext_resource type="Texture2D" path="img.png" id="1"]\n\n')}),
        Construct("binary_ext_table", lambda t, _uid: {}, main="f.res", extra={"binary": True}),
    ]
    for type, name in file_properties:
        made.append(Construct(f"property_{type}_{name}", _setting(type, name), extra={"property": (type, name)}))
    return made


def _setting(type: str, name: str) -> Callable[[str, int], dict[str, bytes | str]]:
    def files(target: str, _uid: int) -> dict[str, bytes | str]:
        return {"f.tres": _resource(f'{name} = "{target}"\n', f'type="{type}"')}
    return files


BINARY_WRITER = """extends MainLoop
## Save f.res files whose external-resource table names a target, without loading the target.
func _initialize() -> void:
	var jobs: Dictionary = JSON.parse_string(OS.get_cmdline_user_args()[0])
	for out: String in jobs:
		var target: Resource = Resource.new()
		target.resource_path = jobs[out]
		var holder: Resource = Resource.new()
		holder.set_meta("x", target)
		ResourceSaver.save(holder, out)
func _process(_delta: float) -> bool:
	return true
"""


@pytest.fixture(scope="module")
def file_properties(godot_bin: str, tmp_path_factory: pytest.TempPathFactory) -> list[list[str]]:
    folder = tmp_path_factory.mktemp("classdb")
    (folder / "project.godot").write_text("config_version=5\n")
    (folder / "list.gd").write_text(FILE_PROPERTIES_SCRIPT)
    done = subprocess.run([godot_bin, "--headless", "--path", str(folder), "-s", "list.gd", "--quit-after", "2"],
                          capture_output=True, text=True, timeout=120)
    line = next(line for line in done.stderr.splitlines() if line.startswith("FILE_PROPERTIES "))
    found: list[list[str]] = json.loads(line.removeprefix("FILE_PROPERTIES "))
    assert ["CompressedTexture2D", "load_path"] in found
    return found


@dataclass
class Case:
    name: str
    construct: Construct
    target: str
    folder: str
    path: str  # the target as the construct names it


def build(watched: Watched, godot_bin: str, made: list[Construct]) -> list[Case]:
    cases: list[Case] = []
    uids: dict[int, str] = {}
    binaries: dict[str, str] = {}
    for number, construct in enumerate(made):
        for target in TARGETS:
            folder = f"{construct.name}__{target}"
            case = folder
            if target == "script":
                watched.script(f"{folder}/pwn.gd", case)
                path = f"res://{folder}/pwn.gd"
            else:
                bait = watched.bait(f"{folder}.tres", _resource('resource_name = "bait"\n'))
                path = str(bait) if target == "absolute" else f"res://../outside/{bait.name}"
            uid = UID_BASE + number * 10 + TARGETS.index(target)
            if construct.uids:
                uids[uid] = path
            for relative, data in construct.files(path, uid).items():
                watched.write(f"{folder}/{relative}", data)
            if construct.extra.get("binary"):
                (watched.project / folder).mkdir(exist_ok=True)
                binaries[str(watched.project / folder / "f.res")] = path
            cases.append(Case(case, construct, target, folder, path))
    if uids:
        watched.write(".godot/uid_cache.bin", corpus.uid_cache(uids))
    if binaries:
        writer = watched.project.parent / "binary_writer"
        writer.mkdir()
        (writer / "project.godot").write_text("config_version=5\n")
        (writer / "write.gd").write_text(BINARY_WRITER)
        subprocess.run([godot_bin, "--headless", "--path", str(writer), "-s", "write.gd", "--quit-after", "2", "--",
                        json.dumps(binaries)], check=True, capture_output=True, timeout=120)
        for out in binaries:
            assert Path(out).exists(), out
    return cases


def request(case: Case, op: str) -> dict[str, Any]:
    file = f"{case.folder}/{case.construct.main}"
    if op == "resource_read":
        return {"op": op, "resource_path": file}
    if op == "resource_duplicate":
        return {"op": op, "source_path": file, "dest_path": f"{case.folder}/copy.tres"}
    if op == "resource_update":
        return {"op": op, "resource_path": file, "properties": {"resource_name": "changed"}}
    if "property" in case.construct.extra:
        type, name = case.construct.extra["property"]
        return {"op": "resource_create", "resource_type": type, "resource_path": f"{case.folder}/made.tres",
                "properties": {name: case.path}}
    return {"op": "material_create", "material_type": "StandardMaterial3D", "resource_path": f"{case.folder}/made.tres",
            "properties": {"next_pass": file}}


OPERATIONS = ("resource_read", "resource_duplicate", "resource_update", "create")


@pytest.mark.parametrize("op", OPERATIONS)
def test_no_construct_reaches_a_script_or_a_file_outside(watched: Watched, godot_bin: str,
                                                           file_properties: list[list[str]], op: str) -> None:
    cases = build(watched, godot_bin, constructs(file_properties))
    before = {p: p.read_bytes() for p in watched.project.rglob("*") if p.is_file()}
    answered_ok = []
    for case in cases:
        ask = request(case, op)
        reply = watched.run(ask.pop("op"), **ask)
        if reply["result"] == "ok":
            answered_ok.append(case.name)
    assert answered_ok == [], f"replied ok although the engine was sent to a script or out: {answered_ok}"
    paths = opened(watched.log)
    assert paths, "strace recorded nothing"
    assert sorted(p.name for p in watched.project.rglob(f"{corpus.MARK}*")) == []
    assert scripts_opened(paths, watched.project) == []
    assert under(paths, watched.outside) == []
    after = {p: p.read_bytes() for p in watched.project.rglob("*") if p.is_file() and p in before}
    assert after == {p: data for p, data in before.items() if p in after}
    print(f"{len(cases)} cases through {op}")
