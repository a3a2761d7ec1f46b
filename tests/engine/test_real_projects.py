"""A project the way users keep one in git, every request against it, held against the engine's view.

tests/corpus/build.gd makes the project with the engine (textures, a font, a mesh, a sound, a TileSet
with an atlas, a Theme with a StyleBoxTexture and a font, a next_pass chain, an OpenXRActionMap with
arrays of sub-resources two levels deep, binary .res files, scenes with a script and an instanced
sub-scene, and 50 materials each with a texture of its own), imports it so that its *.import files
exist, and then its .godot/ goes, as it does from a commit. Each test starts from a fresh copy.
tests/corpus/oracle.gd is the independent view: plain engine loads, none of the bridge's code.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, fresh_clone, run_cli, snapshot
from gdres import Bridge
from gdres.serving.starter import IMPORTS_BEFORE_ALL

pytestmark = [pytest.mark.engine, pytest.mark.timeout(300)]

BUILD = REPO / "tests" / "corpus" / "build.gd"
ORACLE = REPO / "tests" / "corpus" / "oracle.gd"
IMPORTING = "gdres: importing the assets of"
MANY = 50


def _godot(godot_bin: str, project: Path, *args: str) -> str:
    done = subprocess.run([godot_bin, "--headless", "--path", str(project), *args],
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0 and "SCRIPT ERROR" not in done.stderr, done.stdout + done.stderr
    return done.stdout


@pytest.fixture(scope="session")
def corpus_source(godot_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("corpus") / "project"
    root.mkdir()
    (root / "project.godot").write_text('config_version=5\n\n[application]\nconfig/name="Corpus"\n')
    _godot(godot_bin, root, "-s", str(BUILD), "--", "assets")
    _godot(godot_bin, root, "--import")
    _godot(godot_bin, root, "-s", str(BUILD), "--", "resources")
    shutil.rmtree(root / ".godot")
    return root


@pytest.fixture
def corpus(corpus_source: Path, tmp_path: Path) -> Path:
    """A fresh clone: *.import files, no .godot/."""
    return fresh_clone(corpus_source, tmp_path)


@pytest.fixture
def corpus_bridge(godot_bin: str) -> Iterator[Bridge]:
    with Bridge(godot_bin, timeout=240) as bridge:
        yield bridge


def resource_files(project: Path) -> list[str]:
    return sorted(str(path.relative_to(project)) for pattern in ("*.tres", "*.res") for path in project.rglob(pattern))


def oracle(godot_bin: str, project: Path, mode: str, items: list[str]) -> list[dict[str, Any]]:
    out = _godot(godot_bin, project, "-s", str(ORACLE), "--", mode, *items)
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def _plain(value: Any) -> Any:
    """A value as both views can show it: a resource by its class, numbers in flat lists."""
    if isinstance(value, dict):
        if "type" in value and ("properties" in value or "path" in value or len(value) == 1):
            return {"type": value["type"]}
        if set(value) == {"type", "args"}:  # JSON.from_native's form of a math type
            return _plain(value["args"])
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        items = [_plain(item) for item in value]
        if all(isinstance(item, list) for item in items) and items:
            return [number for item in items for number in item]
        return items
    if isinstance(value, float):
        return round(value, 5)
    return value


def _reads(bridge: Bridge, project: Path, files: list[str], **fields: Any) -> dict[str, dict[str, Any]]:
    return {file: bridge.run({"op": "resource_read", "project_path": str(project), "resource_path": file,
                              **fields}) for file in files}


def test_the_corpus_is_a_fresh_clone(corpus: Path) -> None:
    assert not (corpus / ".godot").exists()
    assert len(list(corpus.rglob("*.import"))) == MANY + 6  # textures, font, mesh, sound
    assert len(resource_files(corpus)) >= MANY + 11


def test_every_resource_file_reads_as_the_engine_sees_it(corpus: Path, corpus_bridge: Bridge, godot_bin: str) -> None:
    files = resource_files(corpus)
    replies = _reads(corpus_bridge, corpus, files)
    assert {file: reply for file, reply in replies.items() if reply["result"] != "ok"} == {}
    views = {entry["file"].removeprefix("res://"): entry["view"]
             for entry in oracle(godot_bin, corpus, "view", [f"res://{file}" for file in files])}
    for file in files:
        reply, view = replies[file], views[file]
        assert reply["type"] == view["type"], file
        assert _plain(reply["properties"]) == _plain(view["stored"]), file


def test_an_imported_font_is_named_not_expanded(corpus: Path, corpus_bridge: Bridge) -> None:
    reply = _reads(corpus_bridge, corpus, ["ui/with_fallbacks.tres"], depth=8)["ui/with_fallbacks.tres"]
    leaf = {"type": "FontFile", "path": "res://fonts/body.woff2"}
    assert reply["properties"] == {"fallbacks": [leaf], "base_font": leaf}


@pytest.mark.parametrize("deep", [False, True], ids=["shallow", "deep"])
def test_every_resource_file_duplicates_into_a_copy_the_engine_loads_equal(
        corpus: Path, corpus_bridge: Bridge, godot_bin: str, deep: bool) -> None:
    files = resource_files(corpus)
    copies = {file: f"copies/{Path(file).with_suffix('.tres')}" for file in files}  # dest_path is always .tres
    before = snapshot(corpus)
    replies = {file: corpus_bridge.run({"op": "resource_duplicate", "project_path": str(corpus), "source_path": file,
                                        "dest_path": copies[file], "deep_copy": deep}) for file in files}
    assert {file: reply for file, reply in replies.items() if reply["result"] != "ok"} == {}
    # Nothing of the sources changed, neither on disk nor in the engine that copied them.
    kept = {name: text for name, text in snapshot(corpus).items() if not name.startswith(("copies/", ".godot/"))}
    assert kept == before
    again = _reads(corpus_bridge, corpus, ["xr/action_map.tres"])["xr/action_map.tres"]
    assert len(again["properties"]["interaction_profiles"]) == 14
    pairs = [f"res://{file}=res://{copies[file]}" for file in files]
    differences = {entry["pair"]: entry["difference"] for entry in oracle(godot_bin, corpus, "same", pairs)}
    assert differences == dict.fromkeys(pairs, "")
    copied = (corpus / "copies/xr/action_map.tres").read_text()
    assert copied.count('[sub_resource type="OpenXRIPBinding"') == 14 * 12
    if deep:
        assert 'path="res://materials/middle.tres"' not in (corpus / "copies/materials/chain.tres").read_text()


def test_a_read_then_create_round_trip_is_identical(corpus: Path, corpus_bridge: Bridge) -> None:
    sources = ["materials/textured.tres", "binary/textured.res",
               *(f"many/material_{i:02d}.tres" for i in range(0, MANY, 7))]
    for file in sources:
        first = _reads(corpus_bridge, corpus, [file], depth=0)[file]
        made = corpus_bridge.run({"op": "material_create", "project_path": str(corpus), "material_type": first["type"],
                                  "resource_path": f"again/{Path(file).stem}.tres", "properties": first["properties"]})
        assert made["result"] == "ok", made
        second = _reads(corpus_bridge, corpus, [f"again/{Path(file).stem}.tres"], depth=0)
        assert second[f"again/{Path(file).stem}.tres"]["properties"] == first["properties"], file


def test_a_scene_with_a_script_needs_allow_scripts(corpus: Path, corpus_bridge: Bridge) -> None:
    refused = _reads(corpus_bridge, corpus, ["scenes/level.tscn"])["scenes/level.tscn"]
    assert refused["error"]["code"] == "unsafe_resource"
    assert "res://scenes/player.tscn (named in res://scenes/level.tscn" in refused["error"]["message"]
    allowed = _reads(corpus_bridge, corpus, ["scenes/level.tscn"], allow_scripts=True)["scenes/level.tscn"]
    assert (allowed["result"], allowed["type"]) == ("ok", "PackedScene")


@pytest.mark.parametrize(("file", "asset"), [("materials/textured.tres", "icons/albedo.png"),
                                             ("ui/with_fallbacks.tres", "fonts/body.woff2"),
                                             ("tiles/tileset.tres", "icons/tiles.png")])
def test_no_import_answers_not_imported_naming_the_asset(corpus: Path, godot_bin: str, file: str, asset: str) -> None:
    before = snapshot(corpus)
    done = run_cli("--no-import", "run", json.dumps({"op": "resource_read", "project_path": str(corpus),
                                                     "resource_path": file}), godot=godot_bin)
    reply = json.loads(done.stdout)
    assert reply["error"]["code"] == "not_imported", reply
    assert f"res://{asset}" in reply["error"]["message"]
    assert snapshot(corpus) == before and not (corpus / ".godot").exists()


def test_a_fresh_clone_with_fifty_textured_materials_imports_what_each_needs_then_the_rest_at_once(
        corpus: Path, godot_bin: str) -> None:
    lines = [json.dumps({"op": "resource_read", "project_path": str(corpus),
                         "resource_path": f"many/material_{i:02d}.tres"}) for i in range(MANY)]
    started = time.monotonic()
    first = run_cli("batch", input=lines[0] + "\n", godot=godot_bin, timeout=240)
    imported = time.monotonic() - started
    assert first.stderr.count(IMPORTING) == 1, first.stderr
    assert json.loads(first.stdout)["result"] == "ok"
    started = time.monotonic()
    rest = run_cli("batch", input="\n".join(lines * 4) + "\n", godot=godot_bin, timeout=240)
    served = time.monotonic() - started
    # The first requests import their own texture; after IMPORTS_BEFORE_ALL such imports, the rest at once.
    assert rest.stderr.count(IMPORTING) == IMPORTS_BEFORE_ALL + 1, rest.stderr
    assert rest.stderr.count(f"{IMPORTING} {corpus} (") == 1, rest.stderr
    replies = [json.loads(line) for line in rest.stdout.splitlines()]
    assert [reply["result"] for reply in replies] == ["ok"] * MANY * 4
    assert all(math.isclose(reply["properties"]["metallic"], (i % MANY) / MANY, abs_tol=1e-6)
               for i, reply in enumerate(replies) if i % MANY)
    print(f"first request with import: {imported:.2f} s; {len(replies)} reads after it: {served:.2f} s "
          f"({served / len(replies) * 1000:.1f} ms a request, engine start included)")
