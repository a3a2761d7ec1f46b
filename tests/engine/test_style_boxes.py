"""style_box_create against the real engine: each of the four classes is written and reads back."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import file_etag, file_uid, snapshot
from gdres import Bridge
from gdres.requests.models import STYLE_TYPES

MARGIN = {"content_margin_top": 7}


@pytest.mark.parametrize("style_type", STYLE_TYPES)
def test_each_style_box_class_is_saved(project: Path, bridge: Bridge, style_type: str) -> None:
    made = bridge.run({"op": "style_box_create", "project_path": str(project), "save_path": "ui/box.tres",
                       "style_type": style_type, "properties": MARGIN})
    assert made == {"op": "style_box_create", "save_path": "ui/box.tres", "type": style_type,
                    "uid": file_uid(project / "ui/box.tres"), "etag": file_etag(project / "ui/box.tres"),
                    "result": "ok"}
    assert (project / "ui/box.tres").read_text().startswith(f'[gd_resource type="{style_type}"')
    read = bridge.run({"op": "resource_read", "project_path": str(project), "resource_path": "ui/box.tres"})
    assert read["type"] == style_type and read["properties"] == {"content_margin_top": 7.0}


def test_a_texture_of_the_wrong_class_is_refused(project: Path, bridge: Bridge) -> None:
    before = snapshot(project)
    reply = bridge.run({"op": "style_box_create", "project_path": str(project), "resource_path": "ui/t.tres",
                        "style_type": "StyleBoxTexture", "properties": {"texture": "values/deep.tres"}})
    assert reply["error"]["code"] == "invalid_value"
    assert "Texture2D" in reply["error"]["message"]
    assert snapshot(project) == before
