"""The bridge's settings that more than one layer reads, in one place: the defaults of a Bridge and
of the command line, how a batch is spread over processes, and the bridge's cache folder. Light:
the command line reads it before anything else is imported."""

from __future__ import annotations

import os

DEFAULT_TIMEOUT = 60.0
"""Seconds one request may take before its engine is killed and replaced."""
START_TIMEOUT = 30.0
"""Seconds an engine may take to become ready."""
MAX_REQUESTS = 10_000
"""A worker is replaced after this many requests (memory the engine never gives back)."""
MAX_RSS = 512 << 20
"""A worker is replaced once its resident memory passes this many bytes (idle: ~130 MB; a 30 MB
request leaves it at ~380 MB, memory the engine keeps)."""
ENGINES_PER_PROCESS = 4
"""Engines one bridge process keeps busy: its Python work on a request (~0.15-0.3 ms of CPU) is a
quarter to a fifth of an engine's (~1-1.5 ms). A batch on more spreads over several processes
(gdres/serving/fleet.py)."""


def default_processes(jobs: int) -> int:
    """How many bridge processes serve a batch of `jobs` engines unless told."""
    return -(-jobs // ENGINES_PER_PROCESS)


def cache_dir(*, real: bool = True) -> str:
    """Return the bridge's own cache folder: $XDG_CACHE_HOME (or ~/.cache)/gdres, as its real path
    (`real`) or as the environment spells it.

    A relative XDG_CACHE_HOME is ignored, as the XDG Base Directory specification asks: taken against
    the current folder, an atomic batch's journal written from one folder would not be found by the
    next command, run from another, to undo it. The real path, because the engine is handed files of
    the cache (its settings pack) once it works in the project's folder: a path through a link, or a
    relative HOME, would lead it elsewhere than the file checked here (a red-team read led it to a
    pack the project shipped, through a link to /proc/self/cwd).
    """
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    folder = os.path.join(base, "gdres")
    return os.path.realpath(folder) if real else os.path.abspath(folder)
