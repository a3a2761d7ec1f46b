"""No project code runs without allow_scripts, whatever form the file takes (tests/hostile_corpus.py).

Every hostile file is tried with every operation that loads a file: read it, duplicate it, name it
in a property value of a material and of a style box. Each must be refused with `unsafe_resource`
(`load_failed` for a file cut short, which the engine cannot load either), and no marker may
appear: no code ran. With `allow_scripts: true` the same files load, and the markers prove the code
in them is real.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hostile_corpus as corpus
from gdres import Bridge

TEXT = corpus.text_cases()
READABLE = (".tres", ".res", ".tscn", ".scn")


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory, godot_bin: str) -> tuple[Path, list[corpus.Case]]:
    """The corpus written once into a project; each test copies it."""
    root = tmp_path_factory.mktemp("corpus") / "project"
    root.mkdir()
    (root / "project.godot").write_text('config_version=5\n\n[application]\nconfig/name="corpus"\n')
    corpus.write(root, TEXT)
    cases = TEXT + corpus.binary_cases(root, godot_bin)
    corpus.write(root, cases)
    return root, cases


@pytest.fixture
def copy(template: tuple[Path, list[corpus.Case]], tmp_path: Path) -> Path:
    target = tmp_path / "project"
    shutil.copytree(template[0], target)
    return target


@pytest.fixture(scope="module")
def guarded(godot_bin: str) -> Iterator[Bridge]:
    with Bridge(godot_bin, timeout=60) as bridge:
        yield bridge


def requests(project: str, target: str, allow: bool = False) -> dict[str, dict[str, Any]]:
    """One request per operation that loads `target`."""
    extra = {"allow_scripts": True} if allow else {}
    out: dict[str, dict[str, Any]] = {
        "value of a material": {"op": "material_create", "project_path": project, "material_type": "StandardMaterial3D",
                                "resource_path": "out/m.tres", "properties": {"next_pass": target}, **extra},
        "value of a style box": {"op": "style_box_create", "project_path": project, "style_type": "StyleBoxTexture",
                                 "resource_path": "out/s.tres", "properties": {"texture": target}, **extra},
    }
    if target.endswith(READABLE):
        out["read"] = {"op": "resource_read", "project_path": project, "resource_path": target, **extra}
        out["duplicate"] = {"op": "resource_duplicate", "project_path": project, "source_path": target,
                            "dest_path": "out/d.tres", **extra}
    return out


def all_cases() -> list[str]:
    return [case.name for case in TEXT] + ["binary_embedded", "binary_external", "binary_scene",
                                           "binary_truncated", "binary_unknown_format", "binary_compressed"]


def case_named(cases: list[corpus.Case], name: str) -> corpus.Case:
    return next(case for case in cases if case.name == name)


@pytest.mark.parametrize("name", all_cases())
def test_every_operation_refuses_the_file_and_runs_nothing(
    name: str, template: tuple[Path, list[corpus.Case]], copy: Path, guarded: Bridge
) -> None:
    case = case_named(template[1], name)
    for operation, request in requests(str(copy), case.target).items():
        reply = guarded.run(request)
        assert reply["result"] == "error", (operation, reply)
        assert reply["error"]["code"] == case.refused_with, (operation, reply["error"])
        assert corpus.markers(copy) == [], f"{operation} ran code of {name}"
    assert not (copy / "out").exists()


@pytest.mark.parametrize("name", [name for name in all_cases() if not name.startswith("binary_")
                                  or name in ("binary_embedded", "binary_external", "binary_scene")])
def test_with_allow_scripts_the_file_is_loaded_and_its_code_is_real(
    name: str, template: tuple[Path, list[corpus.Case]], copy: Path, godot_bin: str
) -> None:
    case = case_named(template[1], name)
    # A fresh engine per case: code that ran may stay resident in the engine that loaded it.
    with Bridge(godot_bin, timeout=60) as bridge:
        replies = {operation: bridge.run(request)
                   for operation, request in requests(str(copy), case.target, allow=True).items()}
    codes = {operation: reply["error"]["code"] for operation, reply in replies.items() if reply["result"] != "ok"}
    assert "unsafe_resource" not in codes.values(), codes
    if case.engine_runs_it:
        assert corpus.markers(copy), f"the engine, allowed, did not run the code of {name}: the case proves nothing"


@pytest.fixture(scope="module")
def mutations_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mutations") / "project"
    root.mkdir()
    (root / "project.godot").write_text("config_version=5\n")
    return root


@pytest.fixture(scope="module")
def allowed(godot_bin: str) -> Iterator[Bridge]:
    with Bridge(godot_bin, timeout=60) as bridge:
        yield bridge


def _try_mutation(seed: int, project: Path, guarded: Bridge, allowed: Bridge) -> bool:
    """Check one mutation; return whether the engine, allowed, ran its code."""
    name = f"mutation_{seed}"
    (project / f"{name}.tres").write_bytes(corpus.mutated(name, seed))
    read = {"op": "resource_read", "project_path": str(project), "resource_path": f"{name}.tres"}
    refused = guarded.run(read)
    assert corpus.markers(project) == [], f"the check let seed {seed} run its code"
    allowed.run({**read, "allow_scripts": True})
    ran = bool(corpus.markers(project))
    for marker in project.glob(f"{corpus.MARK}*"):
        marker.unlink()
    if ran:
        assert refused["result"] == "error" and refused["error"]["code"] in ("unsafe_resource", "load_failed"), (
            seed, refused)
    return ran


# 150 examples, each with a one-shot engine for its allowed read: ~90 s alone on 2 cores.
@pytest.mark.slow
@pytest.mark.timeout(400)
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_no_layout_of_a_scripted_resource_gets_past_the_check(
    seed: int, mutations_project: Path, guarded: Bridge, allowed: Bridge
) -> None:
    _try_mutation(seed, mutations_project, guarded, allowed)


@pytest.mark.slow
def test_layout_mutations_keep_their_meaning(mutations_project: Path, guarded: Bridge, allowed: Bridge) -> None:
    """The mutations are real: the engine, allowed, runs the code of nearly all of them."""
    ran = sum(_try_mutation(seed, mutations_project, guarded, allowed) for seed in range(40))
    assert ran >= 36, f"only {ran} of 40 mutated files ran their code when allowed"
