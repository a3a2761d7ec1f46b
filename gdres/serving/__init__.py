"""Serving requests: warm engines per project and replies in order (pool.py), the import of a
project's assets (imports.py), and the per-file locks of writes (locks.py).

This package is also the one door from front/ to everything below it: front/ imports what it needs
from here (`serving.Pool`, `serving.survey()`), never from serving's modules or from engine/
(tests/unit/test_layers.py holds it to that). Each name loads its module on first use, so the command
line pays for no module it does not use.
"""

import importlib
import logging

TYPE_CHECKING = False
if TYPE_CHECKING:  # what a type checker sees of the door: each name as its module has it
    from gdres.engine.godot import compile_scripts as compile_scripts
    from gdres.engine.godot import survey as survey
    from gdres.engine.worker import Worker as Worker
    from gdres.serving.fleet import Fleet as Fleet
    from gdres.serving.fleet import part_argv as part_argv
    from gdres.serving.fleet import shares as shares
    from gdres.serving.pool import Pool as Pool
    from gdres.serving.pool import on_interrupt as on_interrupt
    from gdres.serving.shards import parse_shard as parse_shard
    from gdres.serving.shards import shard_lines as shard_lines
    from gdres.serving.starter import ImportShown as ImportShown
    from gdres.serving.starter import LoggedImport as LoggedImport
    from gdres.serving.starter import Settings as Settings
    from gdres.serving.starter import check_engine as check_engine
    from gdres.serving.starter import import_everything as import_everything
    from gdres.serving.starter import wall_status as wall_status

_DOOR = {
    "gdres.engine.godot": ("compile_scripts", "survey"),
    "gdres.engine.worker": ("Worker",),
    "gdres.serving.fleet": ("Fleet", "part_argv", "shares"),
    "gdres.serving.pool": ("Pool", "on_interrupt"),
    "gdres.serving.shards": ("parse_shard", "shard_lines"),
    "gdres.serving.starter": ("ImportShown", "LoggedImport", "Settings", "check_engine", "import_everything",
                              "wall_status"),
}
"""Each module the door opens onto, and the names it lets through from it."""
_HOME = {name: module for module, names in _DOOR.items() for name in names}
NAMES = tuple(_HOME)
"""Every name of the door."""


def __getattr__(name: str) -> object:
    if name not in _HOME:
        raise AttributeError(f"module 'gdres.serving' has no attribute {name!r}")
    return getattr(importlib.import_module(_HOME[name]), name)


# A library stays quiet unless its user configures logging; the command line shows these on stderr.
logging.getLogger("gdres").addHandler(logging.NullHandler())
