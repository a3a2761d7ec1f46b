"""One error vocabulary: the codes the engine side declares are the ones the bridge knows it sends,
each code names one class, and a code the bridge does not know passes through unchanged."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gdres import errors
from gdres.scripts import gdscript_dir
from gdres.serving import locks


def test_each_code_names_one_class_and_every_code_the_engine_sends_has_one() -> None:
    """The engine side declares the codes it sends (gdscript/job.gd), the bridge one class per code:
    a caller catches an engine's refusal by its class (gdres.NotFound)."""
    def every(cls: type[errors.BridgeError]) -> list[type[errors.BridgeError]]:
        return [sub for direct in cls.__subclasses__() for sub in (direct, *every(direct))]

    codes = [cls.code for cls in every(errors.BridgeError) if "code" in cls.__dict__]
    assert len(codes) == len(set(codes))
    sent = re.findall(r'^const \w+: String = "(\w+)"$', (gdscript_dir() / "job.gd").read_text(), re.MULTILINE)
    assert len(sent) == len(set(sent)) and "not_found" in sent
    assert set(codes) >= set(sent)


def test_an_unknown_code_is_kept_as_it_came() -> None:
    error = errors.from_wire({"code": "quota_exceeded", "message": "too many", "field": "properties"})
    assert error.to_wire() == {"code": "quota_exceeded", "message": "too many", "field": "properties"}
    assert type(errors.from_wire({"code": "not_found", "message": "x"})) is errors.NotFound


def test_a_lock_folder_that_cannot_be_made_is_a_save_failed_error(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the lock folder should be")
    monkeypatch.setattr(locks, "lock_dir", lambda: blocker / "locks")
    with pytest.raises(errors.SaveFailed, match="could not be taken"):
        locks.try_hold([tmp_path / "scene.tscn"])


def test_an_error_reply_echoes_every_member_that_names_a_file_or_node_of_any_model() -> None:
    # ECHOED_PATHS serves requests that could not be parsed, so it cannot ask their model.
    from gdres.requests.models import REQUEST_MODELS
    from gdres.requests.request import ECHOED_PATHS

    named = {"node_path", "parent_path"}
    for model in REQUEST_MODELS.values():
        for member in model.files:
            named.update([member, *model.spellings.get(member, ())])
    assert set(ECHOED_PATHS) == named


def test_every_operation_has_its_script_and_every_script_an_operation() -> None:
    from gdres.requests.models import OPERATIONS

    assert {script.stem for script in (gdscript_dir() / "ops").glob("*.gd")} == set(OPERATIONS)


def test_the_godot_3_names_are_one_table_that_both_sides_read() -> None:
    from gdres.scripts import godot3_names

    renamed = godot3_names()["classes"]
    assert renamed["SpatialMaterial"] == "StandardMaterial3D" and renamed["BoxShape"] == "BoxShape3D"
    sources = [*(gdscript_dir()).rglob("*.gd"), *Path(errors.__file__).parent.rglob("*.py")]
    restated = [str(path) for path in sources
                if "SpatialMaterial" in path.read_text() or '"BoxShape"' in path.read_text()]
    assert restated == []
    assert 'preload("godot3_names.json")' in (gdscript_dir() / "values" / "props.gd").read_text()
