"""if_match checked before any engine sees it: a malformed etag is refused (conflicts, against the real
engine: tests/engine/test_if_match.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import run_cli

MATERIAL = "materials/base.tres"


def update(project: Path, roughness: float, **extra: Any) -> dict[str, Any]:
    return {"op": "resource_update", "project_path": str(project), "resource_path": MATERIAL,
            "properties": {"roughness": roughness}, **extra}


def test_a_malformed_etag_is_refused_before_any_engine_sees_it(project: Path) -> None:
    done = run_cli("run", json.dumps(update(project, 0.5, if_match="W/\"abc\"")))
    reply = json.loads(done.stdout)
    assert reply["error"]["code"] == "invalid_request" and reply["error"]["field"] == "if_match"
