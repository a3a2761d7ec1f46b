"""The code passes its own checks, each run from this venv as CI runs it: mypy --strict and ruff
(configured in pyproject.toml), gdlint and gdformat over every folder that holds GDScript."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import REPO

# The top-level folders with GDScript in them (today gdscript/ and tests/), so a new one is checked too.
GDSCRIPT_FOLDERS = sorted({path.relative_to(REPO).parts[0] for top in REPO.iterdir()
                           if top.is_dir() and not top.name.startswith(".") for path in top.rglob("*.gd")})


def check(*argv: str, timeout: float = 100) -> None:
    """Run `python -m ARGV` in the repository root; fail with its output unless it exits 0."""
    done = subprocess.run([sys.executable, "-m", *argv], cwd=REPO, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        pytest.fail(f"{' '.join(argv)} exited {done.returncode}:\n{done.stdout}{done.stderr}", pytrace=False)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_mypy_strict_is_clean() -> None:
    check("mypy", timeout=280)  # gdres, tests and scripts: the files named in [tool.mypy]


def test_ruff_is_clean() -> None:
    check("ruff", "check", "--output-format", "concise", "gdres", "tests", "scripts")


def test_gdlint_is_clean() -> None:
    check("gdtoolkit.linter", *GDSCRIPT_FOLDERS)


def test_gdformat_would_change_nothing() -> None:
    check("gdtoolkit.formatter", "--check", *GDSCRIPT_FOLDERS)
