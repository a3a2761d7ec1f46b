"""Confinement of every path the engine opens, wherever it comes from, checked when it is used.

Request members are confined in Python when a request is read; these tests cover what that cannot
see: paths written inside files (ext_resource paths, absolute or through `..`, uid:// targets, an
imported asset's remap), a folder swapped for a symbolic link while a batch waits, a failed save
under a dangling link, and values Python must refuse itself.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import hostile_corpus as corpus
from gdres import Bridge
from gdres.serving.pool import Pool
from gdres.serving.starter import Settings

SECRET = '[gd_resource type="StandardMaterial3D" format=3]\n\n[resource]\nresource_name = "the secret"\n'


@pytest.fixture
def walled(tmp_path: Path) -> Path:
    """A project with a secret beside it (outside) and files inside that name it."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.tres").write_text(SECRET)
    project = tmp_path / "project"
    (project / ".godot").mkdir(parents=True)
    (project / "project.godot").write_text("config_version=5\n")

    def referring(path: str, uid: str = "") -> str:
        uid_attr = f' uid="{uid}"' if uid else ""
        return (f'[gd_resource type="StandardMaterial3D" format=3]\n\n'
                f'[ext_resource type="Material"{uid_attr} path="{path}" id="1"]\n\n'
                '[resource]\nnext_pass = ExtResource("1")\n')

    (project / "dotdot.tres").write_text(referring("res://../outside/secret.tres"))
    (project / "absolute.tres").write_text(referring(str(outside / "secret.tres")))
    (project / "relative.tres").write_text(referring("../outside/secret.tres"))
    (project / "by_uid.tres").write_text(referring("res://nothing.tres", corpus.UID_TEXT))
    (project / ".godot" / "uid_cache.bin").write_bytes(corpus.uid_cache({corpus.UID_ID: str(outside / "secret.tres")}))
    (project / "icon.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (project / "icon.png.import").write_text(
        f'[remap]\n\nimporter="texture"\ntype="StandardMaterial3D"\npath="{outside / "secret.tres"}"\n')
    (project / "imported.tres").write_text(referring("res://icon.png"))
    return project


def state(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("name", ["dotdot", "absolute", "relative", "by_uid", "imported"])
def test_a_path_inside_a_file_never_leads_a_read_or_a_copy_outside(walled: Path, godot_bin: str, name: str) -> None:
    before = state(walled.parent)
    with Bridge(godot_bin) as bridge:
        for request in (
            {"op": "resource_read", "resource_path": f"{name}.tres", "depth": 3},
            {"op": "resource_duplicate", "source_path": f"{name}.tres", "dest_path": "copy.tres", "deep_copy": True},
            {"op": "resource_duplicate", "source_path": f"{name}.tres", "dest_path": "copy.tres"},
            {"op": "material_create", "material_type": "StandardMaterial3D", "resource_path": "made.tres",
             "properties": {"next_pass": f"{name}.tres"}},
        ):
            reply = bridge.run({**request, "project_path": str(walled)})
            assert reply["result"] == "error", reply
            assert reply["error"]["code"] == "path_outside_project", reply["error"]
            assert "the secret" not in json.dumps(reply)
    assert state(walled.parent) == before


def test_a_folder_swapped_for_a_link_while_a_write_waits_gets_no_file(tmp_path: Path, godot_bin: str) -> None:
    project = tmp_path / "project"
    (project / "d").mkdir(parents=True)
    (project / "project.godot").write_text("config_version=5\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    # A resource that takes the engine a while to read: the batch's write waits behind four of them.
    (project / "big.tres").write_text(
        '[gd_resource type="Resource" format=3]\n\n[resource]\nmetadata/big = PackedFloat32Array('
        + ", ".join(["0.5"] * 2_000_000) + ")\n")
    slow: dict[str, Any] = {"op": "resource_read", "project_path": str(project), "resource_path": "big.tres",
                            "properties": ["resource_name"]}
    write: dict[str, Any] = {"op": "material_create", "project_path": str(project),
                             "material_type": "StandardMaterial3D", "resource_path": "d/x.tres", "id": "write"}
    with Pool(Settings(godot_bin), jobs=1) as pool:
        replies = pool.map(iter([slow, slow, slow, slow, write]))
        first = next(replies)
        # The write was checked (d was a folder) and sent; now d leads outside.
        shutil.rmtree(project / "d")
        (project / "d").symlink_to(outside)
        rest = list(replies)
    assert first["result"] == "ok"
    assert [r["result"] for r in rest[:3]] == ["ok"] * 3
    assert rest[3]["result"] == "error" and rest[3]["error"]["code"] == "path_outside_project", rest[3]
    assert list(outside.iterdir()) == []


def test_a_folder_swapped_for_a_link_between_two_writes_of_a_batch_gets_no_file(tmp_path: Path,
                                                                                godot_bin: str) -> None:
    # The batch keeps the folders its paths went through (gdres/requests/paths.py Folders):
    # the second write's folder is not looked at again before it is sent, and the engine refuses it.
    project = tmp_path / "project"
    (project / "d").mkdir(parents=True)
    (project / "project.godot").write_text("config_version=5\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    swapped = threading.Event()

    def writes() -> Iterator[dict[str, Any]]:
        for name in ("a", "b"):
            yield {"op": "material_create", "project_path": str(project), "material_type": "StandardMaterial3D",
                   "resource_path": f"d/{name}.tres"}
            swapped.wait(30)

    with Pool(Settings(godot_bin), jobs=1) as pool:
        replies = pool.map(writes())
        first = next(replies)
        (project / "d" / "a.tres").rename(tmp_path / "a.tres")
        (project / "d").rmdir()
        (project / "d").symlink_to(outside)
        swapped.set()
        second = next(replies)
    assert first["result"] == "ok", first
    assert second["result"] == "error" and second["error"]["code"] == "path_outside_project", second
    assert list(outside.iterdir()) == []


def test_a_failed_save_under_a_dangling_link_leaves_the_link(tmp_path: Path, godot_bin: str) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "project.godot").write_text("config_version=5\n")
    (project / "a_file").write_text("not a folder")
    (project / "broken").symlink_to("a_file/sub")  # inside the project, and it cannot be made
    (project / "later").symlink_to("made/here")    # inside the project, and it can
    with Bridge(godot_bin) as bridge:
        failed = bridge.run({"op": "material_create", "project_path": str(project),
                             "material_type": "StandardMaterial3D", "resource_path": "broken/x.tres"})
        saved = bridge.run({"op": "material_create", "project_path": str(project),
                            "material_type": "StandardMaterial3D", "resource_path": "later/x.tres"})
    assert failed["result"] == "error" and failed["error"]["code"] == "save_failed", failed
    assert os.readlink(project / "broken") == "a_file/sub"
    assert saved["result"] == "ok", saved
    assert os.readlink(project / "later") == "made/here"
    assert (project / "made" / "here" / "x.tres").is_file()


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("plain") / "project"
    project.mkdir()
    (project / "project.godot").write_text("config_version=5\n")
    return project


@pytest.fixture(scope="module")
def bridge(godot_bin: str) -> Iterator[Bridge]:
    with Bridge(godot_bin) as b:
        yield b


@pytest.mark.parametrize(("request_", "code"), [
    ({"op": "material_create", "material_type": "StandardMaterial3D", "resource_path": "n.tres",
      "properties": {"resource_name": "before\0after"}}, "invalid_value"),
    ({"op": "material_create", "material_type": "StandardMaterial3D", "resource_path": "n.tres",
      "properties": {"metadata/list": ["a\0b"]}}, "invalid_value"),
    ({"op": "resource_read", "resource_path": "n.tres", "depth": float("inf")}, "invalid_request"),
    ({"op": "resource_read", "resource_path": "n.tres", "depth": float("nan")}, "invalid_request"),
])
def test_values_python_must_refuse(plain: Path, bridge: Bridge, request_: dict[str, Any], code: str) -> None:
    reply = bridge.run({**request_, "project_path": str(plain)})
    assert reply["result"] == "error" and reply["error"]["code"] == code, reply
    assert not (plain / "n.tres").exists()
