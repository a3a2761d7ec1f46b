"""Everything the scan of the GDScript finds (tests/gdscript_uses.py) exists in the engine here, asked with
`--doctool`, or the scan misreads the code (the scan held to the oldest Godot: tests/unit/test_api_version.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import REPO
from gdres.engine.godot import probe
from gdscript_uses import Scanner, missing
from godot_api import Api, from_xml
from unit.test_api_version import report


@pytest.mark.engine
def test_everything_the_scan_finds_exists_in_the_engine_here(godot_bin: str, tmp_path: Path) -> None:
    engine = probe(godot_bin)
    subprocess.run(
        [godot_bin, "--headless", "--doctool", str(tmp_path)], capture_output=True, timeout=120, check=True
    )
    here = Api(version=engine.version, classes=from_xml(tmp_path))
    uses = Scanner(here).scan(REPO / "gdscript")
    problems = list(missing(uses, here, engine.version_tuple[:2]))
    if problems:
        pytest.fail(f"the scan misreads the code, or the code is broken on the engine here: {report(problems, here)}")
    # The scan reads the code, not just its words: calls on typed values are checked against their class.
    found = {(use.kind, use.owner, use.name) for use in uses}
    assert ("member", "OS", "read_buffer_from_stdin") in found
    assert ("member", "PackedByteArray", "get_string_from_utf8") in found
    assert ("member", "ResourceLoader", "CACHE_MODE_IGNORE") in found
    assert ("global", "", "PROPERTY_USAGE_STORAGE") in found
