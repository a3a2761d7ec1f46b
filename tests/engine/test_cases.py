"""Data-driven cases: each file in tests/cases/ is a list of requests and the replies they must get.

A case file is a JSON object: `"about"` (what it shows) and `"steps"`, each `{"request", "reply"}`.
`"$PROJECT"` in a request stands for the fresh copy of the fixture project the case runs in, and
`"$UID"` in a reply for the uid:// the engine drew for a file the case created. An
expected error may give `"message_has"` (substrings the message must contain) instead of the whole
`"message"`. Every step whose expected reply is an error also asserts that the project's files are
byte-for-byte unchanged by it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any, Union

import pytest
from pydantic import Discriminator, Tag, TypeAdapter

from conftest import REPO, file_etag, snapshot
from gdres import Bridge
from gdres.requests.models import REPLIES, REQUEST_MODELS
from gdres.requests.replies import ErrorReply

CASES = REPO / "tests" / "cases"
PLACEHOLDER = "$PROJECT"
DRAWN_UID = "$UID"
ETAG = "$ETAG"


def _filled(value: Any, project: Path) -> Any:
    if isinstance(value, str):
        return value.replace(PLACEHOLDER, str(project))
    if isinstance(value, list):
        return [_filled(item, project) for item in value]
    if isinstance(value, dict):
        return {key: _filled(item, project) for key, item in value.items()}
    return value


def _matches(expected: dict[str, Any], reply: dict[str, Any], project: Path) -> dict[str, Any]:
    """Return `reply` as the case expects to see it: its message checked by substrings if asked, a
    drawn uid as "$UID", and an etag that is the sha256 of a file the reply names as "$ETAG"."""
    if expected.get("uid") == DRAWN_UID and re.fullmatch(r"uid://[a-z0-9]{8,13}", str(reply.get("uid"))):
        reply = {**reply, "uid": DRAWN_UID}
    named = [project / value for key, value in reply.items() if key.endswith("path") and isinstance(value, str)]
    if expected.get("etag") == ETAG and reply.get("etag") in {file_etag(path) for path in named if path.is_file()}:
        reply = {**reply, "etag": ETAG}
    error = expected.get("error")
    if not (isinstance(error, dict) and "message_has" in error and isinstance(reply.get("error"), dict)):
        return reply
    message = str(reply["error"].get("message", ""))
    missing = [part for part in error["message_has"] if part not in message]
    assert not missing, f"error message {message!r} lacks {missing}"
    shown = {key: value for key, value in reply["error"].items() if key != "message"}
    return {**reply, "error": {**shown, "message_has": error["message_has"]}}


def _kind(reply: Any) -> str:
    return "error" if reply.get("result") == "error" else str(reply.get("op"))


_CHOICES = (Annotated[ErrorReply, Tag("error")], *(Annotated[reply, Tag(op)] for op, reply in REPLIES.items()))
REPLY_ADAPTER: TypeAdapter[Any] = TypeAdapter(
    Annotated[Union.__getitem__(_CHOICES), Discriminator(_kind)]  # type: ignore[arg-type]
)
"""Any reply, validated against its operation's type (an error reply against ErrorReply)."""


def _canonical(reply: dict[str, Any]) -> dict[str, Any]:
    """The reply with its echoed members under their own names (it echoes the request's spelling)."""
    model = REQUEST_MODELS.get(str(reply.get("op")))
    own = model.own_names() if model is not None else {}
    return {own.get(key, key): value for key, value in reply.items()}


@pytest.mark.parametrize("case", sorted(CASES.glob("*.json")), ids=lambda p: p.stem)
def test_case(case: Path, project: Path, bridge: Bridge) -> None:
    data = json.loads(case.read_text(encoding="utf-8"))
    for number, step in enumerate(data["steps"], 1):
        request = _filled(step["request"], project)
        expected = step["reply"]
        before = snapshot(project)
        reply = bridge.run(request)
        assert _matches(expected, reply, project) == expected, f"step {number} of {case.name}"
        REPLY_ADAPTER.validate_python(_canonical(reply))
        if expected.get("result") == "error":
            assert snapshot(project) == before, f"step {number} of {case.name} changed files"
