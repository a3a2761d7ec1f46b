"""`gdres mcp` failing before it serves: a bad --project and a missing Godot (the tools, driven by the
MCP SDK's client against the real engine: tests/engine/test_mcp.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO


def test_bad_project_option_is_a_usage_error(tmp_path: Path) -> None:
    from conftest import run_cli

    done = run_cli("mcp", "--project", str(tmp_path / "missing"))
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("gdres: --project:") and "Traceback" not in done.stderr


def test_a_missing_godot_is_said_on_stderr_at_start(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "gdres", "mcp"], input=b"", capture_output=True, timeout=60,
                          cwd=REPO, env={**os.environ, "GODOT_BIN": str(tmp_path / "no-godot"),
                                         "XDG_CACHE_HOME": str(tmp_path)})
    assert b"gdres mcp: GODOT_BIN names" in done.stderr
    assert b"every tool call will answer engine_not_found" in done.stderr
