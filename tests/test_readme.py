"""Every JSON request in the README and docs/ runs as written, from the repository root, and gives the
reply printed after it (on a copy of examples/project at the same relative path); the README stays
one screen and every page it points to exists."""

from __future__ import annotations

import json
import re
import shutil
from itertools import pairwise
from pathlib import Path
from typing import Any

from conftest import REPO, file_etag
from gdres import Bridge
from gdres.requests.models import parse_request

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


def test_every_readme_example_runs_as_written(godot_bin: str, tmp_path: Path) -> None:
    shutil.copytree(REPO / "examples" / "project", tmp_path / "examples" / "project")
    with Bridge(godot_bin, relative_to=str(tmp_path)) as bridge:
        for request, expected in examples():
            assert request["project_path"] == "examples/project"
            reply = bridge.run(request)
            if "etag" in reply:
                # The sha256 of the file as it is now (a dry run changed nothing). A file that holds a
                # uid drawn in this run (below) has other bytes on each run: the page shows one such.
                model = parse_request(request)
                assert model.subject is not None
                # A move's file is at its new path once the reply comes (a dry run's is where it was).
                moved = request["op"] == "resource_move" and not request.get("dry_run")
                named = request["dest_path"] if moved else request[model.spelled(model.subject)]
                file = tmp_path / "examples" / "project" / str(named)
                if request["op"] in ("import_read", "import_update"):
                    file = file.with_name(file.name + ".import")  # the settings' file, what if_match guards
                assert reply["etag"] == file_etag(file), request
                reply["etag"] = expected.get("etag")
            if request["op"] not in ("resource_read", "resource_update", "scene_read") and "uid" in reply:
                # A new file's uid is drawn at random: the page shows one such uid.
                assert re.fullmatch(r"uid://[a-y0-8]{8,13}", reply["uid"]), reply
                reply["uid"] = expected.get("uid")
            assert reply == expected, request


def test_the_readme_is_one_screen_and_its_links_lead_somewhere() -> None:
    text = (REPO / "README.md").read_text()
    assert len(text.splitlines()) <= 80
    for target in re.findall(r"\]\(([^)#]+)", text):
        assert (REPO / target).is_file(), target
    for page in (REPO / "docs").glob("*.md"):
        for target in re.findall(r"\]\(([^)#:]+\.md)", page.read_text()):
            assert (page.parent / target).is_file(), (page.name, target)
