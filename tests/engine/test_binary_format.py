"""formats/binary_format.gd against files the real engine saves, and broken copies of one of them.

tests/gdscript/binary_format_check.gd saves the files with the running Godot, runs the reader over
each (and over crafted byte-level variants), and prints one JSON line per file; these tests judge
the lines. Clean files must be vouched for with the right classes and loads, scripted ones must
show their script, and every broken one must be refused, without the reader ever failing to finish.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO

CHECK = REPO / "tests" / "gdscript" / "binary_format_check.gd"
SCRIPT_CLASSES = {"Script", "GDScript", "CSharpScript"}

CLEAN_CLASSES: dict[str, set[str]] = {
    "material": {"StandardMaterial3D", "GradientTexture1D", "Gradient"},
    "mesh": {"ArrayMesh"},
    "values": {"Resource"},
    "compressed": {"Resource"},
    "typed": {"Resource", "StandardMaterial3D", "Gradient"},
    "meta_sub": {"Resource", "Gradient", "Curve"},
    "clean_scene": {"PackedScene", "BoxMesh"},
    "chain": {"Resource"},
    "bundled": {"Resource"},
    "relative": {"Resource"},
    "marker": {"Resource", "Gradient"},
}
SCRIPTED = {
    "embedded_script", "external_script", "class_name_script", "scripted_sub",
    "typed_external_script", "typed_embedded_script", "scene", "compressed_script",
}
BROKEN_REASONS: dict[str, str] = {
    "big_endian": "big-endian",
    "compressed_cut": "compressed binary resource cut short",
    "compressed_block_damaged": "does not unpack",
    "too_deep": "nested deeper",
    "magic_rscc": "block size 0",
    "magic_other": "not a binary resource",
    "big_endian_flag": "big-endian",
    "format_7": "format version 7",
    "format_3": "format version 3",
    "engine_major_5": "major version 5",
    "unknown_flag": "unknown format flags",
    "reserved_field": "reserved header field",
    "no_end_marker": "end marker",
    "offset_past_end": "starts at offset",
    "offset_in_header": "starts at offset",
    "value_type_99": "unknown value type id 99",
    "value_type_54": "unknown value type id 54",
    "string_length_past_end": "truncated",
    "string_unterminated": "NUL-terminated",
    "name_index_past_table": "string 999",
    "packed_length_past_end": "claims",
    "object_kind_unknown": "object reference kind 7",
    "internal_index_past_table": "internal resource 40",
    "property_count_huge": "claims",
    "truncated_at_10": "truncated",
    "scene_names_not_packed": "not a PackedStringArray",
}


def _engine_env(home: Path) -> dict[str, str]:
    """The environment with the engine's own user data, config and cache kept under `home`."""
    env = dict(os.environ)
    for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        folder = home / name.lower()
        folder.mkdir(parents=True, exist_ok=True)
        env[name] = str(folder)
    return env


def _run_check(godot: str, root: Path) -> tuple[subprocess.CompletedProcess[str], Path]:
    work = root / "work"
    work.mkdir()
    done = subprocess.run([godot, "--headless", "-s", str(CHECK.relative_to(REPO)), "--", str(work)],
                          cwd=REPO, env=_engine_env(root / "home"), capture_output=True, text=True,
                          timeout=120)
    return done, work


@pytest.fixture(scope="module")
def checked(godot_bin: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    """One run of the check script (it saves every file, so it is shared by the module)."""
    return _run_check(godot_bin, tmp_path_factory.mktemp("binary_format"))


@pytest.fixture(scope="module")
def cases(checked: tuple[subprocess.CompletedProcess[str], Path]) -> dict[str, dict[str, Any]]:
    """The check's JSON lines by case name."""
    done, _ = checked
    found: dict[str, dict[str, Any]] = {}
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            entry = json.loads(line)
            found[entry["case"]] = entry
    return found


def _types(case: dict[str, Any]) -> set[str]:
    return {entry["type"] for entry in case["classes"]}


def test_the_check_finishes_without_script_errors(checked: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    done, _ = checked
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "DONE", done.stdout[-2000:] + done.stderr[-2000:]
    assert "SCRIPT ERROR" not in done.stderr, done.stderr
    assert "decode_" not in done.stderr, done.stderr  # no read ran past the bytes


def test_every_file_was_saved_and_scanned(cases: dict[str, dict[str, Any]]) -> None:
    assert not [case for case in cases.values() if "save_error" in case]
    expected = set(CLEAN_CLASSES) | SCRIPTED | set(BROKEN_REASONS)
    assert expected <= set(cases), sorted(expected - set(cases))


@pytest.mark.parametrize("name", sorted(CLEAN_CLASSES))
def test_a_clean_file_is_vouched_for_with_its_classes(cases: dict[str, dict[str, Any]], name: str) -> None:
    case = cases[name]
    assert case["kind"] == "clean"
    assert case["unreadable"] == "" and case["finished"]
    assert case["script_set"] == ""
    assert _types(case) == CLEAN_CLASSES[name]
    assert any(entry["where"] == "the main resource" for entry in case["classes"])


@pytest.mark.parametrize("name", ["material", "mesh", "values", "typed", "meta_sub", "clean_scene", "bundled"])
def test_a_self_contained_file_loads_nothing(cases: dict[str, dict[str, Any]], name: str) -> None:
    assert cases[name]["loads"] == []


def test_sub_resources_are_each_reported(cases: dict[str, dict[str, Any]]) -> None:
    wheres = [entry["where"] for entry in cases["material"]["classes"]]
    types = [entry["type"] for entry in cases["material"]["classes"]]
    assert types.count("StandardMaterial3D") == 3  # the header, the next pass and the main resource
    assert sum(where.startswith("internal resource ") for where in wheres) == 3
    meta_types = [entry["type"] for entry in cases["meta_sub"]["classes"]]
    assert (meta_types.count("Gradient"), meta_types.count("Curve")) == (2, 2)  # in a value, list and map


@pytest.mark.parametrize("name", ["chain", "marker"])
def test_an_external_resource_is_a_load_relative_to_the_file(cases: dict[str, dict[str, Any]], name: str) -> None:
    case = cases[name]
    target = case["note"]["target"]
    assert [(load["path"], load["base"]) for load in case["loads"]] == [(target, "file")]
    assert {"type": "Resource", "where": f"external resource 0 ({target})"} in case["classes"]


def test_a_bundled_resource_is_internal_under_its_own_path(cases: dict[str, dict[str, Any]]) -> None:
    target = cases["bundled"]["note"]["target"]
    assert {"type": "Resource", "where": f"internal resource 0 ({target})"} in cases["bundled"]["classes"]


def test_a_relative_external_path_is_reported_as_written_and_as_the_engine_resolves_it(
        cases: dict[str, dict[str, Any]]) -> None:
    loads = [(load["path"], load["base"]) for load in cases["relative"]["loads"]]
    assert loads == [("../base.res", "both"), ("../../base.res", "root")]


@pytest.mark.parametrize("name", sorted(SCRIPTED))
def test_a_scripted_file_shows_its_script(cases: dict[str, dict[str, Any]], name: str) -> None:
    case = cases[name]
    assert case["kind"] == "scripted"
    assert case["unreadable"] == ""
    assert case["script_set"] != "" or _types(case) & SCRIPT_CLASSES, case


def test_an_embedded_script_is_set_on_the_main_resource(cases: dict[str, dict[str, Any]]) -> None:
    assert cases["embedded_script"]["script_set"] == "the main resource"
    assert "GDScript" in _types(cases["embedded_script"])


def test_an_external_script_is_a_load_and_a_script_class(
        cases: dict[str, dict[str, Any]], checked: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    _, work = checked
    for name, file in (("external_script", "tool.gd"), ("typed_external_script", "tool.gd"), ("scene", "node_tool.gd")):
        case = cases[name]
        assert str(work / file) in [load["path"] for load in case["loads"]], name
        assert "Script" in _types(case), name
    assert cases["external_script"]["script_set"] == "the main resource"


def test_the_header_script_class_and_a_sub_resource_script_are_seen(cases: dict[str, dict[str, Any]]) -> None:
    assert cases["class_name_script"]["script_set"] == "the header's script_class BinaryCheckThing"
    assert cases["scripted_sub"]["script_set"].startswith("internal resource ")


def test_a_scene_node_script_is_seen(cases: dict[str, dict[str, Any]]) -> None:
    scene = cases["scene"]
    assert scene["script_set"].startswith("a node of the packed scene")
    assert {"PackedScene", "GDScript", "Script"} <= _types(scene)


def test_a_typed_array_of_a_script_lists_the_script(cases: dict[str, dict[str, Any]]) -> None:
    assert "GDScript" in _types(cases["typed_embedded_script"])
    assert "Script" in _types(cases["typed_external_script"])


def test_every_broken_file_is_refused(cases: dict[str, dict[str, Any]]) -> None:
    broken = {name: case for name, case in cases.items() if case.get("kind") == "broken"}
    assert len(broken) >= len(BROKEN_REASONS)
    assert {name: case["unreadable"] for name, case in broken.items() if case["unreadable"] == ""} == {}


@pytest.mark.parametrize("name", sorted(BROKEN_REASONS))
def test_a_broken_file_says_why(cases: dict[str, dict[str, Any]], name: str) -> None:
    assert BROKEN_REASONS[name] in cases[name]["unreadable"]
    assert not cases[name]["finished"]


def test_the_legacy_inline_external_reference_is_a_load_relative_to_the_file(
        cases: dict[str, dict[str, Any]]) -> None:
    case = cases["legacy_external_reference"]
    assert case["unreadable"] == ""
    assert {"path": "legacy_target.res", "uid": "", "base": "file",
            "where": "an inline external reference in the main resource, property metadata/external"} in case["loads"]
    assert {"type": "Resource",
            "where": "an inline external reference in the main resource, property metadata/external"} in case["classes"]


def test_an_inline_property_name_script_is_seen(cases: dict[str, dict[str, Any]]) -> None:
    assert cases["inline_script_name"]["unreadable"] == ""
    assert cases["inline_script_name"]["script_set"] == "the main resource"


def test_external_uids_are_reported_as_text(cases: dict[str, dict[str, Any]]) -> None:
    for name in ("external_uid", "external_uid_negative"):
        case = cases[name]
        assert case["unreadable"] == ""
        assert [load["uid"] for load in case["loads"]] == [case["note"]["uid"]], name
    assert cases["external_uid"]["note"]["uid"].startswith("uid://")


def test_understood_oddities_are_not_refused(cases: dict[str, dict[str, Any]]) -> None:
    # real_t as double changes only the width of reals (this file has none); an external index
    # past the table makes the loader set null, as the saver's own bundled files do.
    for name in ("real_t_double_flag", "external_index_past_table"):
        assert cases[name]["unreadable"] == "", name
        assert cases[name]["script_set"] == "", name


def test_randomly_damaged_files_never_stop_the_reader(cases: dict[str, dict[str, Any]]) -> None:
    # A script error would be on stderr and a crash would lose "DONE" (both checked above).
    assert cases["fuzz"]["runs"] == 2000
    assert 0 < cases["fuzz"]["refused"] <= 2000


def test_the_check_writes_only_inside_its_workdir(godot_bin: str, tmp_path: Path) -> None:
    done, work = _run_check(godot_bin, tmp_path)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "work"]
    assert (work / "marker.res").is_file()
    assert not (REPO / ".godot").exists()
