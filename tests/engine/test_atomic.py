"""batch --atomic: every write of the batch stays, or none does, also when the bridge is killed (the
journal alone: tests/unit/test_atomic.py)."""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from conftest import REPO, run_cli
from engine.test_imports import png
from gdres import Bridge
from gdres.engine import wall
from gdres.serving import journal
from unit.test_atomic import lines, write_batch

BATCH_FILES = ("new/deep/red.tres", "new/blue.tres", "materials/base.tres", "shapes/box.tres", "scenes/level.tscn",
               "ui/panel.tres", "materials/layered.tres")


def state(root: Path) -> dict[str, bytes | None]:
    """Every file (bytes, a new file's drawn uid masked) and folder (None) under `root`."""
    found: dict[str, bytes | None] = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if relative.startswith(".godot"):
            continue
        found[relative] = re.sub(rb'uid="uid://[a-z0-9]+"', b'uid="?"', path.read_bytes()) if path.is_file() else None
    return found


def test_an_atomic_batch_failing_on_its_last_line_changes_nothing(
        project: Path, tmp_path: Path, godot_bin: str) -> None:
    before = state(project)
    requests = [*lines(project), {"op": "material_create", "project_path": str(project),
                                  "material_type": "StandardMaterial3D", "resource_path": "new/last.tres",
                                  "properties": {"albedo_colour": "#00ff00"}}]
    done = run_cli("batch", "--atomic", str(write_batch(tmp_path / "batch.jsonl", requests)), godot=godot_bin)
    assert done.returncode == 1, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    codes = [reply.get("error", {}).get("code", reply["result"]) for reply in replies]
    # Every line that wrote is undone; the read keeps its reply (it saw the batch's own copy); the
    # failing line keeps its own error.
    assert codes == ["rolled_back"] * 4 + ["ok", "rolled_back", "rolled_back", "unknown_property"]
    assert replies[4]["properties"]["albedo_color"] == [0.0, 0.0, 1.0, 1.0]
    assert replies[0]["resource_path"] == "new/deep/red.tres" and "request 8" in replies[0]["error"]["message"]
    assert state(project) == before  # byte for byte, no file or folder created
    assert not (journal.folder_of(project.resolve()) / "journal.jsonl").exists()


def test_an_atomic_batch_that_succeeds_keeps_every_write(project: Path, tmp_path: Path, godot_bin: str) -> None:
    done = run_cli("batch", "--atomic", str(write_batch(tmp_path / "batch.jsonl", lines(project))), godot=godot_bin)
    assert done.returncode == 0, done.stdout + done.stderr
    assert all(json.loads(line)["result"] == "ok" for line in done.stdout.splitlines())
    assert (project / "shapes/box.tres").is_file() and "metallic = 0.9" in (project / "materials/base.tres").read_text()
    assert not (journal.folder_of(project.resolve()) / "journal.jsonl").exists()


def test_the_python_api_serves_an_atomic_batch(project: Path, bridge: Bridge) -> None:
    before = state(project)
    requests = [*lines(project)[:2], {"op": "resource_update", "project_path": str(project),
                                      "resource_path": "materials/none.tres", "properties": {"metallic": 1}}]
    replies = list(bridge.batch(requests, atomic=True))
    assert [reply.get("error", {}).get("code") for reply in replies] == ["rolled_back", "rolled_back", "not_found"]
    assert state(project) == before
    assert [reply["result"] for reply in bridge.batch(lines(project)[:2], atomic=True)] == ["ok", "ok"]


@pytest.mark.parametrize("failing", ["in_the_engine", "before_the_engine"])
def test_an_atomic_batch_failing_in_its_middle_undoes_what_ran_after_the_failure_too(
        failing: str, project: Path, bridge: Bridge) -> None:
    """The engine is sent requests ahead of its replies, so those after the failing one may have run
    by the time its reply comes: their writes are undone with the rest, and their replies do not
    count (`skipped`, or `rolled_back` where they wrote)."""
    before = state(project)
    at = str(project)
    created = [{"op": "material_create", "project_path": at, "material_type": "StandardMaterial3D",
                "resource_path": f"new/m{i}.tres", "properties": {"roughness": i / 40}} for i in range(40)]
    bad: dict[str, Any] = ({"op": "resource_update", "project_path": at, "resource_path": "materials/none.tres",
                            "properties": {"metallic": 1}} if failing == "in_the_engine"
                           else {"op": "material_create", "project_path": at, "resource_path": "new/bad.tres"})
    reads = [{"op": "resource_read", "project_path": at, "resource_path": "materials/base.tres"}] * 5
    replies = list(bridge.batch([*created[:3], bad, *created[3:], *reads], atomic=True))
    codes = [reply["error"]["code"] if reply["result"] != "ok" else "ok" for reply in replies]
    assert codes[:3] == ["rolled_back"] * 3
    assert codes[3] == ("not_found" if failing == "in_the_engine" else "invalid_request")
    assert set(codes[4:]) <= {"skipped", "rolled_back"} and codes[-5:] == ["skipped"] * 5, codes
    assert all("request 4 of the atomic batch failed" in reply["error"]["message"]
               for reply in replies[:3] + replies[4:])
    assert [reply["resource_path"] for reply in replies[4:]] == [f"new/m{i}.tres" for i in range(3, 40)] + [
        "materials/base.tres"] * 5
    assert state(project) == before  # byte for byte, nothing created
    assert not (journal.folder_of(project.resolve()) / "journal.jsonl").exists()


@pytest.mark.timeout(180)
@pytest.mark.parametrize("atomic", [True, False])
def test_a_line_that_waits_for_an_import_is_still_seen_by_the_lines_after_it(atomic: bool, project: Path,
                                                                            bridge: Bridge) -> None:
    """Line 1 needs the project imported (a texture, in a checkout with no .godot/); the lines sent
    behind it ran before the import, so they run again after line 1: each sees its write, in an
    atomic batch as in a plain one."""
    (project / "icons").mkdir()
    (project / "icons" / "red.png").write_bytes(png())
    at = str(project)
    first = {"op": "style_box_create", "project_path": at, "style_type": "StyleBoxTexture",
             "resource_path": "ui/textured.tres", "properties": {"texture": "icons/red.png", "content_margin_left": 7}}
    copies = [{"op": "resource_duplicate", "project_path": at, "source_path": "ui/textured.tres",
               "dest_path": f"ui/copy{i}.tres"} for i in range(8)]
    read = {"op": "resource_read", "project_path": at, "resource_path": "ui/textured.tres"}
    replies = list(bridge.batch([first, *copies, read], atomic=atomic))
    assert [reply["result"] for reply in replies] == ["ok"] * 10, [reply.get("error") for reply in replies]
    assert replies[-1]["properties"]["content_margin_left"] == 7
    for i in range(8):
        text = (project / "ui" / f"copy{i}.tres").read_text()
        assert "content_margin_left = 7.0" in text and 'path="res://icons/red.png"' in text, text


def test_an_atomic_batch_works_on_one_project(project: Path, tmp_path: Path, godot_bin: str) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "project.godot").write_text("config_version=5\n")
    requests = [lines(project)[0], {**lines(project)[0], "project_path": str(other)}]
    done = run_cli("batch", "--atomic", str(write_batch(tmp_path / "batch.jsonl", requests)), godot=godot_bin)
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert replies[1]["error"]["code"] == "invalid_request" and "one project" in replies[1]["error"]["message"]
    assert replies[0]["error"]["code"] == "rolled_back"
    assert not (project / "new").exists() and not (other / "new").exists()


def entries_in(journal_file: Path) -> int:
    """The entries a running batch has noted so far (none before its journal is made or after it ends
    and removes it, which may happen between any two looks)."""
    try:
        return journal_file.read_text().count("\n")
    except FileNotFoundError:
        return 0


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_an_atomic_batch_killed_at_any_moment_is_all_old_or_all_new(
        project: Path, tmp_path: Path, godot_bin: str) -> None:
    """SIGKILL the bridge at 24 moments of the batch's run; after the next command on the project,
    each time, every file of the batch is as before it, or as after it, all of them."""
    template = tmp_path / "template"
    project.rename(template)
    env = {**os.environ, "GODOT_BIN": godot_bin}
    old = state(template)

    def fresh(name: str) -> tuple[Path, Path]:
        copy = tmp_path / name
        subprocess.run(["cp", "-a", str(template), str(copy)], check=True)
        return copy, write_batch(tmp_path / f"{name}.jsonl", lines(copy))

    done_copy, done_batch = fresh("done")
    started = time.monotonic()
    finished = run_cli("batch", "--atomic", str(done_batch), godot=godot_bin)
    took = time.monotonic() - started
    assert finished.returncode == 0, finished.stdout + finished.stderr
    new = state(done_copy)
    assert {path for path in BATCH_FILES if old.get(path) != new.get(path)} == set(BATCH_FILES)

    # 24 moments: 8 anywhere in the run (before the engine starts, while it writes, after the
    # end), 16 while it writes: once the journal has its k-th entry (every write notes two, the
    # temp file and folders it makes, then the file it replaces), and a few milliseconds more.
    rng = random.Random(20261125)
    moments: list[tuple[float, int]] = [(rng.uniform(0.05, took * 1.1), 0) for _ in range(8)]
    moments += [(rng.uniform(0.0, 0.02), rng.randint(3, 2 + 2 * len(BATCH_FILES) + 2)) for _ in range(16)]
    seen = {"old": 0, "new": 0, "cut": 0}
    for number, (moment, entries) in enumerate(moments):
        copy, batch = fresh(f"kill{number}")
        left = journal.folder_of(copy.resolve()) / "journal.jsonl"
        bridge = subprocess.Popen([sys.executable, "-m", "gdres", "batch", "--atomic", str(batch)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=REPO)
        while entries and bridge.poll() is None and entries_in(left) < entries:
            time.sleep(0.001)
        time.sleep(moment)
        bridge.kill()
        bridge.wait()
        if left.exists() and '"commit"' in left.read_text():
            seen["cut"] += 1  # killed with some of its writes made: the next command undoes them
        after_next = run_cli("run", json.dumps({"op": "resource_read", "project_path": str(copy),
                                                "resource_path": "materials/base.tres"}), godot=godot_bin)
        assert after_next.returncode == 0, after_next.stdout + after_next.stderr
        now = state(copy)
        whole = "old" if now == old else "new" if now == new else None
        assert whole is not None, (moment, {path for path in set(now) | set(old) if now.get(path) != old.get(path)})
        seen[whole] += 1
        assert not any(str(copy) in command for command in _engine_commands()), "an engine outlived it"
    # The moments span the batch: kills before it wrote, while it wrote, after its end.
    assert seen["old"] - seen["cut"] >= 1 and seen["cut"] >= 8 and seen["new"] >= 1, seen


def _engine_commands() -> list[str]:
    """The command line of every engine running, read once: an engine of a test beside this one may end
    between two reads, and a second read of it raises."""
    commands = (" ".join(process.info["cmdline"] or []) for process in psutil.process_iter(["cmdline"]))
    return [command for command in commands if "main.gd" in command]


def test_an_atomic_batch_whose_input_fails_is_undone(project: Path, bridge: Bridge) -> None:
    before = state(project)

    def requests() -> Any:
        yield from lines(project)[:3]
        raise OSError("the input broke")

    with pytest.raises(OSError, match="the input broke"):
        list(bridge.batch(requests(), atomic=True))
    assert state(project) == before
    assert not (journal.folder_of(project.resolve()) / "journal.jsonl").exists()


def test_an_atomic_batch_waits_for_another_on_the_project_and_says_so(
        project: Path, tmp_path: Path, godot_bin: str) -> None:
    other = journal.Journal(project.resolve())
    other.begin(time.monotonic() + 5)  # another atomic batch, still running
    try:
        before = state(project)
        done = run_cli("--timeout", "1", "batch", "--atomic", str(write_batch(tmp_path / "b.jsonl", lines(project))),
                       godot=godot_bin)
        replies = [json.loads(line) for line in done.stdout.splitlines()]
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        assert replies[0]["error"]["code"] == "save_failed" and "another atomic batch" in replies[0]["error"]["message"]
        assert {reply["error"]["code"] for reply in replies[1:]} == {"skipped"}
        assert state(project) == before and other.path.exists()  # the other batch's journal is its own
    finally:
        other.commit()


def test_an_atomic_batch_serves_no_allow_scripts_request(project: Path, bridge: Bridge) -> None:
    replies = list(bridge.batch([lines(project)[0], {**lines(project)[2], "allow_scripts": True}], atomic=True))
    assert [reply["error"]["code"] for reply in replies] == ["rolled_back", "invalid_request"]
    assert replies[1]["error"]["field"] == "allow_scripts"
    assert not (project / "new").exists()


def test_a_long_lived_bridge_undoes_a_batch_cut_short_before_its_next_request(
        project: Path, bridge: Bridge) -> None:
    """A Python Bridge (or an MCP server) that has served a project already looks for a batch another
    process left cut short before each later call, not only before its first."""
    first = bridge.run(lines(project)[2])  # resource_update of materials/base.tres
    assert first["result"] == "ok"
    before = (project / "materials/base.tres").read_bytes()
    cut = project / "cut.tres"
    cut.write_bytes(b"written by a batch that was killed")
    folder = journal.folder_of(project.resolve())
    folder.mkdir(parents=True, exist_ok=True)
    entries = [{"project": str(project.resolve()), "bridge": 2**22 + 1},
               {"commit": str(project.resolve() / "cut.tres"), "old": None, "mode": -1,
                "new": hashlib.sha256(cut.read_bytes()).hexdigest()}]
    (folder / "journal.jsonl").write_text("".join(json.dumps(entry) + "\n" for entry in entries))
    read = bridge.run({"op": "resource_read", "project_path": str(project), "resource_path": "materials/base.tres"})
    assert read["result"] == "ok" and not cut.exists()
    assert (project / "materials/base.tres").read_bytes() == before


@pytest.mark.skipif(not wall.status()[0], reason="no Landlock on this kernel: doctor says the wall is down")
def test_an_atomic_batchs_engines_may_write_its_journal_and_nothing_beside_it(
        project: Path, godot_bin: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The wall the starter builds for an atomic batch's engine, with a probe run behind it in the
    engine's place: it may append to the journal and write in the project, and may create no file or
    link in the journal's folder (where a planted link could steer the undo)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    walls: list[tuple[list[Path], list[Path]]] = []
    build = wall.argv

    def recorded(engine_argv: list[str], *, read: list[Path], write: list[Path]) -> list[str]:
        walls.append((list(read), list(write)))
        return build(engine_argv, read=read, write=write)

    monkeypatch.setattr(wall, "argv", recorded)
    with Bridge(godot_bin) as bridge:
        (reply,) = bridge.batch([lines(project)[0]], atomic=True)
    assert reply["result"] == "ok", reply
    read, write = walls[-1]
    (journal_file,) = [path for path in write if path != project]
    assert journal_file.parent.parent == tmp_path / "cache" / "gdres" / "journals"
    # The batch is over and its journal gone: put one back for the probe (a rule needs its file).
    journal_file.parent.mkdir(parents=True, exist_ok=True)
    journal_file.write_text("")
    probe = ('echo entry >> "$1" && echo appended; touch "$2/planted" 2>/dev/null && echo planted; '
             'ln -s /etc/passwd "$2/link" 2>/dev/null && echo linked; touch "$3/inside" && echo inside')
    done = subprocess.run(build(["/bin/sh", "-c", probe, "sh", str(journal_file), str(journal_file.parent),
                                 str(project)], read=read, write=write), capture_output=True, text=True, check=False)
    assert done.stdout.split() == ["appended", "inside"], done.stderr
    assert journal_file.read_text() == "entry\n"
    assert not {"planted", "link"} & {p.name for p in journal_file.parent.iterdir()}
    assert (project / "inside").is_file()
