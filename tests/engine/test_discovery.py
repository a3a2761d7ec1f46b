"""Finding the real Godot among stand-ins: where a download lies, and what doctor shows of a newer one
found beside it (every install layout: tests/unit/test_discovery.py)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from conftest import REPO
from unit.test_discovery import doctor, stand_in

# Versions are cached per binary: each test asks its own stand-ins afresh.
pytestmark = pytest.mark.usefixtures("private_cache")


def with_shell(bin_dir: Path) -> str:
    """A PATH of `bin_dir` and the system's own, which a Godot launcher script may need for its shell."""
    return os.pathsep.join([str(bin_dir), "/usr/bin", "/bin"])


@pytest.mark.engine
def test_doctor_with_the_real_engine_named_and_a_newer_one_found(godot_bin: str, home: Path, bin_dir: Path,
                                                                 tmp_path: Path) -> None:
    found = stand_in(home / "Downloads" / "Godot_v4.99-stable_linux.x86_64", "4.99.stable.official.aaaaaaa")
    done = doctor(home, with_shell(bin_dir), "--json", str(REPO / "examples" / "project"), GODOT_BIN=godot_bin)
    report = json.loads(done.stdout)
    assert done.returncode == 0, done.stderr
    chosen, *others = report["godot"]["candidates"]
    assert chosen["source"] == "GODOT_BIN" and chosen["path"] == godot_bin and chosen["chosen"] is True
    assert chosen["version"].startswith("4.") and chosen["version"] == report["godot"]["version"]
    assert {"source": "download", "path": str(found), "version": "4.99.stable.official.aaaaaaa", "chosen": False,
            "reason": "not considered: GODOT_BIN names the Godot to use"} in others
    assert report["project"]["valid"] is True


@pytest.mark.engine
def test_the_real_engine_is_found_where_a_download_lies(godot_bin: str, home: Path, bin_dir: Path) -> None:
    # The real binary, copied (with whatever it needs beside it, if it is a wrapper) to where a
    # download of it would lie; a Godot 3 on PATH is passed over for it.
    release = home / "Downloads" / "Godot_v4.6.3-stable_linux.x86_64"
    release.parent.mkdir()
    shutil.copy2(godot_bin, release)
    stand_in(bin_dir / "godot", "3.5.3.stable.official.6c814135b")
    done = doctor(home, with_shell(bin_dir))
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith(f"Godot:   {release} (version 4.") and first.endswith(": supported, found by download")
