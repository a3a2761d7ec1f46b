"""`gdres batch`'s options, before any engine starts (the batch itself: tests/engine/test_batch.py)."""

from __future__ import annotations

import os

from conftest import run_cli


def test_jobs_must_be_positive() -> None:
    done = run_cli("batch", "--jobs", "0", input="")
    assert done.returncode == 2 and "--jobs" in done.stderr and done.stdout == ""


def test_jobs_defaults_to_the_number_of_cores() -> None:
    done = run_cli("batch", "--help")
    assert f"the number of cores, {len(os.sched_getaffinity(0))}" in " ".join(done.stdout.split())
