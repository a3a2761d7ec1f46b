"""Every GDScript file (the engine side, and those under tests/) passes gdlint and gdformat --check.

The settings are gdlintrc and gdformatrc at the repository root (gdtoolkit 4.5); both tools find
them from the working folder, so they run from there.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).parent.parent


def scripts() -> list[str]:
    return sorted(str(path.relative_to(REPO)) for folder in ("gdscript", "tests") for path in (REPO / folder).rglob("*.gd"))


def tool(name: str) -> str:
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.is_file() else shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is missing: install gdtoolkit 4.5 (pip install 'gdtoolkit>=4.5,<4.6')")
    return found


@pytest.mark.parametrize("command", [["gdlint"], ["gdformat", "--check"]], ids=["gdlint", "gdformat"])
def test_gdscript_passes(command: list[str]) -> None:
    files = scripts()
    assert "gdscript/main.gd" in files and "tests/gdscript/text_format_check.gd" in files
    done = subprocess.run([tool(command[0]), *command[1:], *files], cwd=REPO, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
