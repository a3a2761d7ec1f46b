"""Every JSON request in the README and docs/ runs as written, from the repository root, and gives the
reply printed after it (on a copy of examples/project at the same relative path)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from conftest import REPO, file_etag
from gdres import Bridge
from gdres.requests.models import parse_request
from unit.test_readme import examples


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
