"""One table of paths, each run as a request member and as a property value that names a file.

Request members are confined in Python (gdres/requests/paths.py) before a request reaches the
engine; property values that name a file are confined in the engine (gdscript/safety/paths.gd). Both
must refuse the same paths with the same codes: three request members (read, copy from, save to) and
four value uses (a property of a new material, of a resource embedded in a new resource, a
duplicate's override, an update). A row expects "ok" (its path names mat.tres, a material inside the
project), "not_found" (a file that is not there; saving there is ok), or an error code. Where the
two uses differ on purpose, the row's `value_code` says so and `why` says why.

Three tiers hold the table. Every row and use goes through the bridge's own request handling
(`prepare()`, pure: unit tier, milliseconds); every row's path goes through the engine's confine()
in one engine process (tests/gdscript/paths_check.gd); and a sample of whole requests runs through
a real engine end to end: every row once (the uses taking turns), and each use with every code it
can give. Whether a file is there is the engine's to say, so "not_found" rows pass the first two.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import engine_confine
from gdres import Bridge
from gdres.errors import InvalidPath, PathOutsideProject
from gdres.requests import paths
from gdres.scripts import path_rules
from unit.test_path_table import (
    INVALID,
    MEMBER_USES,
    OK,
    ROWS,
    VALUE_USES,
    Row,
    before_the_engine,
    member_code,
    prepared,
    state,
)


@pytest.fixture(scope="module")
def bridge(godot_bin: str) -> Iterator[Bridge]:
    # A short deadline: a path the engine mishandles must not stall the table for a minute.
    with Bridge(godot_bin, timeout=10) as b:
        yield b


def forget_new_files(project: Path, before: dict[str, bytes | str]) -> None:
    """Remove what was made under `project` since `before` (a state()): files and links, then folders."""
    made = sorted(set(state(project)) - set(before), key=len, reverse=True)
    for name in made:
        path = Path(name)
        if path.is_dir() and not path.is_symlink():
            path.rmdir()
        else:
            path.unlink()


def run(bridge: Bridge, project: Path, request: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Serve `request` in `project`; return its code ("ok" or the error's) and the reply. A refused
    request must have changed no file, inside the project or beside it."""
    before = state(project.parent)
    reply = bridge.run({**request, "project_path": str(project)})
    code = "ok" if reply["result"] == "ok" else reply["error"]["code"]
    if code != "ok":
        assert state(project.parent) == before, "a refused request changed files"
        assert "SECRET-OUTSIDE" not in str(reply) and "SECRET-IN-DOT-GODOT" not in str(reply)
    return code, reply


USES = {**MEMBER_USES, **VALUE_USES}


def sample() -> list[tuple[Row, str]]:
    """Every row once, the uses taking turns, and for each use the first row of each code it gives."""
    chosen = {(row, list(USES)[number % len(USES)]) for number, row in enumerate(ROWS)}
    for use in USES:
        seen: set[str] = set()
        for row in ROWS:
            code = member_code(row, use.split(".")[0]) if use in MEMBER_USES else row.value_code or row.code
            if code not in seen:
                seen.add(code)
                chosen.add((row, use))
    return sorted(chosen, key=lambda pair: (ROWS.index(pair[0]), pair[1]))


def test_the_engine_confines_every_row_as_the_table_says(walled: Path, godot_bin: str, tmp_path: Path) -> None:
    ahead = [row for row in ROWS if prepared(walled, VALUE_USES["material_create.properties"](row.path))[0] == OK]
    # A value names a file, and maybe a sub-resource in it after "::", which is not part of the path
    # (gdscript/values/codec.gd from_value() confines what comes before it).
    answers = engine_confine(godot_bin, walled, [row.path.split("::")[0] for row in ahead], tmp_path)
    wrong = [(row.path[:60], row.why, answer["code"]) for row, answer in zip(ahead, answers, strict=True)
             if answer["code"] != before_the_engine(row.value_code or row.code)]
    assert wrong == []


def test_both_sides_refuse_by_each_rule_of_one_table(walled: Path, godot_bin: str, tmp_path: Path) -> None:
    """The rules live in gdscript/safety/path_rules.json, which both sides read: for each, a row of
    the table that it refuses is refused with its reason by the bridge and by the engine alike."""
    rules = path_rules()["path"] + path_rules()["name"]
    chosen: list[tuple[str, Row]] = []
    for rule in rules:
        reason = rule["why"].split("{")[0]
        for row in ROWS:
            try:
                paths.normalise(row.path, field="value")
            except (InvalidPath, PathOutsideProject) as refused:
                if reason in refused.message:
                    chosen.append((reason, row))
                    break
    assert len(chosen) == len(rules), [rule["why"] for rule in rules]
    answers = engine_confine(godot_bin, walled, [row.path for _, row in chosen], tmp_path)
    assert [reason in answer["message"] for (reason, _), answer in zip(chosen, answers, strict=True)] == \
        [True] * len(rules), answers


@pytest.mark.parametrize(("row", "use"), sample(), ids=lambda value: repr(value.path[:40]) if isinstance(value, Row)
                         else value)
def test_through_the_engine(bridge: Bridge, walled: Path, row: Row, use: str) -> None:
    op, field = use.split(".")
    before = state(walled)
    try:
        code, reply = run(bridge, walled, USES[use](row.path))
    finally:
        forget_new_files(walled, before)  # a save made here must not answer a later row's read
    if use in MEMBER_USES:
        assert code == member_code(row, op), (row.why, reply)
        assert reply[field] == row.path
    else:
        assert code == (row.value_code or row.code), (row.why, reply)
    if code != OK:
        assert reply["error"]["field"] == field


def test_a_save_under_a_name_godot_reads_as_a_drive_answers(bridge: Bridge, walled: Path) -> None:
    # Godot's get_base_dir() never climbs above "ab:/": finding the folders to make once looped
    # until the deadline. Python lets this path through today (see the row above); either answer
    # is fine, a timeout is not.
    before = state(walled)
    try:
        code, reply = run(bridge, walled, MEMBER_USES["material_create.resource_path"]("ab:/new.tres"))
    finally:
        forget_new_files(walled, before)
    assert code in (OK, INVALID), reply
