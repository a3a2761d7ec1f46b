"""The import's deadlines and interrupts, with a stand-in editor (imports against the real engine:
tests/engine/test_imports.py)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import psutil
import pytest

from conftest import (
    cmdline,
)
from gdres.engine.godot import Engine
from gdres.serving import imports, locks


def test_an_import_past_its_deadline_is_ended_and_says_so(tmp_path: Path) -> None:
    # A stand-in editor (only the transport is under test): it starts importing, then hangs.
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nprintf '[   0%% ] reimport | Started (Re)Importing Assets (2 steps)\\n"
                      "[   0%% ] reimport | a.png\\n'\nexec sleep 60\n")
    editor.chmod(0o755)
    told: list[tuple[int, int]] = []
    started = time.monotonic()
    failure = imports._run_import(Engine(str(editor), "4.6.3.stable"), tmp_path, started + 1.0,
                                  lambda done, total: told.append((done, total)))
    assert failure == "the engine's import ran past the deadline"
    assert time.monotonic() - started < 10
    assert told == [(1, 2)]


def test_an_import_waiting_for_another_import_past_its_deadline_says_so(project: Path) -> None:
    # The import lock's wait ended with the message of a rewrite's lock: "... stayed locked by
    # another gdres request (one rewriting it, or a file that shares its lock file)".
    root = project.resolve()
    other = locks.hold_import(root, time.monotonic() + 5)  # as another process importing it would
    try:
        outcome = imports.import_project(Engine("/nonexistent/godot", "4.6.3.stable"), root, project / "none.pck",
                                         0.2, imports.stamp(root), lambda assets: None, lambda done, total: None)
    finally:
        other.release()
    assert outcome.failure == (f"another gdres process importing {root} held the import lock until the "
                               "deadline passed")


def test_an_interrupt_as_the_import_starts_leaves_no_thread_to_wait_for_and_no_engine(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: a Ctrl-C landing between the deadline timer's start and the block that cancels it left
    # the timer, a thread the interpreter waits for at exit, running until the import's deadline
    # (15 minutes), and the import's engine with it: `ctrl_c_during_an_import[the bridge alone]`
    # failed so in 2 of 5 full suites, the command still there 30 s after the Ctrl-C.
    engine = tmp_path / "godot"
    engine.write_text("#!/bin/sh\nexec sleep 60\n")
    engine.chmod(0o755)
    timers: list[threading.Timer] = []

    class InterruptedAtStart(threading.Timer):
        def start(self) -> None:
            super().start()
            timers.append(self)
            raise KeyboardInterrupt

    monkeypatch.setattr("threading.Timer", InterruptedAtStart)
    with pytest.raises(KeyboardInterrupt):
        imports._run_import(Engine(str(engine), "4.6.3.stable"), tmp_path, time.monotonic() + 900,
                            lambda done, total: None)
    (timer,) = timers
    timer.join(2)
    assert not timer.is_alive() or timer.daemon
    assert not [p for p in psutil.Process().children(recursive=True) if "sleep" in cmdline(p)]
