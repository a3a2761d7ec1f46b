"""First contact (issue 26), before an engine: a misspelt member gets a suggestion (the rest, against a
real project: tests/engine/test_first_contact.py)."""

from __future__ import annotations

import pytest

from gdres.errors import InvalidRequest
from gdres.requests.models import parse_request


def test_a_misspelt_member_gets_a_suggestion() -> None:
    with pytest.raises(InvalidRequest, match="unknown member 'propertis'; did you mean 'properties'"):
        parse_request({"op": "material_create", "project_path": "p", "material_type": "StandardMaterial3D",
                       "resource_path": "m.tres", "propertis": {}})
