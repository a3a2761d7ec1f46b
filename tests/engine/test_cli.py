"""The command line against the real engine: replies only on stdout, exit codes 0/1, errors as replies,
never a traceback (usage errors and input reading: tests/unit/test_cli.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, run_cli


def replies(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


def read_request(project: Path, **extra: object) -> dict[str, object]:
    return {"op": "resource_read", "project_path": str(project), "resource_path": "materials/base.tres", **extra}


def test_run_ok_exits_0_with_one_compact_line(godot_bin: str, project: Path) -> None:
    done = run_cli("--godot", godot_bin, "run", json.dumps(read_request(project, id=3)))
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("\n") == 1 and ": " not in done.stdout
    reply = json.loads(done.stdout)
    assert (reply["op"], reply["id"], reply["result"]) == ("resource_read", 3, "ok")


def test_run_reads_stdin_and_at_file(godot_bin: str, project: Path, tmp_path: Path) -> None:
    request = json.dumps(read_request(project))
    from_stdin = run_cli("--godot", godot_bin, "run", input=request)
    (tmp_path / "req.json").write_text(request)
    from_file = run_cli("--godot", godot_bin, "run", f"@{tmp_path / 'req.json'}")
    assert json.loads(from_stdin.stdout) == json.loads(from_file.stdout)
    assert json.loads(from_file.stdout)["result"] == "ok"


def test_error_reply_exits_1(godot_bin: str, project: Path) -> None:
    done = run_cli("--godot", godot_bin, "run", json.dumps(read_request(project, resource_path="missing.tres")))
    assert done.returncode == 1
    reply = json.loads(done.stdout)
    assert reply["error"]["code"] == "not_found"
    assert reply["resource_path"] == "missing.tres"
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(("text", "code"), [
    ("{not json", "invalid_json"),
    ('{"op": "resource_read"', "invalid_json"),
    ("[1, 2]", "invalid_json"),
    ('"a string"', "invalid_json"),
    ("", "invalid_json"),
    ('{"op": "explode", "project_path": "/x"}', "invalid_request"),
    ('{"project_path": "/x"}', "invalid_request"),
])
def test_malformed_input_is_an_error_reply(godot_bin: str, text: str, code: str) -> None:
    done = run_cli("--godot", godot_bin, "run", input=text)
    assert done.returncode == 1
    reply = json.loads(done.stdout)
    assert reply["result"] == "error" and reply["error"]["code"] == code
    assert "Traceback" not in done.stderr


def test_unknown_member_names_it(godot_bin: str, project: Path) -> None:
    done = run_cli("--godot", godot_bin, "run", json.dumps(read_request(project, colour="red")))
    reply = json.loads(done.stdout)
    assert reply["error"] == {"code": "invalid_request", "message": "unknown member 'colour'", "field": "colour"}
    assert reply["op"] == "resource_read" and reply["resource_path"] == "materials/base.tres"


def test_a_request_file_with_a_byte_order_mark_is_refused_saying_so(godot_bin: str, project: Path,
                                                                    tmp_path: Path) -> None:
    """Windows editors may save UTF-8 with a byte order mark; the reply names it, not a JSON detail."""
    file = tmp_path / "request.json"
    file.write_bytes(b"\xef\xbb\xbf" + json.dumps(read_request(project)).encode())
    done = run_cli("--godot", godot_bin, "run", f"@{file}")
    assert done.returncode == 1
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "invalid_json" and "byte order mark" in error["message"], error
    assert "@FILE" not in error["message"]  # the hint for a request given as a path: this one was JSON


def test_invalid_utf8_on_stdin(godot_bin: str) -> None:
    done = run_cli("--godot", godot_bin, "batch", input=b'{"op": "resource_read"}\n\xff\xfe\n')
    assert done.returncode == 1
    codes = [r["error"]["code"] for r in replies(done.stdout)]
    assert codes == ["invalid_request", "invalid_json"]


def test_batch_answers_in_order_and_exits_1_on_any_error(godot_bin: str, project: Path) -> None:
    lines = [
        json.dumps(read_request(project, id=1)),
        "",
        json.dumps(read_request(project, id=2, resource_path="nope.tres")),
        "garbage",
        json.dumps(read_request(project, id=4)),
    ]
    done = run_cli("--godot", godot_bin, "batch", "--no-progress", input="\n".join(lines) + "\n")
    assert done.returncode == 1
    got = [(r.get("id"), r["result"]) for r in replies(done.stdout)]
    assert got == [(1, "ok"), (None, "error"), (2, "error"), (None, "error"), (4, "ok")]  # a blank line too


def test_batch_stop_on_error_skips_the_rest(godot_bin: str, project: Path) -> None:
    lines = [read_request(project, id=1), read_request(project, id=2, resource_path="nope.tres"),
             {"op": "material_create", "project_path": str(project), "material_type": "PhysicsMaterial",
              "resource_path": "never.tres", "id": 3}]
    done = run_cli("--godot", godot_bin, "batch", "--stop-on-error",
                   input="".join(json.dumps(r) + "\n" for r in lines))
    got = replies(done.stdout)
    assert [r["result"] for r in got] == ["ok", "error", "error"]
    assert got[2]["error"]["code"] == "skipped" and got[2]["id"] == 3
    assert not (project / "never.tres").exists()
    assert done.returncode == 1


def test_batch_all_ok_exits_0(godot_bin: str, project: Path) -> None:
    done = run_cli("--godot", godot_bin, "batch", input=json.dumps(read_request(project)) + "\n")
    assert done.returncode == 0 and replies(done.stdout)[0]["result"] == "ok"


def _cli_in(folder: Path, godot_bin: str, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**__import__("os").environ, "GODOT_BIN": godot_bin}
    return subprocess.run([sys.executable, "-m", "gdres", *args], input=input, capture_output=True, text=True,
                          cwd=folder, env=env, timeout=120)


def test_run_and_batch_take_a_project_path_relative_to_the_current_folder(godot_bin: str, project: Path) -> None:
    request = json.dumps({**read_request(project), "project_path": project.name})
    one = _cli_in(project.parent, godot_bin, "run", request)
    many = _cli_in(project.parent, godot_bin, "batch", "-j", "1", input=request + "\n" +
                   json.dumps({**read_request(project), "project_path": "."}) + "\n")
    here = _cli_in(project, godot_bin, "run", json.dumps({**read_request(project), "project_path": "."}))
    assert json.loads(one.stdout)["result"] == "ok", one.stdout
    assert [reply["result"] for reply in replies(many.stdout)] == ["ok", "error"]
    assert replies(many.stdout)[1]["error"]["code"] == "project_not_found"  # "." is the parent: no project.godot
    assert json.loads(here.stdout)["result"] == "ok", here.stdout


def test_batch_reply_n_is_line_n_and_bad_json_names_its_line_and_column(godot_bin: str, project: Path) -> None:
    good = json.dumps(read_request(project))
    done = run_cli("batch", "-j", "1", input=f"{good}\n\n{{\"op\": \"resource_read\",}}\n{good}\n", godot=godot_bin)
    got = replies(done.stdout)
    assert [reply["result"] for reply in got] == ["ok", "error", "error", "ok"]
    assert got[1]["error"]["code"] == "invalid_json" and got[1]["error"]["message"].startswith("line 2: ")
    assert got[2]["error"]["message"].startswith("line 3: the request is not valid JSON (")
    assert "column 24" in got[2]["error"]["message"]


def test_an_empty_batch_has_no_replies(godot_bin: str) -> None:
    done = run_cli("batch", input="", godot=godot_bin)
    assert (done.returncode, done.stdout) == (0, "")


@pytest.mark.parametrize("args", [["schema"], ["run", '{"op": "no_such_op"}'], ["doctor"]])
def test_a_reader_going_away_ends_any_command_quietly(godot_bin: str, args: list[str]) -> None:
    # `gdres schema | head -c 1`, or a caller that stopped reading: as `batch` does, the
    # command ends with exit status 1, and stderr holds no traceback.
    read, write = os.pipe()
    os.close(read)  # no reader at all: the command's first write meets a broken pipe
    try:
        done = subprocess.run([sys.executable, "-m", "gdres", "--godot", godot_bin, *args],
                              stdout=write, stderr=subprocess.PIPE, cwd=REPO, timeout=120)
    finally:
        os.close(write)
    assert done.returncode == 1
    assert b"Traceback" not in done.stderr and b"BrokenPipe" not in done.stderr, done.stderr


def test_a_closed_stderr_changes_no_exit_status(godot_bin: str) -> None:
    # `gdres schema 2>&-`: Python starts with no sys.stderr at all; the command still
    # succeeds, and says so.
    done = subprocess.run(f'"{sys.executable}" -m gdres --godot "{godot_bin}" schema 2>&-', shell=True,
                          capture_output=True, cwd=REPO, timeout=120)
    assert done.returncode == 0
    assert json.loads(done.stdout)["discriminator"]["propertyName"] == "op"


@pytest.mark.parametrize("command", [["run"], ["batch", "--jobs", "1", "--no-progress"]])
def test_a_lone_surrogate_in_a_path_is_refused_and_quoted_as_its_escape(godot_bin: str, project: Path,
                                                                         command: list[str]) -> None:
    """Python's JSON reader takes `\\ud800` alone; no file system call and no UTF-8 stream takes the result.
    Before: a traceback from the project check (batch, run) or from writing the reply that quotes it (run)."""
    lines = ['{"op": "resource_read", "project_path": "proj\\ud800", "resource_path": "x.tres"}',
             '{"op": "resource_read", "project_path": ' + json.dumps(str(project))
             + ', "resource_path": "x\\ud800.tres"}']
    for line in lines if command == ["batch", "--jobs", "1", "--no-progress"] else lines[1:]:
        done = run_cli("--godot", godot_bin, *command, input=line + "\n")
        assert "Traceback" not in done.stderr, done.stderr[-1500:]
        reply = json.loads(done.stdout)
        assert reply["error"]["code"] in ("invalid_request", "project_not_found")
        assert "not valid Unicode" in reply["error"]["message"]
    assert done.returncode == 1
