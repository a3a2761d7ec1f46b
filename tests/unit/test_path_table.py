"""One table of paths, each run as a request member and as a property value that names a file, through
the bridge's own request handling (`prepare()`, pure, milliseconds). A row expects "ok" (its path names
mat.tres, a material inside the project), "not_found" (a file that is not there; saving there is ok),
or an error code; where the two uses differ on purpose, its `value_code` says so and `why` says why.
The same rows through the engine's confine() and whole requests: tests/engine/test_path_table.py."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gdres.requests.request import Job, Roots, prepare

OK, MISSING, INVALID, OUTSIDE = "ok", "not_found", "invalid_path", "path_outside_project"


@dataclass(frozen=True)
class Row:
    path: str
    code: str
    why: str
    value_code: str | None = None
    """The code of the value uses, where it differs on purpose from `code`."""
    resolved_by_bridge: bool = False
    """A uid: the bridge looks for its file before the engine, so "not_found" is its to say, for a save too."""


ROWS = [
    # Inside the project, however written.
    Row("mat.tres", OK, "a plain relative path"),
    Row("res://mat.tres", OK, "res:// means the project"),
    Row("./mat.tres", OK, "a dot segment"),
    Row("sub/../mat.tres", OK, "'..' that stays inside, through a folder that does not exist"),
    Row(".godot/../mat.tres", OK, "'..' out of .godot/ before anything there is opened"),
    Row("mat.tres/", OK, "a trailing slash goes when the path is normalised"),
    Row("in_link.tres", OK, "a link to a file inside"),
    Row("self/mat.tres", OK, "through a link to the project folder itself"),
    Row("..mat.tres", MISSING, "a name that starts with two dots is a name, not '..'"),
    Row("MAT.TRES", MISSING, "another case of mat.tres: another file here, where names tell case apart "
        "(tests/engine/test_casefold.py shows it opens mat.tres where they do not)"),
    Row("console.tres", MISSING, "a name that only starts like a Windows device (CON)"),
    Row("mat~1.tres", MISSING, "a tilde and a digit, but no short name: the extension is longer than three"),
    Row(" mat.tres", MISSING, "a leading space is part of a name, on Windows too"),
    # Empty, or the project folder.
    Row("", INVALID, "empty"),
    Row("   ", INVALID, "blanks only"),
    Row("\u00a0", INVALID, "blanks only (a no-break space, which Python's strip() removes too)"),
    Row("res://", INVALID, "the project folder"),
    Row(".", INVALID, "the project folder"),
    Row("sub/..", INVALID, "the project folder, once normalised"),
    # Not relative to the project.
    Row("/tmp/mat.tres", INVALID, "absolute"),
    Row("res:///tmp/mat.tres", INVALID, "absolute after res://"),
    Row("//mat.tres", INVALID, "absolute (two slashes)"),
    Row("\\mat.tres", INVALID, "absolute, written the Windows way"),
    Row("C:/mat.tres", INVALID, "a drive letter"),
    Row("C:\\mat.tres", INVALID, "a drive letter and a backslash"),
    Row("C:mat.tres", INVALID, "a drive-relative path"),
    Row("ab:/mat.tres", INVALID, "Godot reads a name before ':/' as a drive (is_absolute_path() is true)"),
    Row("user://mat.tres", INVALID, "another scheme"),
    Row("file:///tmp/mat.tres", INVALID, "another scheme"),
    Row("uid://b1234567", MISSING, "a uid no file of the project claims (the bridge resolves a member's uid "
        "from the project's files: it finds none, for a save too); a value takes paths only",
        value_code=INVALID, resolved_by_bridge=True),
    Row("RES://mat.tres", INVALID, "the scheme is lower case"),
    Row("res://res://mat.tres", INVALID, "a scheme after res://"),
    Row("//server/share/mat.tres", INVALID, "a Windows network share (UNC)"),
    Row("\\\\server\\share\\mat.tres", INVALID, "a Windows network share, with backslashes"),
    Row("\\\\?\\C:\\mat.tres", INVALID, "a Windows long path (\\\\?\\)"),
    Row("//?/C:/mat.tres", INVALID, "a Windows long path, with slashes"),
    Row("\\\\.\\C:\\mat.tres", INVALID, "a Windows device path (\\\\.\\)"),
    Row("//./NUL", INVALID, "a Windows device path, with slashes"),
    # Backslashes: the engine's FileAccess reads them as slashes.
    Row("sub\\mat.tres", INVALID, "a backslash"),
    Row("sub\\..\\mat.tres", INVALID, "'..' between backslashes"),
    Row("..\\outside\\secret.tres", INVALID, "'..' between backslashes, leading out"),
    # Leading out.
    Row("..", OUTSIDE, "the parent folder"),
    Row("../outside/secret.tres", OUTSIDE, "'..'"),
    Row("res://../outside/secret.tres", OUTSIDE, "'..' after res://"),
    Row("sub/../../outside/secret.tres", OUTSIDE, "'..' past the root"),
    Row("out_link.tres", OUTSIDE, "a link to a file outside"),
    Row("out_dir/secret.tres", OUTSIDE, "through a link to a folder outside"),
    Row("loop.tres", OUTSIDE, "a loop of links resolves to nothing inside"),
    # The engine's own files.
    Row("project.godot", INVALID, "the project file"),
    Row(".godot", INVALID, "the engine's folder"),
    Row(".godot/x.tres", INVALID, "inside .godot/"),
    Row("res://.godot/x.tres", INVALID, "inside .godot/, after res://"),
    Row("sub/../.godot/x.tres", INVALID, "inside .godot/ once normalised"),
    Row("godot_link.tres", INVALID, "a link to a file in .godot/"),
    Row("godot_dir/x.tres", INVALID, "through a relative link to .godot/"),
    Row("godot_abs/x.tres", INVALID, "through an absolute link to .godot/"),
    Row("self/.godot/x.tres", INVALID, "into .godot/ through a link to the project folder"),
    Row("project_link.tres", INVALID, "a link to project.godot"),
    # The engine's own files on a file system that ignores case (macOS and Windows by default): refused
    # in any case everywhere, so that no project means one thing on one system and another elsewhere.
    Row(".GODOT/x.tres", INVALID, "inside .godot/, in capitals"),
    Row("res://.Godot/x.tres", INVALID, "inside .godot/, capitalised"),
    Row(".Godot/imported/..", INVALID, "the engine's folder once normalised, capitalised"),
    Row("sub/../.gODot/x.tres", INVALID, "inside .godot/ once normalised, in mixed case"),
    Row("self/.GODOT/x.tres", INVALID, "into .godot/ in capitals, through a link to the project folder"),
    Row("Project.Godot", INVALID, "the project file, capitalised"),
    Row("PROJECT.GODOT", INVALID, "the project file, in capitals"),
    Row("MATS/../..", OUTSIDE, "'..' past the root, in a folder in capitals"),
    # Names that Windows reads as another file or cannot hold: refused on every system, as a project
    # is shared through git with people on Windows.
    Row("ab:c.tres", INVALID, "a colon: Windows allows none in a name"),
    Row("mat.tres:stream", INVALID, "an NTFS stream of mat.tres"),
    Row(".godot::$INDEX_ALLOCATION/x.tres", INVALID, "NTFS's name for the .godot folder itself"),
    Row("a<b.tres", INVALID, "'<', which Windows forbids"),
    Row("a>b.tres", INVALID, "'>', which Windows forbids"),
    Row("a|b.tres", INVALID, "'|', which Windows forbids"),
    Row("a?b.tres", INVALID, "'?', which Windows forbids"),
    Row("a*b.tres", INVALID, "'*', which Windows forbids"),
    Row("CON.tres", INVALID, "a Windows device name, with an extension"),
    Row("nul", INVALID, "a Windows device name, in lower case"),
    Row("Aux.material.tres", INVALID, "a Windows device name before the first of two dots"),
    Row("NUL .tres", INVALID, "a Windows device name, a space, an extension"),
    Row("com1.tres", INVALID, "a Windows serial port"),
    Row("COM0.tres", INVALID, "a Windows serial port (the engine's own list has COM0)"),
    Row("lpt9/x.tres", INVALID, "a Windows printer port as a folder"),
    Row("LPT\u00b9.tres", INVALID, "a Windows printer port, with a superscript digit"),
    Row("CONOUT$.tres", INVALID, "the Windows console"),
    Row("mat.tres.", INVALID, "a trailing dot, which Windows drops: mat.tres there"),
    Row("mat.tres ", INVALID, "a trailing space, which Windows drops: mat.tres there"),
    Row("sub./mat.tres", INVALID, "a folder with a trailing dot"),
    Row("sub /mat.tres", INVALID, "a folder with a trailing space"),
    Row(".../mat.tres", INVALID, "three dots: a name on Linux, dropped to nothing on Windows"),
    Row("GODOT~1/x.tres", INVALID, "a Windows short name: .godot's, where 8.3 names are on"),
    Row("PROJEC~1.GOD", INVALID, "a Windows short name: project.godot's"),
    Row(".go\u200cdot/x.tres", INVALID, "an invisible character that macOS leaves out: .godot there"),
    Row("\ufeffmat.tres", INVALID, "a byte order mark, which macOS leaves out of names"),
    # Characters that no path in a resource file can hold: files quote paths without escaping them.
    Row('a"b.tres', INVALID, "a quote"),
    Row("a\nb.tres", INVALID, "a line break"),
    Row("a\tb.tres", INVALID, "a tab"),
    Row("a\x7fb.tres", INVALID, "DEL"),
    Row("a\0b.tres", INVALID, "NUL; in a value, invalid_value: the bridge refuses a NUL in any property value "
        "before it looks at what the value means (gdres/front/api.py check_input), as no Godot string holds one",
        value_code="invalid_value"),
    # Longer than the system allows.
    Row("x" * 256 + ".tres", INVALID, "a name over 255 bytes"),
    Row("a/" * 2100 + "x.tres", INVALID, "a path over 4096 characters"),
    # A value may name a sub-resource embedded in a file; a request member names a file.
    Row("mat.tres::1", INVALID, "a member must end in .tres; a value may name a sub-resource in a file (this "
        "one has none)", value_code=MISSING),
]


Use = Callable[[str], dict[str, Any]]


MEMBER_USES: dict[str, Use] = {
    "resource_read.resource_path": lambda p: {"op": "resource_read", "resource_path": p},
    "resource_duplicate.source_path": lambda p: {"op": "resource_duplicate", "source_path": p,
                                                 "dest_path": "copy.tres"},
    "material_create.resource_path": lambda p: {"op": "material_create", "material_type": "StandardMaterial3D",
                                                "resource_path": p},
}


VALUE_USES: dict[str, Use] = {
    "material_create.properties": lambda p: {
        "op": "material_create", "material_type": "StandardMaterial3D", "resource_path": "made.tres",
        "properties": {"next_pass": p}},
    "resource_create.properties": lambda p: {
        "op": "resource_create", "resource_type": "StandardMaterial3D", "resource_path": "made.tres",
        "properties": {"next_pass": {"type": "StandardMaterial3D", "properties": {"next_pass": p}}}},
    "resource_duplicate.property_overrides": lambda p: {
        "op": "resource_duplicate", "source_path": "other.tres", "dest_path": "copy.tres",
        "property_overrides": {"next_pass": p}},
    "resource_update.properties": lambda p: {
        "op": "resource_update", "resource_path": "other.tres", "properties": {"next_pass": p}},
}


def state(base: Path) -> dict[str, bytes | str]:
    """Every file under `base` (its bytes), link (its target) and folder, links not followed."""
    found: dict[str, bytes | str] = {}
    for folder, dirs, files in os.walk(base):
        for name in dirs + files:
            path = Path(folder, name)
            if path.is_symlink():
                found[str(path)] = "link to " + os.readlink(path)
            elif path.is_dir():
                found[str(path)] = "folder"
            else:
                found[str(path)] = path.read_bytes()
    return found


def prepared(project: Path, request: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
    """What the bridge makes of `request` before any engine: "ok" (a Job for the engine), or the
    code of its error reply and the reply."""
    outcome = prepare({**request, "project_path": str(project)}, Roots(None))
    return ("ok", None) if isinstance(outcome, Job) else (outcome["error"]["code"], outcome)


def member_code(row: Row, op: str) -> str:
    saved = row.code == MISSING and op == "material_create" and not row.resolved_by_bridge
    return OK if saved else row.code  # a save makes the file


def before_the_engine(code: str, row: Row | None = None) -> str:
    return OK if code == MISSING and not (row and row.resolved_by_bridge) else code


@pytest.mark.parametrize("use", list(MEMBER_USES))
@pytest.mark.parametrize("row", ROWS, ids=lambda row: repr(row.path[:40]))
def test_as_a_request_member_before_the_engine(walled: Path, row: Row, use: str) -> None:
    op, field = use.split(".")
    before = state(walled.parent)
    code, reply = prepared(walled, MEMBER_USES[use](row.path))
    assert code == before_the_engine(member_code(row, op), row), (row.why, reply)
    if reply is not None:
        assert reply[field] == row.path
        assert reply["error"]["field"] == field
    assert state(walled.parent) == before


@pytest.mark.parametrize("use", list(VALUE_USES))
@pytest.mark.parametrize("row", ROWS, ids=lambda row: repr(row.path[:40]))
def test_as_a_property_value_before_the_engine(walled: Path, row: Row, use: str) -> None:
    code, reply = prepared(walled, VALUE_USES[use](row.path))
    # The bridge refuses only what no property value may hold; the path itself is the engine's.
    assert code in (OK, row.value_code or row.code), (row.why, reply)
