"""The import's own file handling, pure: which projects need the editor's tables for an allow_scripts
import, and reading artefacts back and writing them without following a link (the import itself,
behind the wall: tests/engine/test_import_shadow.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.mark.parametrize(("files", "needed"), [
    ({"a.gd": "extends Node\n"}, False),
    ({"a.gd": "class_name Stats\nextends Resource\n"}, True),
    ({"a.gd": "@tool\nextends Resource\n@icon(\"x.svg\") class_name Stats\n"}, True),
    ({"a.gd": "extends Node\n# class_name in a comment\nvar s := \"class_name X\"\n"}, False),
    ({"hidden/.gdignore": "", "hidden/a.gd": "class_name Stats\n"}, False),
    ({".git/a.gd": "class_name Stats\n"}, False),
    ({"lib/native.gdextension": "[configuration]\n"}, True),
])
def test_an_allow_scripts_request_imports_with_scripts_only_a_project_that_has_named_classes(
        tmp_path: Path, files: dict[str, str], needed: bool) -> None:
    from gdres.serving import imports

    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert imports.needs_editor_tables(tmp_path) == needed


def test_files_are_read_back_and_written_without_following_a_link_on_the_way(tmp_path: Path) -> None:
    from gdres.serving import nofollow

    made, root, outside = tmp_path / "made", tmp_path / "root", tmp_path / "outside"
    for folder in (made / "real", root, outside):
        folder.mkdir(parents=True)
    (outside / "secret").write_text("secret")
    (made / "real" / "a.ctex").write_bytes(b"artefact")
    (made / "real" / "link").symlink_to(outside / "secret")
    (made / "real" / "folder").mkdir()
    (made / "linked").symlink_to(outside)
    assert list(nofollow.regular_files(made, ["real"])) == [("a.ctex", b"artefact")]
    assert list(nofollow.regular_files(made, ["linked"])) == []
    nofollow.write(root, ["deep", "a.ctex"], b"artefact")
    assert (root / "deep" / "a.ctex").read_bytes() == b"artefact"
    (root / "sent").symlink_to(outside)
    with pytest.raises(OSError, match="link"):
        nofollow.write(root, ["sent", "a.ctex"], b"artefact")
    (root / "deep" / "b.ctex").symlink_to(outside / "secret")
    nofollow.write(root, ["deep", "b.ctex"], b"new")
    assert (outside / "secret").read_text() == "secret" and (root / "deep" / "b.ctex").read_bytes() == b"new"
    assert sorted(path.name for path in outside.iterdir()) == ["secret"]
    assert sorted(path.name for path in (root / "deep").iterdir()) == ["a.ctex", "b.ctex"]


def test_reading_back_neither_hangs_nor_holds_a_huge_file_nor_takes_a_path_for_a_name(tmp_path: Path) -> None:
    # A fourth red-team read: a FIFO among the artefacts held the bridge's open forever (and the
    # project's import lock with it), and a sparse file of a terabyte was read into memory.
    from gdres.serving import nofollow

    made = tmp_path / "made"
    made.mkdir()
    os.mkfifo(made / "a.ctex")
    with open(made / "b.ctex", "wb") as sparse:
        sparse.truncate(nofollow.MOST + 1)
    (made / "c.ctex").write_bytes(b"artefact")
    assert list(nofollow.regular_files(tmp_path, ["made"])) == [("c.ctex", b"artefact")]
    for parts in (["..", "x"], [".", "x"], ["a/b"], [""]):
        with pytest.raises(OSError, match="is no file name"):
            nofollow.write(tmp_path / "made", parts, b"x")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["made"]
