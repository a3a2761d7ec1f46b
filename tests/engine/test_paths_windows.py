"""Paths on every file system, in the engine: each row of tests/unit/test_paths_windows.py's table gets
the same code from the engine's confine() (gdscript/safety/paths.gd) in an empty project, where
nothing a row names exists, so only how it is written counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import engine_confine
from unit.test_paths_windows import TABLE


@pytest.mark.engine
def test_the_engine_answers_each_form_alike(godot_bin: str, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "project.godot").write_text("config_version=5\n")
    answers = engine_confine(godot_bin, project, [path for path, _, _ in TABLE], tmp_path)
    wrong = [(path, why, answer["code"]) for (path, code, why), answer in zip(TABLE, answers, strict=True)
             if answer["code"] != code]
    assert not wrong
