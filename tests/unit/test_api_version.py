"""The scan of what the GDScript uses (tests/gdscript_uses.py), held to the oldest Godot the gate accepts
(engine/godot.py MIN_VERSION): its class reference, vendored in tests/godot_api/ (scripts/vendor_godot_api.py
says where it came from). The same scan against the engine here: tests/engine/test_api_version.py."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from conftest import REPO
from gdres.engine.godot import MIN_VERSION
from gdscript_uses import SYNTAX, Scanner, Use, missing
from godot_api import Api

VENDORED = REPO / "tests" / "godot_api"


def minimum() -> Api:
    """The class reference of the oldest version the gate accepts."""
    path = VENDORED / f"{MIN_VERSION[0]}.{MIN_VERSION[1]}.json"
    assert path.is_file(), f"the gate accepts Godot {MIN_VERSION}, but {path.name} is not vendored: see scripts/"
    return Api.load(path)


def report(problems: list[Use], api: Api) -> str:
    """One line per name, with every place that uses it."""
    places: dict[str, list[str]] = {}
    for use in problems:
        key = f"{use.kind} {use.owner + '.' if use.owner else ''}{use.name}"
        if use.kind == "syntax":
            version, source = SYNTAX[use.name]
            key += f" (Godot {version[0]}.{version[1]}, {source})"
        places.setdefault(key, []).append(use.where)
    return f"Godot {api.version} lacks:\n" + "\n".join(f"  {key}: {', '.join(where)}" for key, where in places.items())


NEWER_ONLY = {"gdscript/safety/script_errors.gd": 'if ClassDB.class_exists("Logger"):'}
"""Scripts that use what only a newer Godot than the oldest accepted has, each loaded (by main.gd,
never preloaded) only behind the check named; the test below checks them against the engine here."""


def test_gdscript_uses_only_what_the_oldest_accepted_engine_has() -> None:
    api = minimum()
    uses = [use for use in Scanner(api).scan(REPO / "gdscript") if use.where.split(":")[0] not in NEWER_ONLY]
    problems = list(missing(uses, api, MIN_VERSION))
    if problems:
        pytest.fail(report(problems, api), pytrace=False)


@pytest.mark.parametrize(("script", "check"), NEWER_ONLY.items())
def test_a_script_for_a_newer_engine_loads_only_behind_its_check(script: str, check: str) -> None:
    name = Path(script).name
    main = (REPO / "gdscript" / "main.gd").read_text()
    assert check in main and name in main.split(check, 1)[1].split("\n\n", 1)[0]
    preloading = [path.name for path in (REPO / "gdscript").rglob("*.gd")
                  for line in path.read_text().splitlines() if "preload(" in line and name in line]
    assert preloading == []


def scan_snippet(tmp_path: Path, code: str) -> list[str]:
    """What the oldest accepted engine lacks of one script holding `code`."""
    folder = tmp_path / "gdscript"
    folder.mkdir(exist_ok=True)
    (folder / "snippet.gd").write_text(textwrap.dedent(code).lstrip(), encoding="utf-8")
    api = minimum()
    lacking = missing(Scanner(api).scan(folder), api, MIN_VERSION)
    return sorted({f"{use.kind} {use.owner}.{use.name}" for use in lacking})


def test_a_method_of_a_later_godot_is_caught_on_a_typed_value(tmp_path: Path) -> None:
    later = scan_snippet(
        tmp_path,
        """
        extends RefCounted


        func size_of(path: String) -> int:
            var file := FileAccess.open(path, FileAccess.READ)
            var text: String = file.get_as_text().strip_edges()
            return file.get_length() + text.length() + FileAccess.get_size(path)
        """,
    )
    assert later == ["member FileAccess.get_size"]


def test_a_script_that_extends_another_by_path_has_its_members_and_its_engine_class(tmp_path: Path) -> None:
    (tmp_path / "gdscript" / "formats").mkdir(parents=True)
    (tmp_path / "gdscript" / "formats" / "base.gd").write_text(
        "extends FileAccess\n\nvar _bytes: PackedByteArray\n\n\nfunc _next() -> void:\n\tpass\n")
    later = scan_snippet(
        tmp_path,
        """
        extends "formats/base.gd"


        func f() -> int:
            _next()
            get_size("x")
            return _bytes.size()
        """,
    )
    # The base's own names are no engine globals; what neither defines is the engine class's.
    assert later == ["member FileAccess.get_size"]


def test_an_unknown_name_is_caught_on_a_value_of_unknown_type(tmp_path: Path) -> None:
    later = scan_snippet(
        tmp_path,
        """
        extends RefCounted


        func f(value: Variant) -> void:
            value.no_class_has_this_method()
            value.get_class()
        """,
    )
    assert later == ["somewhere .no_class_has_this_method"]


def test_syntax_is_told_apart_by_the_version_that_brought_it(tmp_path: Path) -> None:
    code = """
        extends RefCounted

        static var calls: int = 0


        func f(counts: Dictionary[String, int], value: Variant, ...rest: Array) -> bool:
            for key: String in counts:
                calls += rest.size()
            return value is not String
        """
    later = scan_snippet(tmp_path, code)
    features = {"static var", "typed for-loop variable", "is not", "typed Dictionary", "variadic function"}
    assert {f"syntax .{name}" for name in features if SYNTAX[name][0] > MIN_VERSION} == set(later)
    found = {use.name for use in Scanner(minimum()).scan(tmp_path / "gdscript") if use.kind == "syntax"}
    assert found == features


def test_an_annotation_of_a_later_godot_is_caught(tmp_path: Path) -> None:
    later = scan_snippet(
        tmp_path,
        """
        @abstract
        extends RefCounted
        """,
    )
    assert later == ["annotation .@abstract"]
