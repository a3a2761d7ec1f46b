"""`gdres batch` against the real engine: order, same-file order, streaming, --stop-on-error (its options:
tests/unit/test_batch.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from batch_lines import create, jsonl, read, replies
from conftest import REPO, run_cli


def test_jobs_2_answers_in_input_order_with_mixed_results(godot_bin: str, project: Path) -> None:
    requests: list[Any] = []
    expected: list[tuple[int | None, str]] = []
    for i in range(60):
        kind = i % 4
        if kind == 0:
            requests.append(create(project, f"made/m{i}.tres", 0.5, id=i))
            expected.append((i, "ok"))
        elif kind == 1:
            requests.append(read(project, "materials/base.tres", id=i))
            expected.append((i, "ok"))
        elif kind == 2:
            requests.append(read(project, f"missing/{i}.tres", id=i))
            expected.append((i, "not_found"))
        else:
            requests.append(create(project, f"made/m{i}.tres", 0.5, id=i, properties={"no_such": 1}))
            expected.append((i, "unknown_property"))
    requests.insert(30, "not json")
    expected.insert(30, (None, "invalid_json"))
    done = run_cli("--godot", godot_bin, "batch", "--jobs", "2", "--no-progress", input=jsonl(requests))
    got = [(r.get("id"), r["error"]["code"] if r["result"] == "error" else "ok") for r in replies(done.stdout)]
    assert got == expected
    assert done.returncode == 1
    assert sorted(p.name for p in (project / "made").iterdir()) == sorted(f"m{i}.tres" for i in range(0, 60, 4))


def test_requests_on_one_file_keep_their_order_across_workers(godot_bin: str, project: Path) -> None:
    """Creates, reads and copies of the same few files interleave; each read sees the create before it."""
    requests = []
    for i in range(120):
        name = f"same/s{i % 3}.tres"
        requests.append(create(project, name, round(i / 200, 3), id=f"c{i}"))
        requests.append(read(project, name, id=f"r{i}", properties=["roughness"]))
        requests.append({"op": "resource_duplicate", "project_path": str(project), "source_path": name,
                         "dest_path": f"copies/d{i % 3}.tres", "id": f"d{i}"})
        requests.append(read(project, f"copies/d{i % 3}.tres", id=f"k{i}", properties=["roughness"]))
    done = run_cli("--godot", godot_bin, "batch", "--jobs", "2", "--no-progress", input=jsonl(requests))
    got = replies(done.stdout)
    assert done.returncode == 0, done.stdout[-500:]
    assert [r["id"] for r in got] == [r["id"] for r in requests]
    for i in range(120):
        assert got[4 * i + 1]["properties"]["roughness"] == round(i / 200, 3), got[4 * i + 1]
        assert got[4 * i + 3]["properties"]["roughness"] == round(i / 200, 3), got[4 * i + 3]


def test_first_reply_arrives_before_the_input_ends(godot_bin: str, project: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "gdres", "--godot", godot_bin, "batch", "--jobs", "2"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=REPO)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(jsonl([read(project, "materials/base.tres", id="first")]).encode())
        proc.stdin.flush()
        first = _readline_within(proc.stdout, 60)
        assert proc.poll() is None, "the batch ended although its input is still open"
        assert json.loads(first)["id"] == "first"
        proc.stdin.write(jsonl([read(project, "materials/base.tres", id="second")]).encode())
        proc.stdin.close()
        assert json.loads(_readline_within(proc.stdout, 60))["id"] == "second"
        assert proc.wait(60) == 0
    finally:
        proc.kill()
        proc.wait()


def _readline_within(stream: Any, seconds: float) -> bytes:
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(seconds)
    assert got and got[0], f"no reply within {seconds} s"
    return got[0]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_100000_lines_stream_in_flat_memory(godot_bin: str, project: Path) -> None:
    """Most lines are refused before the engine (cheap), every 50th goes to the engine."""
    bad = jsonl([read(project, "../outside.tres")]).encode()
    good = jsonl([read(project, "materials/base.tres")]).encode()
    proc = subprocess.Popen([sys.executable, "-m", "gdres", "--godot", godot_bin, "batch", "--jobs", "2"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=REPO)
    assert proc.stdin is not None and proc.stdout is not None
    stdin = proc.stdin

    def write() -> None:
        with stdin:
            stdin.writelines(good if i % 50 == 0 else bad for i in range(100_000))

    threading.Thread(target=write, daemon=True).start()
    rss: dict[int, int] = {}
    count = ok = 0
    for line in proc.stdout:
        count += 1
        ok += json.loads(line)["result"] == "ok"
        if count in (20_000, 99_000):
            rss[count] = _rss(proc.pid)
    assert proc.wait(60) == 1
    assert (count, ok) == (100_000, 2_000)
    assert rss[99_000] - rss[20_000] < 8 << 20, rss


def _rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def test_stop_on_error_with_two_jobs_runs_nothing_after_the_error(godot_bin: str, project: Path) -> None:
    requests = [create(project, f"out/m{i}.tres", 0.25, id=i) for i in range(40)]
    requests[7] = read(project, "missing.tres", id=7)
    done = run_cli("--godot", godot_bin, "batch", "--jobs", "2", "--stop-on-error", input=jsonl(requests))
    got = replies(done.stdout)
    assert [r["id"] for r in got] == list(range(40))
    assert [r["result"] for r in got[:7]] == ["ok"] * 7
    assert got[7]["error"]["code"] == "not_found"
    assert {r["error"]["code"] for r in got[8:]} == {"skipped"}
    assert sorted(p.name for p in (project / "out").iterdir()) == [f"m{i}.tres" for i in range(7)]
    assert done.returncode == 1


def test_progress_bar_goes_to_stderr_only(godot_bin: str, project: Path, tmp_path: Path) -> None:
    batch = tmp_path / "batch.jsonl"
    batch.write_text(jsonl([read(project, "materials/base.tres", id=i) for i in range(5)]))
    done = run_cli("--godot", godot_bin, "batch", "--progress", str(batch))
    assert [r["id"] for r in replies(done.stdout)] == list(range(5))
    assert "5/5" in done.stderr and "req/s" in done.stderr and "5 requests in" in done.stderr


def test_reader_going_away_ends_the_batch_quietly(godot_bin: str, project: Path) -> None:
    lines = jsonl([read(project, "materials/base.tres")] * 2000)
    started = time.monotonic()
    done = subprocess.run(f'"{sys.executable}" -m gdres --godot "{godot_bin}" batch | head -n 1',
                          shell=True, input=lines.encode(), capture_output=True, cwd=REPO, timeout=120)
    assert len(done.stdout.splitlines()) == 1
    assert b"Traceback" not in done.stderr and b"BrokenPipe" not in done.stderr
    assert time.monotonic() - started < 60


@pytest.mark.parametrize("first", ["other", "not json"])
def test_a_batch_serves_every_project_whatever_its_first_line_names(godot_bin: str, project: Path,
                                                                   tmp_path: Path, first: str) -> None:
    # The batch starts engines for the project of its first line before anything else is read.
    other = tmp_path / "other"
    (other / "materials").mkdir(parents=True)
    (other / "project.godot").write_text((project / "project.godot").read_text())
    head: Any = create(other, "first.tres", 0.1, id="first") if first == "other" else "not json"
    requests = [head] + [create(project if i % 2 else other, f"made/m{i}.tres", 0.5, id=i) for i in range(8)]
    done = run_cli("--godot", godot_bin, "batch", "--jobs", "2", "--no-progress", input=jsonl(requests))
    got = replies(done.stdout)
    assert [r.get("id") for r in got] == ["first" if first == "other" else None, *range(8)]
    assert [r["result"] for r in got[1:]] == ["ok"] * 8
    assert sorted(p.name for p in (project / "made").iterdir()) == [f"m{i}.tres" for i in (1, 3, 5, 7)]
    assert sorted(p.name for p in (other / "made").iterdir()) == [f"m{i}.tres" for i in (0, 2, 4, 6)]


@pytest.mark.parametrize("columns", [0, 60, 120])  # 0: a pseudo-terminal that reports no width (CI runners)
def test_the_progress_bar_fits_the_terminal_and_ends_with_a_summary(
        godot_bin: str, project: Path, tmp_path: Path, columns: int) -> None:
    import fcntl
    import pty
    import struct
    import termios

    batch = tmp_path / "batch.jsonl"
    batch.write_text(jsonl([read(project, "materials/base.tres" if i % 4 else "nope.tres") for i in range(40)]))
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    done = subprocess.run([sys.executable, "-m", "gdres", "batch", "-j", "1", str(batch)],
                          stdout=subprocess.PIPE, stderr=follower, env={**os.environ, "GODOT_BIN": godot_bin},
                          timeout=120)
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    assert len(replies(done.stdout.decode())) == 40
    text = shown.decode()
    drawn = [part for line in text.splitlines() for part in line.split("\r") if part.strip()]
    bars = [part for part in drawn if part.startswith("batch:")]
    assert bars and all(len(part.rstrip()) <= (columns or 80) for part in bars), bars
    assert "100%" in bars[-1] and "40/40" in bars[-1] and "10 errors" in bars[-1]
    assert re.search(r"00:\d\d<00:00", bars[-1])  # elapsed and time left
    assert re.fullmatch(r"gdres: 40 requests in \d+\.\d s \(\d+ req/s\): 30 ok, 10 errors", drawn[-1].strip())


@pytest.mark.parametrize("source", ["file", "pipe"])
def test_a_one_line_batch_starts_one_engine_whatever_jobs_says(
        godot_bin: str, project: Path, tmp_path: Path, source: str) -> None:
    import psutil

    batch = tmp_path / "one.jsonl"
    batch.write_text(jsonl([read(project, "materials/base.tres")]))
    argv = [sys.executable, "-m", "gdres", "batch", "-j", "4"] + ([str(batch)] if source == "file" else [])
    run = subprocess.Popen(argv, stdin=batch.open("rb"), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           env={**os.environ, "GODOT_BIN": godot_bin})
    engines: set[int] = set()
    parent = psutil.Process(run.pid)
    while run.poll() is None:
        try:
            children = parent.children(recursive=True)
        except psutil.NoSuchProcess:
            break
        for child in children:
            try:
                # A worker, not a version probe or a pack build; nor a child the engine forks to run a
                # program (headless, it runs `xdg-user-dir` at start), which has the engine's command
                # line until it execs.
                above = child.parent()
                if "--main-pack" in child.cmdline() and (above is None or "--main-pack" not in above.cmdline()):
                    engines.add(child.pid)
            except psutil.Error:
                continue
        time.sleep(0.01)
    assert run.stdout is not None
    assert replies(run.stdout.read().decode())[0]["result"] == "ok"
    assert len(engines) == 1


def test_a_batch_logged_to_a_file_ends_with_its_summary_line(godot_bin: str, project: Path) -> None:
    requests = [read(project, "materials/base.tres" if i % 4 else "nope.tres") for i in range(8)]
    done = run_cli("--godot", godot_bin, "batch", input=jsonl(requests))  # stderr is a pipe, as in CI
    assert "\r" not in done.stderr  # no bar drawn
    assert re.fullmatch(r"gdres: 8 requests in \d+\.\d s \(\d+ req/s\): 6 ok, 2 errors",
                        done.stderr.strip().splitlines()[-1])
