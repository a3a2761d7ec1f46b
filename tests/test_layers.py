"""The package's import graph points one way: cli/mcp → api → pool → request → worker, with the
leaf modules (errors, paths, models, engine, ...) below. Read from the source, imports inside
functions included, so no later edit can slip an upward arrow in. The engine side's preloads form
no cycle either."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "bridge"

LAYERS = {
    "errors": 0, "frames": 0, "version": 0, "discovery": 0, "platform": 0, "wall": 0, "replies": 0,
    "paths": 1, "engine": 1, "process": 1, "models": 1,
    "locks": 2, "imports": 3, "worker": 2,
    "request": 4,
    "pool": 5,
    "api": 6,
    "mcp": 7,
    "cli": 8,
    "__init__": 9, "__main__": 9,
}
"""A module may import only modules of a lower layer."""


def imports_of(module: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(module.read_text(), str(module))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                found.add(node.module.split(".")[0])
            else:
                # `from . import name`: a module, or else something the package itself defines.
                found.update(alias.name if alias.name in LAYERS else "__init__" for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("bridge."):
            found.add(node.module.split(".")[1])
    return found


def test_every_module_has_a_layer() -> None:
    assert {path.stem for path in PACKAGE.glob("*.py")} == set(LAYERS)


def test_no_import_points_up_or_sideways() -> None:
    upward = [
        f"{module.stem} ({LAYERS[module.stem]}) imports {name} ({LAYERS[name]})"
        for module in sorted(PACKAGE.glob("*.py"))
        for name in sorted(imports_of(module))
        if LAYERS[name] >= LAYERS[module.stem]
    ]
    assert upward == []


def test_preloads_form_no_cycle() -> None:
    graph: dict[Path, list[Path]] = {}
    for script in (PACKAGE.parent / "gdscript").rglob("*.gd"):
        graph[script.resolve()] = [(script.parent / target).resolve()
                                   for target in re.findall(r'preload\("([^"]+\.gd)"\)', script.read_text())]
    done: set[Path] = set()

    def visit(script: Path, path: list[Path]) -> None:
        if script in path:
            cycle = [*path[path.index(script):], script]
            pytest.fail("preload cycle: " + " -> ".join(str(p.relative_to(PACKAGE.parent)) for p in cycle))
        if script in done:
            return
        for target in graph.get(script, []):
            visit(target, [*path, script])
        done.add(script)

    for script in graph:
        visit(script, [])
