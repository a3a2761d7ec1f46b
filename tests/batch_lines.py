"""Requests and replies as a batch's lines: what tests/engine/test_batch.py and the fleet's tests
(tests/unit and tests/engine test_fleet.py) write and read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def create(project: Path, path: str, roughness: float, **extra: Any) -> dict[str, Any]:
    return {"op": "material_create", "project_path": str(project), "material_type": "StandardMaterial3D",
            "resource_path": path, "properties": {"roughness": roughness}, **extra}


def read(project: Path, path: str, **extra: Any) -> dict[str, Any]:
    return {"op": "resource_read", "project_path": str(project), "resource_path": path, **extra}


def jsonl(requests: list[Any]) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in requests)


def replies(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]
