"""One request's way through the bridge, as pure functions: `prepare()` on the way in, `finish()` on
the way out. `Bridge`, the batch pool and the MCP server all go through them, so each request is
decoded, checked, parsed, confined and encoded exactly once.

    text or dict ──prepare──▶ Job (engine message, real paths and their roles, names for the reply)
                     └──────▶ error reply (nothing reaches an engine)
    Job + engine answer ──finish──▶ reply

The engine receives the models' own member names; where the request gave a member under another
spelling (`path` for resource_path), the message tells the engine which, and the engine's errors
name it so: nothing is renamed on the way back.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gdres.errors import BridgeError, InvalidJson, InvalidPath, InvalidRequest, InvalidValue, from_wire
from gdres.requests import paths, uids

if TYPE_CHECKING:
    from gdres.requests.models import AnyRequest

MAX_DEPTH = 64
"""Deepest nesting of arrays and objects accepted inside one request member."""
_EXACT_INT = 2**53
_MESSAGE_MAX = 1000
_F32 = struct.Struct("<f")
_ROOTS_CACHED = 64

Reply = dict[str, Any]
"""A reply as it goes out: `result` "ok" with the operation's data, or "error" with `error`."""
Item = str | dict[str, Any]
"""One request as a caller hands it over: its JSON text, or the decoded object."""

READ, WRITE = 0, 1
"""A file's role in a request: only read, or written (created, replaced or edited)."""

ECHOED_PATHS = ("resource_path", "path", "save_path", "source_path", "dest_path", "scene_path", "node_path",
                "parent_path", "instance", "shader_path")
"""Every request member naming a file or node, in the order an error reply lists them (a request
that could not be parsed has no model to ask; tests/unit/test_vocabulary.py holds this to the models)."""


@dataclass(frozen=True, slots=True)
class Job:
    """A request ready for an engine."""

    request: AnyRequest
    root: Path
    """The project's real path."""
    message: dict[str, Any]
    """What the engine gets: the request's members under the models' names, paths as res:// paths."""
    files: tuple[tuple[str, int], ...]
    """Each file the request names, as (real path, READ or WRITE): one file named two ways (a
    link) is one file for ordering and locks."""
    allows_scripts: bool
    """Whether it may run project code, and so is served by an engine of its own."""
    rewrites: bool
    """Whether the engine reads, changes and writes back a file (a scene edit, an update in
    place): such a request holds its files' locks while it is in flight (gdres/serving/locks.py)."""

    @property
    def dry_run(self) -> bool:
        """Whether it only says what it would write (the engine changes nothing, and imports nothing)."""
        return bool(getattr(self.request, "dry_run", False))

    @property
    def reaches_project(self) -> bool:
        """Whether it may write any file of its project (a move rewrites whatever names the file)."""
        return type(self.request).reaches_project

    @property
    def ordered(self) -> tuple[tuple[str, int], ...]:
        """What it is ordered by among a pool's requests (serving/ordering.py): its files, and its
        project, which every request reads and one that may write any file of it writes, so that
        such a request follows every unfinished one on the project, and every later one follows it."""
        return (*self.files, (str(self.root), WRITE if self.reaches_project else READ))

    @property
    def written(self) -> list[str]:
        """The real paths of the files it writes."""
        return [real for real, role in self.files if role == WRITE]


class Roots:
    """Project folders resolved once per batch: a request's project_path to its real path (and the
    folders below them that its paths went through, `folders`). `on_new` is told each project the
    first time a batch names it, before any of its requests is checked against the project's files."""

    def __init__(self, relative_to: str | None, on_new: Callable[[Path], object] | None = None) -> None:
        self.relative_to = relative_to
        self._on_new = on_new
        self._known: dict[str, Path | BridgeError] = {}
        self.folders = paths.Folders()
        """The folders below those projects that the batch's paths went through (see paths.Folders)."""

    def resolve(self, project_path: str) -> Path:
        if self.relative_to is None and not os.path.isabs(project_path):
            # Taken against the current folder, which may have changed since it was last resolved.
            project_path = os.path.join(os.getcwd(), project_path)
        known = self._known.get(project_path)
        if known is None:
            if len(self._known) >= _ROOTS_CACHED:
                self._known.clear()
            try:
                known = Path(paths.project_root(project_path, self.relative_to))
                # Before anything of the cache is used for it (a journal recovered, say): every root a
                # pool's engines serve comes through here (serving/pool.py _group()).
                paths.cache_outside(str(known))
            except BridgeError as exc:
                known = exc
            self._known[project_path] = known
            if self._on_new is not None and isinstance(known, Path):
                self._on_new(known)
        if isinstance(known, BridgeError):
            raise known
        return known


def prepare(item: Any, roots: Roots) -> Job | Reply:
    """Turn one request (its text, or the decoded object) into a Job, or into its error reply."""
    raw: Any = None
    try:
        raw = decode(item) if isinstance(item, str) else item
        if not isinstance(raw, dict):
            raise InvalidRequest(f"a request is a JSON object, not {type(raw).__name__}")
        if not isinstance(item, str) or _may_fail_check(item):
            check_input(raw)
        # Imported on first use: pydantic costs ~0.1 s, which `run` spends while its engine starts.
        from gdres.requests.models import parse_request

        request = parse_request(raw)
    except BridgeError as exc:
        return refuse(raw, exc)
    try:
        root = roots.resolve(request.project_path)
        message, files, rewrites = _engine_message(request, root, roots.folders)
    except BridgeError as exc:
        return refuse(request, exc)
    return Job(request, root, message, files, request.allow_scripts, rewrites)


def _engine_message(request: AnyRequest, root: Path,
                    folders: paths.Folders) -> tuple[dict[str, Any], tuple[tuple[str, int], ...], bool]:
    """The engine's message, each file the request names with its role, and whether the engine
    rewrites one of them in place (worked out once: the pool asks several times per request)."""
    members = type(request).files
    # Member by member: dumping the model would copy every property value.
    message: dict[str, Any] = {}
    for key in type(request).model_fields:
        value = getattr(request, key)
        if value is None or key in ("id", "project_path") or key in members:
            continue
        message[key] = value
    spelled = request.respelled
    if spelled:
        message["names"] = spelled
    files: list[tuple[str, int]] = []
    rewrites = False
    named: dict[str, str] = {}
    """Each real path met so far, with the member that named it."""
    for key, member in members.items():
        value = getattr(request, key)
        if value is None:
            continue
        field = request.spelled(key)
        if value.startswith(uids.PREFIX):
            value = uids.resolve(root, value, field=field)
        message[key], real = paths.resolve(root, value, field=field, suffixes=member.suffixes, folders=folders)
        if real in named:
            raise InvalidPath(f"{field} must differ from {named[real]} (it names the same file)", field=field)
        named[real] = field
        files.append((real, WRITE if member.writes else READ))
        rewrites = rewrites or member.in_place
    guard = getattr(request, "if_match", None)
    if guard is not None:
        subject = request.subject
        assert subject is not None  # every writing operation names a file
        message["if_match"] = {message[subject]: guard}
    return message, tuple(files), rewrites


def finish(job: Job, answer: dict[str, Any]) -> Reply:
    """Return the reply to a Job from the engine's answer."""
    if not answer.get("ok"):
        return refuse(job.request, from_wire(answer.get("error") or {}))
    etags = answer.get("etags")
    subject = job.request.subject if etags else None
    etag = etags.get(job.message.get(subject)) if etags and subject is not None else None
    return _ok(job.request, answer.get("reply") or {}, etag)


def refuse(source: Any, error: BridgeError) -> Reply:
    """Return the error reply to a request (a parsed model, or whatever was received)."""
    wire = error.to_wire()
    message = wire["message"]
    if len(message) > _MESSAGE_MAX:
        # A message quotes the offending value, which may be megabytes long: keep both ends.
        wire["message"] = f"{message[: _MESSAGE_MAX - 300]} [...] {message[-250:]}"
    return {**_echo(source, every_path=True), "result": "error", "error": wire}


def _echo(source: Any, every_path: bool = False) -> dict[str, Any]:
    """The members every reply repeats from its request, op and id, and with `every_path` each
    path member the request had, as written (as an error reply gives them; a success reply repeats
    the members its model names, _ok())."""
    echo: dict[str, Any] = {}
    if isinstance(source, dict):
        op = source.get("op")
        echo["op"] = op if isinstance(op, str) else None
        fields = source
    elif hasattr(source, "spellings"):
        # A request model (gdres/requests/models.py, imported only once a request is parsed).
        echo["op"] = source.op
        members = type(source).model_fields  # a Python-level property in pydantic 2.11+ (~1 us): read once
        fields = {key: getattr(source, key) for key in ("id", *ECHOED_PATHS) if key in members}
        main = source.main_file
        if main is not None:
            fields[source.spelled(main)] = fields.pop(main)
    else:
        return {"op": None}
    ident = fields.get("id")
    if isinstance(ident, (str, int)) and not isinstance(ident, bool):
        echo["id"] = ident
    if every_path:
        echo.update((key, fields[key]) for key in ECHOED_PATHS if isinstance(fields.get(key), str))
    return echo


def _ok(request: AnyRequest, data: dict[str, Any], etag: str | None = None) -> Reply:
    reply = _echo(request)
    for key in type(request).echoed:
        value = getattr(request, key, None)
        if value is not None:
            reply[request.spelled(key)] = value
    if "properties" in data:
        data = {**data, "properties": tidy_floats(data["properties"])}
    if "nodes" in data:
        data = {**data, "nodes": [{**node, "properties": tidy_floats(node["properties"])} for node in data["nodes"]]}
    if "changes" in data:
        data = {**data, "changes": [diffed(change) for change in data["changes"]]}
    reply.update(data)
    if etag is not None:
        reply["etag"] = etag
    reply["result"] = "ok"
    return reply


def diffed(change: dict[str, Any]) -> dict[str, Any]:
    """A dry run's change as the reply gives it: the engine's old and new text made a unified diff,
    named as git names files (`a/`, `b/`; /dev/null for a file that is not there yet; a file that
    moves and changes: `a/` its old path)."""
    path = change["path"]
    old = "/dev/null" if change["action"] == "create" else f"a/{change.get('from', path)}"
    if change.get("binary"):
        diff = f"Binary files {old} and b/{path} differ\n"
    else:
        lines = difflib.unified_diff((change.get("before") or "").splitlines(keepends=True),
                                     change["after"].splitlines(keepends=True), old, f"b/{path}")
        diff = "".join(line if line.endswith("\n") else f"{line}\n\\ No newline at end of file\n"
                       for line in lines)
    return {"path": path, "action": change["action"], "diff": diff}


# ----- decoding and the checks pydantic does not make ------------------------------------------


class HugeInteger(str):
    """An integer literal too long for Python to convert (over 4,300 digits): check_input refuses it."""


def _integer(literal: str) -> int | HugeInteger:
    try:
        return int(literal)
    except ValueError:
        return HugeInteger(literal)


_DECODER = json.JSONDecoder(parse_int=_integer)
"""Made once: json.loads() with an option makes a decoder per call (~2 us of a request's ~100)."""


def decode(text: str) -> Any:
    """Return the JSON value of one request's text, or raise InvalidJson."""
    if text.startswith("\0"):
        raise InvalidJson("the request is not UTF-8; send one JSON object")
    if not text.strip():
        raise InvalidJson("the request is empty; send one JSON object")
    if text.startswith("\ufeff"):
        raise InvalidJson("the request starts with a byte order mark (U+FEFF); send UTF-8 without one")
    try:
        raw = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise InvalidJson(f"the request is not valid JSON ({exc.msg} at column {exc.colno}); "
                          "send one JSON object") from None
    except (ValueError, RecursionError):
        raise InvalidJson("the request is not valid JSON; send one JSON object") from None
    if not isinstance(raw, dict):
        raise InvalidJson(f"the request is a JSON {type(raw).__name__}, not an object")
    return raw


VALUE_MEMBERS = frozenset({"properties", "shape_params", "property_overrides"})
"""Members whose contents are property values (resource_read's `properties` is a list of names)."""


_SUSPECT_WORDS = ("\\u", "NaN", "Infinity")
_SUSPECT_NUMBER = re.compile(r"\d(?:[eE]|\d{15})")
"""What check_input's refusals need in a request's text: an escape (a NUL, a lone surrogate), a
non-finite number, an exponent (1e999 is inf), 16 digits in a row (beyond 2^53). The words are
looked for with `in`, and the numbers with one pattern that starts at a digit: half the time of one
pattern of five alternatives, tried at every character."""


def _may_fail_check(text: str) -> bool:
    """Whether check_input could refuse the request with this text (False: it certainly would not,
    and the walk, ~10 us of the ~100 us a request costs the front end, is skipped).

    Nesting deeper than MAX_DEPTH needs more than MAX_DEPTH brackets; everything else it refuses
    is written with one of the _SUSPECT_ forms or a character beyond ASCII.
    """
    return (not text.isascii() or text.count("[") + text.count("{") > MAX_DEPTH
            or any(word in text for word in _SUSPECT_WORDS) or _SUSPECT_NUMBER.search(text) is not None)


def check_input(raw: dict[str, Any]) -> None:
    """Refuse what cannot cross the pipe intact: deep nesting, inexact numbers, broken text.

    Every member is walked without recursion, so no nesting depth can exhaust Python's stack,
    and the engine's parser and value codec never see more than MAX_DEPTH levels. A number or a
    string that no property can hold is invalid_value inside property values, invalid_request in
    any other member.
    """
    for key, value in raw.items():
        field = str(key)
        values = field in VALUE_MEMBERS and not (field == "properties" and raw.get("op") == "resource_read")
        stack: list[tuple[Any, int]] = [(value, 1)]
        while stack:
            item, depth = stack.pop()
            if isinstance(item, dict):
                _check_scalars(field, list(item.keys()), values)
                children: Any = item.values()
            elif isinstance(item, (list, tuple)):
                children = item
            else:
                _check_scalars(field, [item], values)
                continue
            if depth > MAX_DEPTH:
                raise InvalidRequest(f"{field} nests arrays or objects deeper than {MAX_DEPTH} levels", field=field)
            nested = _check_scalars(field, children, values)
            stack.extend((child, depth + 1) for child in nested)


def _check_scalars(field: str, items: Any, values: bool) -> list[Any]:
    """Check the scalars among `items` (inside property values when `values`); return the containers."""
    nested: list[Any] = []
    error = InvalidValue if values else InvalidRequest
    for item in items:
        if isinstance(item, (dict, list, tuple)):
            nested.append(item)
        elif isinstance(item, float):
            if not math.isfinite(item):
                hint = '; write non-finite floats as the strings "inf", "-inf" or "nan"' if values else ""
                raise error(f"{field} holds the number {item}{hint}", field=field)
        elif isinstance(item, int) and not isinstance(item, bool) and abs(item) > _EXACT_INT:
            raise error(
                f"{field} holds the integer {item}, beyond the ±2^53 that JSON numbers carry exactly",
                field=field,
            )
        elif isinstance(item, HugeInteger):
            raise error(f"{field} holds an integer of {len(item.lstrip('-'))} digits, beyond the ±2^53 that JSON "
                        "numbers carry exactly", field=field)
        elif isinstance(item, str):
            if values and "\0" in item:
                # The engine would store U+FFFD in its place and report the value as set. (Paths
                # with a NUL get their own codes, from gdres/requests/paths.py.)
                raise InvalidValue(f"{field} holds text with a NUL character, which a Godot string cannot hold",
                                   field=field)
            if not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    raise InvalidRequest(
                        f"{field} holds text that is not valid Unicode (an unpaired surrogate)", field=field
                    ) from None
    return nested


def tidy_floats(value: Any) -> Any:
    """Print each float as the shortest decimal naming the same 32-bit float, when it is one.

    Resources store 32-bit floats, so the engine reports 0.3 as 0.300000011920929; 0.3 sets the
    same stored value, so a read → create → read round trip still gives identical JSON.
    """
    if isinstance(value, float):
        return _shortest_float32(value)
    if isinstance(value, list):
        return [tidy_floats(item) for item in value]
    if isinstance(value, dict):
        return {key: tidy_floats(item) for key, item in value.items()}
    return value


def _shortest_float32(number: float) -> float:
    try:
        (single,) = _F32.unpack(_F32.pack(number))
    except OverflowError:
        return number
    # The engine prints floats at full precision, so a value it stores as a 32-bit float comes
    # exactly; anything else (a double, such as a script's exported float) is left untouched.
    if not math.isfinite(single) or single != number:
        return number
    for digits in range(6, 10):
        short = float(f"{single:.{digits}g}")
        if _F32.unpack(_F32.pack(short))[0] == single:
            return short
    return number
