"""Hostile input: each gets its stable error code, and neither the bridge nor the engine goes down.

The cases run through one Bridge and one engine process; every case checks that the engine that
served it is still the one that served the first (nothing crashed it) and that nothing was
written, in the project or in the folder its symlinks lead to. The CLI cases feed raw bytes and check
that no traceback ever reaches the user.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, run_cli
from gdres import Bridge

# Builds the request for a project path: a decoded JSON value, an object except where a case says not.
Case = Callable[[str], object]


def create(project: str, path: str = "made.tres", **props: Any) -> dict[str, Any]:
    return {"op": "material_create", "project_path": project, "material_type": "StandardMaterial3D",
            "resource_path": path, "properties": props}


def read(project: str, path: str, **extra: Any) -> dict[str, Any]:
    return {"op": "resource_read", "project_path": project, "resource_path": path, **extra}


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


CASES: dict[str, tuple[Case, str]] = {
    # paths of the file a request names
    "dotdot": (lambda p: create(p, "../outside.tres"), "path_outside_project"),
    "dotdot inside a folder": (lambda p: create(p, "materials/../../outside.tres"), "path_outside_project"),
    "res:// then dotdot": (lambda p: create(p, "res://../outside.tres"), "path_outside_project"),
    "absolute path": (lambda p: create(p, "/tmp/evil.tres"), "invalid_path"),
    "res:// then absolute": (lambda p: create(p, "res:///tmp/evil.tres"), "invalid_path"),
    "windows drive": (lambda p: create(p, "C:\\evil.tres"), "invalid_path"),
    "other scheme": (lambda p: create(p, "user://evil.tres"), "invalid_path"),
    "folder symlink out": (lambda p: create(p, "escape/evil.tres"), "path_outside_project"),
    "file symlink out": (lambda p: create(p, "link.tres"), "path_outside_project"),
    "read through symlink out": (lambda p: read(p, "escape/outside.tres"), "path_outside_project"),
    "into .godot": (lambda p: create(p, ".godot/evil.tres"), "invalid_path"),
    "into .godot by dotdot": (lambda p: create(p, "materials/./../.godot/evil.tres"), "invalid_path"),
    "into .godot by symlink": (lambda p: create(p, "godot_alias/evil.tres"), "invalid_path"),
    "read project.godot": (lambda p: read(p, "project.godot"), "invalid_path"),
    "NUL byte": (lambda p: create(p, "evil\0.tres"), "invalid_path"),
    "300-byte file name": (lambda p: create(p, "a" * 300 + ".tres"), "invalid_path"),
    "9000-byte path": (lambda p: create(p, "d/" * 4500 + "x.tres"), "invalid_path"),
    "empty path": (lambda p: create(p, ""), "invalid_path"),
    "the project folder": (lambda p: read(p, "."), "invalid_path"),
    "wrong extension": (lambda p: create(p, "evil.gd"), "invalid_path"),
    "relative project_path": (lambda p: read("project", "materials/base.tres"), "project_not_found"),
    "NUL in project_path": (lambda p: read(p + "\0", "materials/base.tres"), "project_not_found"),
    "missing project": (lambda p: read(p + "/nope", "materials/base.tres"), "project_not_found"),
    "folder without project.godot": (lambda p: read(p + "/materials", "base.tres"), "project_not_found"),
    # resource paths inside property values
    "value dotdot": (lambda p: create(p, next_pass="../../outside.tres"), "path_outside_project"),
    "value res:// dotdot": (lambda p: create(p, next_pass="res://../outside.tres"), "path_outside_project"),
    "value symlink out": (lambda p: create(p, next_pass="escape/outside.tres"), "path_outside_project"),
    "value file symlink out": (lambda p: create(p, next_pass="link.tres"), "path_outside_project"),
    "value absolute": (lambda p: create(p, next_pass="/etc/passwd"), "invalid_path"),
    "value into .godot": (lambda p: create(p, next_pass="res://.godot/x.tres"), "invalid_path"),
    "value missing file": (lambda p: create(p, next_pass="missing.tres"), "not_found"),
    # type confusion
    "properties as array": (lambda p: {**create(p), "properties": []}, "invalid_request"),
    "properties as string": (lambda p: {**create(p), "properties": "roughness=1"}, "invalid_request"),
    "class as array": (lambda p: {**create(p), "material_type": ["StandardMaterial3D"]}, "invalid_request"),
    "project_path as number": (lambda p: {**read(p, "x.tres"), "project_path": 5}, "invalid_request"),
    "id as object": (lambda p: {**read(p, "materials/base.tres"), "id": {"a": 1}}, "invalid_request"),
    "depth as string": (lambda p: read(p, "materials/base.tres", depth="1"), "invalid_request"),
    "negative depth": (lambda p: read(p, "materials/base.tres", depth=-1), "invalid_request"),
    "huge depth": (lambda p: read(p, "materials/base.tres", depth=2**53), "ok"),
    "color as object of arrays": (lambda p: create(p, albedo_color={"r": [1], "g": 0, "b": 0}), "invalid_value"),
    "color as word": (lambda p: create(p, albedo_color="reddish"), "invalid_value"),
    "float as array": (lambda p: create(p, roughness=[1, 2]), "invalid_value"),
    "float as object": (lambda p: create(p, roughness={"x": 1}), "invalid_value"),
    "float as numeric string": (lambda p: create(p, roughness="0.5"), "invalid_value"),
    "float as bool": (lambda p: create(p, roughness=True), "invalid_value"),
    "1e308 into a 32-bit float": (lambda p: create(p, roughness=1e308), "invalid_value"),
    "NaN number": (lambda p: create(p, roughness=math.nan), "invalid_value"),
    "infinite number": (lambda p: create(p, roughness=-math.inf), "invalid_value"),
    "integer beyond 2^53": (lambda p: create(p, render_priority=2**70), "invalid_value"),
    "integer beyond int32": (lambda p: create(p, render_priority=2**40), "invalid_value"),
    "enum by unknown name": (lambda p: create(p, transparency="TRANSPARENCY_EVIL"), "invalid_value"),
    "resource as number": (lambda p: create(p, next_pass=5), "invalid_value"),
    "string as object": (lambda p: create(p, resource_name={"a": 1}), "invalid_value"),
    "vector of 2 for 3": (lambda p: create(p, uv1_scale=[1, 2]), "invalid_value"),
    "vector of strings": (lambda p: create(p, uv1_scale=["a", "b", "c"]), "invalid_value"),
    "empty property name": (lambda p: {**create(p), "properties": {"": 1}}, "unknown_property"),
    "unknown property": (lambda p: create(p, albedo_colour="#ff0000"), "unknown_property"),
    "unknown member": (lambda p: {**create(p), "extra": 1}, "invalid_request"),
    "unknown op": (lambda p: {**create(p), "op": "rm -rf /"}, "invalid_request"),
    "no op": (lambda p: {"project_path": p}, "invalid_request"),
    "not an object": (lambda p: [create(p)], "invalid_request"),
    "unknown class": (lambda p: {**create(p), "material_type": "OS"}, "invalid_type"),
    "non-material class": (lambda p: {**create(p), "material_type": "Node3D"}, "invalid_type"),
    "lone surrogate": (lambda p: create(p, resource_name="\ud800"), "invalid_request"),
    # members that would inject code or move files
    "script": (lambda p: create(p, script="res://scripts/noisy.gd"), "forbidden_property"),
    "script as null": (lambda p: create(p, script=None), "forbidden_property"),
    "resource_path": (lambda p: create(p, resource_path="elsewhere.tres"), "forbidden_property"),
    "scene unique id": (lambda p: create(p, resource_scene_unique_id="x"), "forbidden_property"),
    "shape script": (lambda p: {"op": "shape_create", "project_path": p, "shape_type": "BoxShape3D",
                                "shape_params": {"script": "res://scripts/noisy.gd"}}, "forbidden_property"),
    "override resource_path": (lambda p: {"op": "resource_duplicate", "project_path": p,
                                          "source_path": "materials/base.tres", "dest_path": "copy.tres",
                                          "property_overrides": {"resource_path": "x.tres"}},
                               "forbidden_property"),
    "scripted resource without permission": (lambda p: read(p, "noisy.tres"), "unsafe_resource"),
    # nesting
    "65 levels in a value": (lambda p: create(p, resource_name=nested(64)), "invalid_request"),
    "5000 levels in a value": (lambda p: create(p, resource_name=nested(5000)), "invalid_request"),
    "60 levels in a value": (lambda p: create(p, resource_name=nested(60)), "invalid_value"),
    "deep object": (lambda p: create(p, resource_name={"a": {"b": {"c": {"d": nested(70)}}}}), "invalid_request"),
}


def state(folder: Path) -> dict[str, str]:
    """Every file and symlink under `folder` (links not followed): path -> content hash or link target."""
    found: dict[str, str] = {}
    for top, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(top, name)
            if path.is_symlink():
                found[str(path)] = "-> " + os.readlink(path)
            elif path.is_file():
                found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


@pytest.fixture(scope="module")
def hostile_project(module_project: Path) -> Path:
    """The fixture project plus symlinks that lead out of it and into .godot/."""
    outside = module_project.parent / "outside"
    outside.mkdir()
    shutil.copy(FIXTURES / "project" / "materials" / "base.tres", outside / "outside.tres")
    (module_project / "escape").symlink_to(outside)
    (module_project / "link.tres").symlink_to(outside / "outside.tres")
    (module_project / ".godot").mkdir()
    (module_project / "godot_alias").symlink_to(module_project / ".godot")
    return module_project


@pytest.fixture(scope="module")
def hostile_bridge(module_bridge: Bridge) -> Bridge:
    return module_bridge


@pytest.fixture(scope="module")
def engine_pid(hostile_bridge: Bridge, hostile_project: Path) -> int:
    reply = hostile_bridge.run(read(str(hostile_project), "materials/base.tres"))
    assert reply["result"] == "ok"
    pid = hostile_bridge.prewarm(str(hostile_project), wait=True)[0].pid
    assert pid is not None
    return pid


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_request_gets_its_code_and_harms_nothing(
        name: str, hostile_bridge: Bridge, hostile_project: Path, engine_pid: int) -> None:
    build, code = CASES[name]
    before = state(hostile_project.parent)
    reply = hostile_bridge.run(build(str(hostile_project)))
    got = reply["result"] if reply["result"] == "ok" else reply["error"]["code"]
    assert got == code, reply
    if code != "ok":
        message = reply["error"]["message"]
        assert message and len(message) < 2000, message
    assert state(hostile_project.parent) == before
    assert hostile_bridge.prewarm(str(hostile_project), wait=True)[0].pid == engine_pid, "the engine was replaced"


def cli(*args: str, data: bytes) -> tuple[int, list[dict[str, Any]], str]:
    done = run_cli(*args, input=data)
    assert "Traceback" not in done.stderr
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines()], done.stderr


@pytest.mark.parametrize(("name", "data", "code"), [
    ("truncated JSON", b'{"op": "resource_read", "project_pa', "invalid_json"),
    ("empty input", b"", "invalid_json"),
    ("invalid UTF-8", b'{"op": "resource_read", "project_path": "/\xff\xfe"}', "invalid_json"),
    ("JSON array", b"[1, 2]", "invalid_json"),
    ("bare string", b'"resource_read"', "invalid_json"),
    ("100k nested arrays", b"[" * 100_000 + b"]" * 100_000, "invalid_json"),
    ("NaN literal", (b'{"op": "material_create", "project_path": "/p", "material_type": "X", '
                     b'"resource_path": "a.tres", "properties": {"roughness": NaN}}'), "invalid_value"),
    ("1e400 literal", (b'{"op": "material_create", "project_path": "/p", "material_type": "X", '
                       b'"resource_path": "a.tres", "properties": {"roughness": 1e400}}'), "invalid_value"),
])
def test_cli_refuses_malformed_input_with_a_code(godot_bin: str, name: str, data: bytes, code: str) -> None:
    status, replies, _ = cli("--godot", godot_bin, "run", data=data)
    assert status == 1
    assert [r["error"]["code"] for r in replies] == [code]


def test_cli_deep_nesting_inside_properties_never_reaches_the_engine(godot_bin: str, project: Path) -> None:
    head = json.dumps(create(str(project)))[:-2].encode()  # ends inside "properties": {
    deep = head + b'"resource_name": ' + b"[" * 100_000 + b"1" + b"]" * 100_000 + b"}}"
    medium = head + b'"resource_name": ' + b"[" * 500 + b"1" + b"]" * 500 + b"}}"
    good = json.dumps(read(str(project), "materials/base.tres")).encode()
    status, replies, _ = cli("--godot", godot_bin, "batch", data=b"\n".join([deep, medium, good]) + b"\n")
    assert [r["result"] if r["result"] == "ok" else r["error"]["code"] for r in replies] == [
        "invalid_json", "invalid_request", "ok"]
    assert status == 1


def test_batch_line_of_invalid_utf8_is_refused_and_the_batch_goes_on(godot_bin: str, project: Path) -> None:
    good = json.dumps(read(str(project), "materials/base.tres")).encode()
    status, replies, _ = cli("--godot", godot_bin, "batch", data=good + b"\n\xc3\x28 not utf-8\n" + good + b"\n")
    assert [r["result"] if r["result"] == "ok" else r["error"]["code"] for r in replies] == [
        "ok", "invalid_json", "ok"]
    assert status == 1


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_50_mb_requests_are_served_or_refused_without_harm(godot_bin: str, project: Path, tmp_path: Path) -> None:
    name = "0123456789" * 5_000_000
    big = tmp_path / "big.json"
    big.write_text(json.dumps(create(str(project), "big.tres", resource_name=name)))
    status, replies, _ = cli("--godot", godot_bin, "run", f"@{big}", data=b"")
    assert status == 0 and replies[0]["result"] == "ok", replies
    assert (project / "big.tres").stat().st_size > 50_000_000
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps(create(str(project), "wrong.tres", **{name: 1})))
    status, replies, _ = cli("--godot", godot_bin, "run", f"@{wrong}", data=b"")
    assert replies[0]["error"]["code"] == "unknown_property"
    assert len(replies[0]["error"]["message"]) < 2000
    assert not (project / "wrong.tres").exists()
    floats = tmp_path / "floats.json"
    floats.write_text(json.dumps(create(str(project), "floats.tres", resource_name=[0.123456789] * 4_500_000)))
    status, replies, _ = cli("--godot", godot_bin, "run", f"@{floats}", data=b"")
    assert replies[0]["error"]["code"] == "invalid_value"
    assert len(replies[0]["error"]["message"]) < 2000
