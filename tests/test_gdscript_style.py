"""Every GDScript file (the engine side, and those under tests/) passes gdlint and gdformat --check,
and the engine side's preloads form no cycle.

The settings are gdlintrc and gdformatrc at the repository root (gdtoolkit 4.5); both tools find
them from the working folder, so they run from there.
"""

from __future__ import annotations

import re
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


def test_preloads_form_no_cycle() -> None:
    graph: dict[Path, list[Path]] = {}
    for script in (REPO / "gdscript").rglob("*.gd"):
        graph[script.resolve()] = [(script.parent / target).resolve()
                                   for target in re.findall(r'preload\("([^"]+\.gd)"\)', script.read_text())]
    done: set[Path] = set()

    def visit(script: Path, path: list[Path]) -> None:
        if script in path:
            cycle = path[path.index(script):] + [script]
            pytest.fail("preload cycle: " + " -> ".join(str(p.relative_to(REPO)) for p in cycle))
        if script in done:
            return
        for target in graph.get(script, []):
            visit(target, [*path, script])
        done.add(script)

    for script in graph:
        visit(script, [])
