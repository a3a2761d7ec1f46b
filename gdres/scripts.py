"""Where the engine side's scripts are (gdscript/), and the data the front end shares with them."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any


def gdscript_dir() -> Path:
    """Return the folder of the engine-side scripts: inside the installed package, or the repo's."""
    package = Path(__file__).resolve().parent
    installed = package / "gdscript"
    return installed if installed.is_dir() else package.parent / "gdscript"


@functools.cache
def godot3_names() -> dict[str, Any]:
    """The Godot 3 class and property names Godot 4 renamed (gdscript/values/godot3_names.json,
    which the engine side suggests from too): {"classes": {old: new}, "properties": {old: [new, how]}}."""
    table: dict[str, Any] = json.loads((gdscript_dir() / "values" / "godot3_names.json").read_text(encoding="utf-8"))
    return table
