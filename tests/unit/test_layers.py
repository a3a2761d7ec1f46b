"""The package's import graph points one way, and its folders draw it: front/ (command line, MCP,
Python API) over serving/ (the pool, imports, locks) over requests/ (models, replies, paths, one
request's way) and engine/ (finding Godot, one engine process), which know nothing of each other,
over errors and version at the root. Inside a folder, modules have layers too. Read from the
source, imports inside functions included, so no later edit can slip an upward arrow in. The
engine side's folders have floors too: job.gd, then formats/ (reading resource files without
loading them), safety/ (the load gate and confinement), files/ and values/ side by side (writing
files; values in and out of the engine), ops/ (one file per operation), and main.gd and tools/ on
top; its preloads form no cycle."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from conftest import REPO

PACKAGE = REPO / "gdres"

FOLDERS = {"": 0, "engine": 1, "requests": 1, "serving": 2, "front": 3}
"""A module may import modules of a lower folder; engine/ and requests/ stand side by side."""

LAYERS = {
    "errors": 0, "version": 0, "scripts": 0, "settings": 0, "platform": 0,
    "engine/frames": 0, "engine/discovery": 0, "engine/wall": 0, "engine/tokens": 0,
    "engine/godot": 1, "engine/process": 1, "engine/worker": 2,
    "requests/replies": 0, "requests/paths": 0, "requests/uids": 0, "requests/models": 1, "requests/request": 2,
    "serving/locks": 0, "serving/ordering": 0, "serving/nofollow": 0, "serving/journal": 1, "serving/imports": 1,
    "serving/starter": 2,
    "serving/slot": 3,
    "serving/pool": 4, "serving/fleet": 4, "serving/shards": 5,
    "front/api": 0, "front/progress": 0, "front/command": 1, "front/mcp": 1, "front/warm": 1, "front/warm_host": 2,
    "front/inputs": 2,
    "front/doctor": 2, "front/batching": 3, "front/cli": 4,
    "__init__": 9, "__main__": 9,
}
"""Inside a folder, a module may import only modules of a lower layer."""


def name_of(module: Path) -> str:
    return module.relative_to(PACKAGE).with_suffix("").as_posix().removesuffix("/__init__")


def imports_of(module: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(module.read_text(), str(module))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("gdres"):
            base = node.module.removeprefix("gdres").lstrip(".").replace(".", "/")
            for alias in node.names:
                joined = f"{base}/{alias.name}".lstrip("/")
                found.add(joined if joined in LAYERS else base or "__init__")
        assert not (isinstance(node, ast.ImportFrom) and node.level), f"{module}: a relative import"
    return found


def folder(name: str) -> int:
    return FOLDERS[name.partition("/")[0] if "/" in name else ""]


def modules() -> list[Path]:
    return [module for module in sorted(PACKAGE.rglob("*.py"))
            if module.name != "__init__.py" or module.parent == PACKAGE]


def test_every_module_has_a_layer_and_every_folder_a_floor() -> None:
    assert {name_of(module) for module in modules()} == set(LAYERS)
    folders = {path.name for path in PACKAGE.iterdir() if path.is_dir() and path.name != "__pycache__"}
    assert folders == set(FOLDERS) - {""}
    assert all((PACKAGE / name / "__init__.py").is_file() for name in folders)


def test_no_import_points_up_or_sideways() -> None:
    wrong = []
    for module in modules():
        here = name_of(module)
        for name in sorted(imports_of(module)):
            if here in ("__init__", "__main__"):
                continue
            same_folder = folder(name) == folder(here) and name.split("/")[0] == here.split("/")[0]
            if (same_folder and LAYERS[name] >= LAYERS[here]) or (not same_folder and folder(name) >= folder(here)):
                wrong.append(f"{here} imports {name}")
    assert wrong == []


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


GD_FLOORS = {"job.gd": 0, "formats": 1, "safety": 2, "files": 3, "values": 3, "ops": 4, "main.gd": 5, "tools": 5}
"""A script may preload scripts of a lower floor, or of its own folder."""


def test_every_preload_points_down_or_inside_its_folder() -> None:
    scripts = PACKAGE.parent / "gdscript"

    def place(script: Path) -> str:
        return script.relative_to(scripts).parts[0]

    wrong = []
    for script in sorted(scripts.rglob("*.gd")):
        for target in re.findall(r'preload\("([^"]+\.gd)"\)', script.read_text()):
            here, there = place(script), place((script.parent / target).resolve())
            if here != there and GD_FLOORS[there] >= GD_FLOORS[here]:
                wrong.append(f"{script.relative_to(scripts)} preloads {target}")
    assert {place(script) for script in scripts.rglob("*.gd")} == set(GD_FLOORS)
    assert wrong == []


def test_no_script_is_handed_another_at_run_time() -> None:
    """A script reaches another by preload only, which the test above sees: none keeps a function
    of another in a static Callable set at run time, a tie no preload shows (values/codec.gd once
    reached its resources' half so)."""
    handed = [f"{script.relative_to(PACKAGE.parent)}: {line.strip()}"
              for script in (PACKAGE.parent / "gdscript").rglob("*.gd")
              for line in script.read_text().splitlines() if re.match(r"static var \w+: Callable\b", line)]
    assert handed == []


def test_front_reaches_below_through_one_door() -> None:
    """front/ takes what it needs from below from the package gdres.serving (its __init__.py, the
    door), never from serving's modules or from engine/: one place says what front/ depends on."""
    wrong = []
    for module in sorted((PACKAGE / "front").glob("*.py")):
        for node in ast.walk(ast.parse(module.read_text(), str(module))):
            names = [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
            names += [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            wrong += [f"front/{module.name} imports {name}" for name in names
                      if name.startswith(("gdres.engine", "gdres.serving."))]
    assert wrong == []


def test_every_name_of_the_door_is_there_and_typed_as_its_module_has_it() -> None:
    import gdres.serving

    assert all(callable(getattr(gdres.serving, name)) for name in gdres.serving.NAMES)
    door = ast.parse((PACKAGE / "serving" / "__init__.py").read_text())
    typed = {(node.module, alias.name) for node in ast.walk(door)
             if isinstance(node, ast.ImportFrom) and node.module for alias in node.names}
    assert typed == {(module, name) for name, module in gdres.serving._HOME.items()}
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        gdres.serving.Nothing  # noqa: B018
