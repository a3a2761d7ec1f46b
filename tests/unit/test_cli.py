"""The command line without an engine: usage errors exit 2 with one line, the schema, `python -m`, and
reading standard input however it comes (requests served: tests/engine/test_cli.py)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import REPO, run_cli
from gdres.front.inputs import batch_input, lines_of


@pytest.mark.parametrize(("args", "needle"), [
    (["--frobnicate", "run"], "unrecognized arguments"),
    (["run", "@/nonexistent/request.json"], "cannot read"),
    (["batch", "/nonexistent/batch.jsonl"], "cannot read"),
    (["--timeout", "-1", "run", "{}"], "--timeout"),
    ([], "required"),
])
def test_command_line_misuse_exits_2_with_one_line(args: list[str], needle: str) -> None:
    done = run_cli(*args)
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and needle in done.stderr


def test_schema_covers_every_operation() -> None:
    done = run_cli("schema")
    schema = json.loads(done.stdout)
    assert done.returncode == 0
    assert sorted(schema["discriminator"]["mapping"]) == [
        "class_info", "import_read", "import_update", "material_create", "node_add", "node_remove",
        "node_set_properties", "resource_create", "resource_duplicate", "resource_move", "resource_read",
        "resource_update", "scene_read", "shape_create", "style_box_create"]
    read = schema["$defs"]["ResourceRead"]
    assert read["additionalProperties"] is False
    assert {"resource_path", "path", "depth", "properties", "id"} <= set(read["properties"])


def test_python_dash_m_is_the_same_command() -> None:
    script = Path(sys.executable).parent / "gdres"
    installed = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=60)
    module = run_cli("--help")
    assert module.returncode == installed.returncode == 0
    assert "batch" in module.stdout and "doctor" in module.stdout
    assert module.stdout.split("\n", 1)[1] == installed.stdout.split("\n", 1)[1]


@pytest.mark.parametrize("command", [["run", "-"], ["batch", "-"], ["mcp"]])
def test_a_closed_standard_input_is_a_usage_error(command: list[str]) -> None:
    # `gdres batch - <&-`: Python starts with no sys.stdin. Before: a traceback.
    done = subprocess.run(f'"{sys.executable}" -m gdres {" ".join(command)} <&-',
                          shell=True, capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "standard input is closed" in done.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="a non-blocking pipe is a POSIX affair")
def test_a_non_blocking_input_is_read_to_its_end() -> None:
    # Standard input left non-blocking by whoever started the process: a read with nothing there
    # yet was taken for the input's end, and the rest of the batch lost without a word.
    read, write = os.pipe()
    os.set_blocking(read, False)
    os.write(write, b"one\n")

    def rest() -> None:
        os.write(write, b"two\n")
        os.close(write)

    later = threading.Timer(0.3, rest)
    later.start()
    with io.FileIO(read, "rb") as raw:
        assert list(lines_of(raw)) == [b"one\n", b"two\n"]
    later.join()


def test_what_standard_input_s_buffer_holds_already_is_read_first(monkeypatch: pytest.MonkeyPatch) -> None:
    # A caller in this process read from sys.stdin.buffer before calling the command line: what the
    # buffer read ahead for it is the batch's too (it is read below the buffer).
    read, write = os.pipe()
    os.write(write, b"one\ntwo\nthree\nfour")
    os.close(write)
    stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(read, "rb"), buffer_size=8))
    monkeypatch.setattr(sys, "stdin", stdin)
    assert stdin.buffer.readline() == b"one\n"
    _, lines = batch_input("-")
    assert list(lines) == [b"two\n", b"three\n", b"four"]
    stdin.close()


@given(data=st.binary(max_size=300), size=st.integers(1, 40))
def test_an_unbuffered_input_is_split_into_lines_as_a_file_is(data: bytes, size: int) -> None:
    # Standard input and named pipes are read through their raw file object (inputs.batch_input()).
    class Raw:
        def __init__(self) -> None:
            self.left = data

        def read(self, most: int) -> bytes:
            taken, self.left = self.left[:min(most, size)], self.left[min(most, size):]
            return taken

    assert list(lines_of(Raw())) == list(io.BytesIO(data))
