"""`gdres batch --processes P`: one batch served by several bridge processes (gdres/serving/fleet.py),
against the real engine: the replies are those of one process, in input order, and requests on one file,
however it is named, keep their order across the processes."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from batch_lines import create, jsonl, read, replies
from conftest import REPO, cmdline, file_uid, running
from unit.test_fleet import _ended_pid, batch


def without_uids(reply: dict[str, Any]) -> dict[str, Any]:
    """A reply less the uid a new file is given (fresh each time it is made), and the etag of the file
    that holds it."""
    return {key: value for key, value in reply.items() if key not in ("uid", "etag")}


def test_two_processes_answer_as_one_does_in_input_order(godot_bin: str, project: Path) -> None:
    requests: list[Any] = []
    for i in range(40):
        requests += [create(project, f"made/m{i}.tres", 0.5, id=i),
                     read(project, "materials/base.tres", id=f"r{i}"),
                     read(project, f"missing/{i}.tres", id=f"n{i}"),
                     create(project, f"made/bad{i}.tres", 0.5, id=f"u{i}", properties={"no_such": 1})]
    requests[30:30] = ["not json", "", "[1, 2]", {"op": "material_create"}]
    alone = batch(godot_bin, requests, "--jobs", "2")
    for made in (project / "made").iterdir():
        made.unlink()
    shared = batch(godot_bin, requests, "--jobs", "2", "--processes", "2")
    assert shared.returncode == alone.returncode == 1
    assert [without_uids(r) for r in replies(shared.stdout)] == [without_uids(r) for r in replies(alone.stdout)]
    assert replies(shared.stdout)[30]["error"]["message"].startswith("line 31: ")
    assert len(replies(shared.stdout)) == len(requests)
    # One summary line, the fleet's: the parts write none.
    assert shared.stderr.count("requests in") == 1, shared.stderr
    assert "164 requests" in shared.stderr and "80 ok, 84 errors" in shared.stderr, shared.stderr


def test_one_file_named_many_ways_keeps_its_order_across_processes(godot_bin: str, project: Path) -> None:
    """Each read sees the write before it, whichever name each uses: res://, a detour through `..`, another
    case of the letters (the router folds it), a linked folder, a link to the file."""
    (project / "same").mkdir()
    (project / "alias").symlink_to("same")
    create_first = batch(godot_bin, [create(project, "same/s.tres", 0.0)], "--jobs", "1")
    assert create_first.returncode == 0, create_first.stdout
    (project / "same" / "link.tres").symlink_to("s.tres")
    names = ["same/s.tres", "res://same/s.tres", "same/../same/s.tres", "alias/s.tres", "same/link.tres"]
    requests: list[Any] = []
    for i in range(150):
        requests.append({"op": "resource_update", "project_path": str(project), "resource_path": "same/s.tres",
                         "properties": {"roughness": round(i / 200, 3)}, "id": f"w{i}"})
        requests.append(read(project, names[i % len(names)], id=f"r{i}", properties=["roughness"]))
        # Independent work between them, which spreads over both processes.
        requests += [create(project, f"other/o{i}_{k}.tres", 0.5, id=f"o{i}_{k}") for k in range(3)]
    done = batch(godot_bin, requests, "--jobs", "2", "--processes", "2")
    got = replies(done.stdout)
    assert done.returncode == 0, [r for r in got if r["result"] != "ok"][:3]
    assert [r["id"] for r in got] == [r["id"] for r in requests]
    seen = [r["properties"]["roughness"] for r in got if str(r["id"]).startswith("r")]
    assert seen == [round(i / 200, 3) for i in range(150)]


def test_a_uid_named_file_waits_for_the_writes_before_it(godot_bin: str, project: Path) -> None:
    uid = file_uid(project / "materials" / "base.tres")
    requests: list[Any] = []
    for i in range(40):
        requests.append({"op": "resource_update", "project_path": str(project), "resource_path": "materials/base.tres",
                         "properties": {"roughness": round(i / 100, 3)}, "id": f"w{i}"})
        requests.append(read(project, uid, id=f"r{i}", properties=["roughness"]))
        requests.append(create(project, f"other/o{i}.tres", 0.5, id=f"o{i}"))
    done = batch(godot_bin, requests, "--jobs", "2", "--processes", "2")
    got = replies(done.stdout)
    assert done.returncode == 0, ([r["error"] for r in got if r["result"] != "ok"][:3], done.stderr)
    assert [r["properties"]["roughness"] for r in got if str(r["id"]).startswith("r")] == \
        [round(i / 100, 3) for i in range(40)]


def test_a_process_that_dies_fails_only_what_it_had(godot_bin: str, project: Path) -> None:
    """Kill one of the two bridge processes mid-batch: each line still gets one reply, in order; those it had
    say engine_crashed, the lines after its death go to the other process; no file is left half written,
    and no temp file of an engine the dead process had (one is planted beside each file, as an engine that its
    heartbeat's broken pipe ended between its temp file and the rename leaves it: a race too narrow to meet
    at will)."""
    ended = _ended_pid()
    (project / "a").mkdir()
    for i in range(2000):
        (project / "a" / f".m{i}.tres.{ended}-7.tmp.tres").write_text("[gd_res")
    command = [sys.executable, "-m", "gdres", "--godot", godot_bin, "batch", "--jobs", "2", "--processes", "2",
               "--no-progress", "-"]
    bridge = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
    assert bridge.stdin is not None and bridge.stdout is not None
    killed = threading.Event()

    def write() -> None:
        assert bridge.stdin is not None
        bridge.stdin.write(jsonl([create(project, f"a/m{i}.tres", 0.5, id=i) for i in range(2000)]).encode())
        bridge.stdin.flush()
        killed.wait(60)
        time.sleep(1)  # the death is seen: what comes now goes to the living process
        bridge.stdin.write(jsonl([create(project, f"b/m{i}.tres", 0.5, id=i) for i in range(2000, 2040)]).encode())
        bridge.stdin.close()

    writer = threading.Thread(target=write)
    writer.start()
    got = [json.loads(bridge.stdout.readline()) for _ in range(10)]
    parts = [child for child in psutil.Process(bridge.pid).children() if "--part" in cmdline(child)]
    assert len(parts) == 2
    parts[0].kill()
    killed.set()
    got += [json.loads(line) for line in bridge.stdout]
    writer.join()
    assert bridge.wait(60) == 1
    assert [r["id"] for r in got] == list(range(2040))
    crashed = [r for r in got if r["result"] == "error"]
    assert crashed and all(r["error"]["code"] == "engine_crashed" for r in crashed), crashed[:2]
    assert "ended before it answered" in crashed[0]["error"]["message"]
    assert f"exit status {-signal.SIGKILL}" in crashed[0]["error"]["message"]
    assert all(r["result"] == "ok" for r in got[2000:]), [r for r in got[2000:] if r["result"] != "ok"][:2]
    left = {path.name for path in (project / "a").iterdir() if ".tmp." in path.name}
    assert not left & {f".m{r['id']}.tres.{ended}-7.tmp.tres" for r in crashed}
    written = [path for path in [*(project / "a").iterdir(), *(project / "b").iterdir()] if path.name not in left]
    assert [p.name for p in written if p.suffix != ".tres" or not p.read_text().startswith("[gd_resource")] == []


def test_the_processes_run_this_bridge_not_a_gdres_folder_where_the_command_runs(
        godot_bin: str, project: Path, tmp_path: Path) -> None:
    """The processes of a batch start in the folder the command was given in (relative project paths are
    taken from there); a `gdres` folder there is not what they import."""
    planted = tmp_path / "here" / "gdres"
    planted.mkdir(parents=True)
    marker = tmp_path / "planted-ran"
    (planted / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    (planted / "__main__.py").write_text("raise SystemExit(2)\n")
    command = Path(sys.executable).parent / "gdres"
    done = subprocess.run([str(command), "--godot", godot_bin, "batch", "--jobs", "2", "--processes", "2",
                           "--no-progress", "-"], input=jsonl([create(project, f"m{i}.tres", 0.5) for i in range(20)]),
                          capture_output=True, text=True, cwd=tmp_path / "here", timeout=120)
    assert not marker.exists()
    assert done.returncode == 0, done.stdout[:500] + done.stderr[-500:]
    assert len(replies(done.stdout)) == 20


@pytest.mark.usefixtures("ctrl_c")
def test_ctrl_c_stops_every_process_and_leaves_whole_files(godot_bin: str, project: Path) -> None:
    command = [sys.executable, "-m", "gdres", "--godot", godot_bin, "batch", "--jobs", "2", "--processes", "2",
               "--no-progress", "-"]
    bridge = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO,
                              start_new_session=True)
    assert bridge.stdin is not None and bridge.stdout is not None
    # Less than the bridge reads ahead of its replies, so that this write never waits for a reader.
    bridge.stdin.write(jsonl([create(project, f"c/m{i}.tres", 0.5, id=i) for i in range(1000)]).encode())
    bridge.stdin.flush()
    assert json.loads(bridge.stdout.readline())["result"] == "ok"
    tree = psutil.Process(bridge.pid).children(recursive=True)
    os.killpg(bridge.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole foreground group
    bridge.stdout.read()
    assert bridge.wait(30) == 130
    time.sleep(0.5)
    assert not [p for p in tree if running(p.pid)]
    made = list((project / "c").iterdir())
    assert 0 < len(made) < 1000
    assert not [p for p in made if not p.name.endswith(".tres")]
    for path in made:
        assert path.read_text().startswith("[gd_resource type=\"StandardMaterial3D\""), path


@pytest.mark.parametrize("processes", ["1", "2"])
@pytest.mark.parametrize("source", ["standard input", "a named pipe"])
@pytest.mark.usefixtures("ctrl_c")
def test_one_ctrl_c_stops_a_batch_whose_input_is_quiet(godot_bin: str, project: Path, tmp_path: Path, processes: str,
                                                       source: str) -> None:
    # A pipe whose writer lives on but sends nothing more (`tail -f`, an agent's stream): the first
    # Ctrl-C waited for its next line, and only a second one ended the command (standard input,
    # one process). A named pipe's close then waited for the thread reading it: no Ctrl-C ended it.
    fifo = tmp_path / "requests"
    named = source == "a named pipe"
    if named:
        os.mkfifo(fifo)
    command = [sys.executable, "-m", "gdres", "--godot", godot_bin, "batch", "--jobs", processes,
               "--processes", processes, "--no-progress", str(fifo) if named else "-"]
    bridge = subprocess.Popen(command, stdin=subprocess.DEVNULL if named else subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, cwd=REPO, start_new_session=True)
    assert bridge.stdout is not None
    # Read and write: a writer's open of a pipe would wait for a reader (the bridge) forever if
    # the bridge failed before opening it.
    writer = os.fdopen(os.open(fifo, os.O_RDWR), "wb") if named else bridge.stdin
    assert writer is not None
    try:
        writer.write(jsonl([read(project, "materials/base.tres")]).encode())
        writer.flush()
        assert json.loads(bridge.stdout.readline())["result"] == "ok"
        os.killpg(bridge.pid, signal.SIGINT)
        assert bridge.wait(10) == 130
    finally:
        bridge.kill()
        writer.close()


def test_lines_the_router_cannot_read_get_the_replies_one_process_gives(godot_bin: str, project: Path) -> None:
    """A project path or file name with a lone surrogate (which no file system call takes), then ordinary lines."""
    requests: list[Any] = [
        '{"op": "resource_read", "project_path": "proj\\ud800", "resource_path": "x.tres", "id": 0}',
        '{"op": "resource_read", "project_path": ' + json.dumps(str(project)) + ', "resource_path": "x\\ud800.tres", '
        '"id": 1}',
        *[create(project, f"m{i}.tres", 0.5, id=i) for i in range(2, 12)]]
    alone = batch(godot_bin, requests, "--jobs", "2")
    shared = batch(godot_bin, requests, "--jobs", "2", "--processes", "2")
    assert "Traceback" not in alone.stderr + shared.stderr, (alone.stderr + shared.stderr)[-2000:]
    assert [without_uids(r) for r in replies(shared.stdout)] == [without_uids(r) for r in replies(alone.stdout)]
    assert [r["result"] for r in replies(shared.stdout)] == ["error", "error"] + ["ok"] * 10


def test_a_reply_longer_than_a_pipe_read_comes_whole(godot_bin: str, project: Path) -> None:
    """A reply of ~0.5 MB reaches the router in many reads; it is written whole, as one process writes it."""
    colors = [[i / 40000, 0.5, 0.25, 1.0] for i in range(20000)]
    requests: list[Any] = [{"op": "resource_create", "project_path": str(project), "resource_type": "Gradient",
                            "resource_path": "big.tres", "properties": {"offsets": [i / 20000 for i in range(20000)],
                                                                        "colors": colors}}]
    requests += [read(project, "big.tres", id=i) for i in range(4)]
    alone = batch(godot_bin, requests, "--jobs", "2")
    shared = batch(godot_bin, requests, "--jobs", "2", "--processes", "2")
    assert shared.returncode == alone.returncode == 0, shared.stdout[:300]
    assert len(shared.stdout.splitlines()[1]) > 400_000
    assert [without_uids(r) for r in replies(shared.stdout)] == [without_uids(r) for r in replies(alone.stdout)]


def test_a_pipe_is_served_line_by_line_even_beside_a_file_named_dash(godot_bin: str, project: Path,
                                                                     tmp_path: Path) -> None:
    """A client that waits for each reply before it sends the next line gets each reply."""
    (tmp_path / "-").write_text("")
    start = f"import sys; sys.path[0] = {str(REPO)!r}; from gdres.front.cli import entry; entry()"
    command = [sys.executable, "-c", start, "--godot", godot_bin, "batch", "--jobs", "2", "--processes", "2",
               "--no-progress"]
    bridge = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              cwd=tmp_path)
    assert bridge.stdin is not None and bridge.stdout is not None
    try:
        for i in range(3):
            bridge.stdin.write((json.dumps(create(project, f"p{i}.tres", 0.5, id=i)) + "\n").encode())
            bridge.stdin.flush()
            ready, _, _ = select.select([bridge.stdout], [], [], 60)
            assert ready, f"no reply to line {i + 1} within 60 s"
            assert json.loads(bridge.stdout.readline())["id"] == i
    finally:
        bridge.stdin.close()
        bridge.wait(60)
