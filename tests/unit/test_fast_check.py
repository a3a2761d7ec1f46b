"""A request that arrives as text skips check_input's walk when its text shows none of what the walk
refuses (gdres/requests/request.py `_may_fail_check`). These hold the shortcut to the walk: any text gets the
reply its decoded object gets, which always walks."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gdres.requests.request import MAX_DEPTH, Job, Roots, prepare


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fast-check")
    (root / "project.godot").write_text("config_version=5\n")
    return root


def outcome(item: Any, project: Path) -> Any:
    prepared = prepare(item, Roots(None))
    return prepared.message if isinstance(prepared, Job) else prepared


def request(project: Path, value: Any) -> dict[str, Any]:
    return {"op": "material_create", "project_path": str(project), "material_type": "StandardMaterial3D",
            "resource_path": "m.tres", "properties": {"albedo_color": value}, "id": value}


HOSTILE = [
    math.nan, math.inf, -math.inf, 2**53 + 1, -(2**53) - 1, 10**400, 1e308 * 10, "a\0b", "\ud800", "x\udfffy",
    [[[[1]]]], {"k\0": 1}, {"\ud83d": 2}, "é", "\u0000",
]
"""Values check_input refuses (or that only look like it), and text escapes of them."""


@pytest.mark.parametrize("value", HOSTILE, ids=repr)
def test_text_gets_the_reply_its_object_gets(project: Path, value: Any) -> None:
    raw = request(project, value)
    for text in (json.dumps(raw), json.dumps(raw, ensure_ascii=False)):
        try:
            decoded = json.loads(text)
        except ValueError:
            continue
        assert outcome(text, project) == outcome(decoded, project)


def test_deep_nesting_is_refused_from_text(project: Path) -> None:
    value: Any = 1
    for _ in range(MAX_DEPTH + 1):
        value = [value]
    text = json.dumps(request(project, value))
    reply = outcome(text, project)
    assert reply["error"]["code"] == "invalid_request"
    assert reply == outcome(json.loads(text), project)


def test_a_plain_request_passes(project: Path) -> None:
    message = outcome(json.dumps(request(project, "#ff0000")), project)
    assert message["properties"] == {"albedo_color": "#ff0000"}


scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=6),
)
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.text(max_size=3), inner, max_size=3)),
                      max_leaves=12)


@settings(max_examples=400, deadline=None)
@given(value=values, ascii_only=st.booleans())
def test_any_value_gets_the_same_reply_as_text(project: Path, value: Any, ascii_only: bool) -> None:
    raw = request(project, value)
    text = json.dumps(raw, ensure_ascii=ascii_only)
    assert outcome(text, project) == outcome(json.loads(text), project)
