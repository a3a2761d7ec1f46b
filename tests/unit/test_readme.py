"""The README stays one screen, every page it points to exists, and it has an example of every operation
(each example run as written: tests/engine/test_readme.py)."""

from __future__ import annotations

import json
import re
from itertools import pairwise
from typing import Any

from conftest import REPO

BLOCK = re.compile(r"```json\n(.*?)```", re.S)


def examples() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(request, reply) for each request block followed by its reply block."""
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    blocks = [json.loads(text) for page in pages for text in BLOCK.findall(page.read_text())]
    return [(request, reply) for request, reply in pairwise(blocks)
            if "project_path" in request and reply.get("op") == request.get("op") and "result" in reply]


def test_the_readme_has_an_example_of_every_operation() -> None:
    from gdres.requests.models import OPERATIONS

    assert {request["op"] for request, _ in examples()} == set(OPERATIONS)


def test_the_readme_is_one_screen_and_its_links_lead_somewhere() -> None:
    text = (REPO / "README.md").read_text()
    assert len(text.splitlines()) <= 80
    for target in re.findall(r"\]\(([^)#]+)", text):
        assert (REPO / target).is_file(), target
    for page in (REPO / "docs").glob("*.md"):
        for target in re.findall(r"\]\(([^)#:]+\.md)", page.read_text()):
            assert (page.parent / target).is_file(), (page.name, target)
