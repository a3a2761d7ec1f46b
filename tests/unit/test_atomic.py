"""batch --atomic's journal without an engine: what it may name, how a recovery waits and undoes, and
putting files back without writing through a link (whole batches, and kills: tests/engine/test_atomic.py)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import run_cli
from gdres.errors import SaveFailed
from gdres.serving import journal, locks


def lines(project: Path) -> list[dict[str, Any]]:
    """A batch that creates files in new folders, reads its own writes, edits a scene and a file in place."""
    at = str(project)
    return [
        {"op": "material_create", "project_path": at, "material_type": "StandardMaterial3D",
         "resource_path": "new/deep/red.tres", "properties": {"albedo_color": "#ff0000"}},
        {"op": "resource_duplicate", "project_path": at, "source_path": "new/deep/red.tres",
         "dest_path": "new/blue.tres", "property_overrides": {"albedo_color": "#0000ff"}},
        {"op": "resource_update", "project_path": at, "resource_path": "materials/base.tres",
         "properties": {"metallic": 0.9}},
        {"op": "shape_create", "project_path": at, "shape_type": "BoxShape3D", "shape_params": {"size": [1, 2, 3]},
         "save_path": "shapes/box.tres", "scene_path": "scenes/level.tscn", "node_path": "Floor/FloorShape"},
        {"op": "resource_read", "project_path": at, "resource_path": "new/blue.tres"},
        {"op": "style_box_create", "project_path": at, "style_type": "StyleBoxFlat", "resource_path": "ui/panel.tres",
         "properties": {"bg_color": "#202830"}},
        {"op": "resource_update", "project_path": at, "resource_path": "materials/layered.tres",
         "properties": {"roughness": 0.1}},
    ]


def write_batch(batch: Path, requests: list[dict[str, Any]]) -> Path:
    batch.write_text("".join(json.dumps(request) + "\n" for request in requests))
    return batch


def test_atomic_refuses_jobs(project: Path, tmp_path: Path) -> None:
    done = run_cli("batch", "--atomic", "--jobs", "2", str(write_batch(tmp_path / "batch.jsonl", lines(project))))
    assert done.returncode == 2 and "--atomic" in done.stderr


def test_a_journal_names_nothing_outside_its_project(project: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = project.resolve()
    outside = tmp_path / "outside.txt"
    outside.write_text("mine")
    folder = journal.folder_of(root)
    folder.mkdir(parents=True)
    entries = [{"project": str(root)},
               {"commit": str(outside), "old": None, "mode": -1},
               {"commit": str(root / ".godot" / "x.tres"), "old": None},
               {"commit": str(root / "materials/base.tres"), "old": "b2xk", "mode": -1,
                "new": hashlib.sha256((root / "materials/base.tres").read_bytes()).hexdigest()}]
    (folder / "journal.jsonl").write_text("".join(json.dumps(entry) + "\n" for entry in entries) + '{"commit": "/et')
    assert journal.recover(root) == ["materials/base.tres"]
    assert outside.read_text() == "mine" and (root / "materials/base.tres").read_bytes() == b"old"
    assert not (folder / "journal.jsonl").exists()


def test_a_recovery_waits_for_the_batchs_engine_and_undoes_what_it_did_meanwhile(
        project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An engine outlives its killed bridge for up to a quarter second, and may make one more write
    (noted first) meanwhile: the recovery waits for it, then reads the journal again."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = project.resolve()
    made = root / "late.tres"
    folder = journal.folder_of(root)
    folder.mkdir(parents=True)
    notes = folder / "journal.jsonl"
    notes.write_text(json.dumps({"project": str(root)}) + "\n")
    sha = hashlib.sha256(b"new").hexdigest()
    late_write = (f"import json, time; time.sleep(0.5); "
                  f"open({str(notes)!r}, 'a').write(json.dumps({{'commit': {str(made)!r}, 'old': None, "
                  f"'new': {sha!r}}}) + '\\n'); open({str(made)!r}, 'w').write('new')")
    engine = subprocess.Popen([sys.executable, "-c", late_write])
    writes = journal.Journal(root)
    writes.engine_started(engine.pid)
    assert journal.recover(root) == ["late.tres"]
    assert engine.poll() is not None and not made.exists()


def test_putting_a_file_back_never_writes_through_a_link(project: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A link planted where a temp file would go (a name the bridge could be expected to use) or in
    place of the file is replaced or left alone, never written through."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = project.resolve()
    outside = tmp_path / "bashrc"
    outside.write_text("mine")
    (root / "a.tres").write_bytes(b"new")
    for name in (f".a.tres.bridge-{os.getpid()}.tmp", ".a.tres.undo.tmp", ".a.tres.tmp"):
        (root / name).symlink_to(outside)
    (root / "b.tres").symlink_to(outside)
    folder = journal.folder_of(root)
    folder.mkdir(parents=True)
    entries = [{"project": str(root)},
               {"commit": str(root / "a.tres"), "old": "cGF5bG9hZA==", "mode": 0o777,
                "new": hashlib.sha256(b"new").hexdigest()},
               {"commit": str(root / "b.tres"), "old": "cGF5bG9hZA==", "mode": 0o777,
                "new": hashlib.sha256(b"mine").hexdigest()}]
    (folder / "journal.jsonl").write_text("".join(json.dumps(entry) + "\n" for entry in entries))
    assert journal.recover(root) == ["a.tres", "b.tres"]
    assert outside.read_text() == "mine" and outside.stat().st_mode & 0o777 != 0o777
    assert (root / "a.tres").read_bytes() == b"payload" == (root / "b.tres").read_bytes()
    assert not (root / "b.tres").is_symlink()


def test_a_batch_that_could_not_be_undone_is_not_forgotten(project: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A file that cannot be put back keeps the journal, and no new atomic batch starts over it."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = project.resolve()
    (root / "a.tres").write_bytes(b"new")
    folder = journal.folder_of(root)
    folder.mkdir(parents=True)
    entry = {"commit": str(root / "a.tres"), "old": "b2xk", "mode": -1, "new": hashlib.sha256(b"new").hexdigest()}
    (folder / "journal.jsonl").write_text(json.dumps({"project": str(root)}) + "\n" + json.dumps(entry) + "\n")

    def refused(*_: Any) -> None:
        raise PermissionError(1, "Operation not permitted")

    with monkeypatch.context() as patched:
        patched.setattr("os.replace", refused)
        assert journal.recover(root) == []
        assert (folder / "journal.jsonl").exists()
        with pytest.raises(SaveFailed, match=r"a\.tres could not be put back"):
            journal.Journal(root).begin(time.monotonic() + 1)
    assert journal.recover(root) == ["a.tres"] and (root / "a.tres").read_bytes() == b"old"
    assert not (folder / "journal.jsonl").exists()


def test_a_killed_requests_files_are_put_back_without_writing_through_a_link(project: Path, tmp_path: Path) -> None:
    """locks.restore() (a dead engine's rewrites undone) shares the journal's way of putting a file back."""
    outside = tmp_path / "bashrc"
    outside.write_text("mine")
    target = project.resolve() / "materials/base.tres"
    (target.parent / f".{target.name}.bridge-{os.getpid()}.tmp").symlink_to(outside)
    old = target.read_bytes()
    taken = locks.snapshot([target])
    target.write_bytes(b"half-written by a killed engine")
    assert locks.restore(taken) == [target]
    assert target.read_bytes() == old and outside.read_text() == "mine"
