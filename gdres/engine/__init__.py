"""One Godot: finding it (discovery.py, godot.py), starting it behind the wall (wall.py, process.py,
platform.py), and talking to it (worker.py, frames.py). Here: what the command line needs before
any of them (they cost ~0.06 s to import, a warm `run` ~0.03 s in all)."""

from __future__ import annotations

import os

DEFAULT_TIMEOUT = 60.0
"""Seconds one request may take before its engine is killed and replaced."""
ENGINES_PER_PROCESS = 4
"""Engines one bridge process keeps busy: its Python work on a request (~0.15-0.3 ms of CPU) is a
quarter to a fifth of an engine's (~1-1.5 ms). A batch on more spreads over several processes
(gdres/serving/fleet.py)."""


def default_processes(jobs: int) -> int:
    """How many bridge processes serve a batch of `jobs` engines unless told."""
    return -(-jobs // ENGINES_PER_PROCESS)


def cache_dir() -> str:
    """Return the bridge's own cache folder: $XDG_CACHE_HOME (or ~/.cache)/gdres.

    A relative XDG_CACHE_HOME is ignored, as the XDG Base Directory specification asks: taken against
    the current folder, an atomic batch's journal written from one folder would not be found by the
    next command, run from another, to undo it.
    """
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "gdres")
