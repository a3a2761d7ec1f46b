"""A finding of the second attacker's pass that needs no engine: a link vanishing while it is checked (the
others, against the real engine: tests/engine/test_attacks.py)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from gdres.errors import BridgeError
from gdres.requests import paths


def new_project(tmp_path: Path, name: str = "project") -> Path:
    project = tmp_path / name
    project.mkdir()
    (project / "project.godot").write_text("config_version=5\n")
    return project


def test_a_link_vanishing_while_it_is_checked_is_an_error_not_a_crash(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    project = new_project(tmp_path)
    (project / "d").symlink_to(project)
    root = paths.project_root(str(project))

    def vanished(*args: Any, **kwargs: Any) -> str:
        raise FileNotFoundError(2, "No such file or directory")

    # lstat saw a link; by the time it is read, it is gone (os.path.realpath lets that escape).
    monkeypatch.setattr(os, "readlink", vanished)
    with pytest.raises(BridgeError) as raised:
        paths.resolve(root, "d/x.tres", field="resource_path", suffixes=(".tres",))
    assert raised.value.field == "resource_path"
