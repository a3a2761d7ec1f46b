"""The per-file locks alone: how many lock files rewriting many files leaves, and which files share one
(two processes on one project, against the real engine: tests/engine/test_concurrency.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gdres.serving import locks
from gdres.serving.locks import lock_dir


def test_the_lock_files_stay_few_however_many_files_were_rewritten(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # One lock file per file ever edited in place grew the cache without end: 5,000 files updated,
    # 5,000 lock files kept.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for n in range(5000):
        locks.try_hold([tmp_path / f"m{n}.tres"]).release()
    assert len(list(lock_dir().iterdir())) <= 16**3


def _sharing_a_lock(folder: Path) -> tuple[Path, Path]:
    """Two files of `folder` (a real path, as the bridge finds it) whose rewrites take the same lock file."""
    assert os.path.realpath(folder) == str(folder)
    seen: dict[Path, Path] = {}
    for n in range(100_000):
        target = folder / f"m{n}.tres"
        first = seen.setdefault(locks.lock_file(target), target)
        if first != target:
            return first, target
    raise AssertionError("no two files share a lock")


def test_files_sharing_a_lock_are_locked_together_and_apart(tmp_path: Path) -> None:
    a, b = _sharing_a_lock(tmp_path)
    both = locks.try_hold([a, b])
    with pytest.raises(locks.Busy):
        locks.try_hold([b])
    both.release()
    locks.try_hold([b]).release()
