"""Where the engine side's scripts are (gdscript/), and the data the front end shares with them."""

from __future__ import annotations

import functools
import json
import os

# Types only: pathlib and typing cost a warm `run` (front/warm.py, whose client checks paths by
# path_rules()) ~8 ms. Type checkers take any TYPE_CHECKING as True.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any


def _folder() -> str:
    """The folder of the engine-side scripts: inside the installed package, or the repo's."""
    package = os.path.dirname(os.path.realpath(__file__))
    installed = os.path.join(package, "gdscript")
    return installed if os.path.isdir(installed) else os.path.join(os.path.dirname(package), "gdscript")


def gdscript_dir() -> Path:
    """Return the folder of the engine-side scripts: inside the installed package, or the repo's."""
    from pathlib import Path

    return Path(_folder())


def _table(relative: str) -> dict[str, Any]:
    with open(os.path.join(_folder(), relative), encoding="utf-8") as file:
        table: dict[str, Any] = json.load(file)
    return table


@functools.cache
def path_rules() -> dict[str, Any]:
    """How a path naming a project file must be written (gdscript/safety/path_rules.json, which the
    engine side checks the paths in values by): see its "about"."""
    return _table("safety/path_rules.json")


@functools.cache
def temp_name() -> str:
    """The template of an engine's temp file's name (gdscript/files/temp_name.json, which the engine
    side names them by): {file}, {pid}, {n} and {ext}."""
    template: str = _table("files/temp_name.json")["template"]
    return template


@functools.cache
def godot3_names() -> dict[str, Any]:
    """The Godot 3 class and property names Godot 4 renamed (gdscript/values/godot3_names.json,
    which the engine side suggests from too): {"classes": {old: new}, "properties": {old: [new, how]}}."""
    return _table("values/godot3_names.json")
