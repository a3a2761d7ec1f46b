"""The Python API: `Bridge` turns request dicts into reply dicts through warm engine workers."""

from __future__ import annotations

import json
import logging
import math
import os
import struct
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any, Callable, Sequence, TypeVar, Union

from . import engine as engines
from . import imports, locks, paths
from .errors import BridgeError, InvalidJson, InvalidPath, InvalidRequest, InvalidValue, from_wire
from .models import (
    AnyRequest,
    MaterialCreate,
    Request,
    ResourceDuplicate,
    ResourceRead,
    ResourceUpdate,
    ShapeCreate,
    parse_request,
)
from .worker import MAX_REQUESTS, MAX_RSS, START_TIMEOUT, Release, Worker

DEFAULT_TIMEOUT = engines.DEFAULT_TIMEOUT
MAX_DEPTH = 64
"""Deepest nesting of arrays and objects accepted inside one request member."""
_EXACT_INT = 2**53
_MESSAGE_MAX = 1000
_F32 = struct.Struct("<f")


_Host = TypeVar("_Host", bound="EngineHost")
StrPath = Union[str, "os.PathLike[str]"]
"""A path member of a typed method: a string or a pathlib.Path."""
log = logging.getLogger("bridge")


class EngineHost:
    """What `Bridge` and the batch `Pool` share: the Godot binary found once, workers started with
    the same settings, the one-time import of a project's assets, and closing on exit."""

    def __init__(
        self,
        godot: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        verbose: bool = False,
        auto_import: bool = True,
        start_timeout: float = START_TIMEOUT,
        max_requests: int | None = MAX_REQUESTS,
        max_rss: int | None = MAX_RSS,
        relative_to: str | None = None,
    ) -> None:
        self._godot = godot
        self.relative_to = relative_to
        self._engine: engines.Engine | None = None
        self._packs: dict[str, Path] = {}
        self._engine_lock = threading.RLock()
        self.timeout = timeout
        self.verbose = verbose
        self.auto_import = auto_import
        self.start_timeout = start_timeout
        self.max_requests = max_requests
        self.max_rss = max_rss

    def __enter__(self: _Host) -> _Host:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Stop every engine process started here."""

    def _found_engine(self) -> engines.Engine:
        """Return the Godot binary in use, found and version-checked once."""
        with self._engine_lock:
            if self._engine is None:
                self._engine = engines.probe(engines.find_godot(self._godot))
            return self._engine

    def _pack(self, flavour: str = "safe") -> Path:
        """Return the settings pack workers start with (built on first use, see engine.settings_pack):
        "trusted" for the engines that serve allow_scripts requests, "safe" for all others."""
        with self._engine_lock:
            if flavour not in self._packs:
                self._packs[flavour] = engines.settings_pack(self._found_engine(), flavour)
            return self._packs[flavour]

    def _worker_argv(self, root: Path, *, trusted: bool = False) -> Callable[[str], Sequence[str]]:
        """Return the command line of a worker for `root`, as a function of its reply token."""
        engine = self._found_engine()
        pack = self._pack("trusted" if trusted else "safe")
        return lambda token: engines.worker_argv(engine, root, token, pack=pack)

    def _make_worker(self, argv_for_token: Callable[[str], Sequence[str]]) -> Worker:
        """Return a worker, not started, with this host's settings (deadlines, wear limits, verbosity)."""
        return Worker(
            argv_for_token,
            verbose=self.verbose,
            start_timeout=self.start_timeout,
            max_requests=self.max_requests,
            max_rss=self.max_rss,
        )

    def _start_worker(self, argv_for_token: Callable[[str], Sequence[str]]) -> Worker:
        """Return a started worker with this host's settings."""
        worker = self._make_worker(argv_for_token)
        worker.start()
        return worker

    def _import_assets(self, root: Path, seen: int | None) -> str | None:
        """Import the assets of `root` in isolation (bridge/imports.py) unless someone has since the
        import stamp `seen`, saying so on stderr; return None when it may be served again, else why not."""

        def announce() -> None:
            log.warning("godot-bridge: importing the assets of %s (first use; this takes a few seconds)", root)

        return imports.import_project(self._found_engine(), root, self._pack(), max(self.timeout, imports.IMPORT_TIMEOUT),
                                      seen, announce)


class Bridge(EngineHost):
    """Serve requests with one warm engine process per project, reused across calls.

    `run()` takes and returns plain dicts and never raises for a bad request: errors are replies.
    The typed methods (`material_create()`, ...) return the reply of a success and raise the
    `BridgeError` subclass of an error reply. Call a Bridge from one thread at a time (the MCP
    server serialises its calls); for parallel work use one Bridge per thread, or the batch pool.
    """

    def __init__(
        self,
        godot: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        verbose: bool = False,
        auto_import: bool = True,
        start_timeout: float = START_TIMEOUT,
        max_requests: int | None = MAX_REQUESTS,
        max_rss: int | None = MAX_RSS,
        relative_to: str | None = None,
    ) -> None:
        super().__init__(
            godot,
            timeout=timeout,
            verbose=verbose,
            auto_import=auto_import,
            start_timeout=start_timeout,
            max_requests=max_requests,
            max_rss=max_rss,
            relative_to=relative_to,
        )
        self._workers: dict[Path, Worker] = {}
        self._stamps: dict[Path, int | None] = {}
        """Each project's import stamp when its worker started (bridge/imports.py stamp)."""
        self._imported: dict[Path, int | None] = {}
        """Each project's import stamp right after this bridge last imported it."""

    def close(self) -> None:
        """Stop every engine process this bridge started."""
        workers, self._workers = list(self._workers.values()), {}
        for worker in workers:
            worker.close()

    # ----- requests --------------------------------------------------------------------------

    def run(self, raw: Any) -> dict[str, Any]:
        """Serve one request given as a decoded JSON value; return its reply."""
        try:
            check_input(raw)
            request = parse_request(raw)
        except BridgeError as exc:
            return error_reply(raw, exc)
        return self._serve(request)

    def _serve(self, request: AnyRequest) -> dict[str, Any]:
        """Serve one validated request; return its reply."""
        try:
            root = paths.project_root(request.project_path, self.relative_to)
            message, _ = engine_message(request, root)
            answer = self._call(root, message)
            if self._should_import(root, answer):
                failure = self._import(root)
                if failure is None:
                    answer = self._call(root, message)
                else:
                    answer["error"]["message"] += f"; {failure}"
        except BridgeError as exc:
            return error_reply(request, exc)
        return engine_reply(request, answer)

    def _call(self, root: Path, message: dict[str, Any]) -> dict[str, Any]:
        """Send one message with the files its scene edit rewrites locked (the wait is bounded too).

        A message that allows scripts goes to an engine of its own, discarded once it answers: code
        that ran in it (a thread, a hook) must not run on through later requests.
        """
        if message.get("allow_scripts"):
            self._stamps.setdefault(root, imports.stamp(root))
            worker = self._start_worker(self._worker_argv(root, trusted=True))
            try:
                return worker.call(message, self.timeout,
                                   release=hold_writes(worker, root, message, time.monotonic() + self.timeout))
            finally:
                worker.kill()
        worker = self._worker(root)
        release = hold_writes(worker, root, message, time.monotonic() + self.timeout)
        return worker.call(message, self.timeout, release=release)

    def _should_import(self, root: Path, answer: dict[str, Any]) -> bool:
        """Whether a not_imported answer calls for an import: not when this bridge's own last import
        left the stamp where it is now (it did not help, and would not again)."""
        error = answer.get("error") or {}
        if not self.auto_import or error.get("code") != "not_imported":
            return False
        return root not in self._imported or self._imported[root] != imports.stamp(root)

    def _import(self, root: Path) -> str | None:
        """Import the project's assets, then restart its worker so it sees the import data."""
        worker = self._workers.pop(root, None)
        if worker is not None:
            worker.close()
        failure = self._import_assets(root, self._stamps.get(root))
        self._imported[root] = imports.stamp(root)
        return failure

    def _adopt(self, root: Path, workers: Sequence[Worker]) -> None:
        """Serve the project at `root` with the first of `workers`, launched elsewhere; stop the rest."""
        old = self._workers.pop(root, None)
        if old is not None:
            old.close()
        for worker in workers[1:]:
            worker.kill()
        if workers:
            self._stamps[root] = imports.stamp(root)
            self._workers[root] = workers[0]

    def _worker_for(self, project_path: str) -> Worker:
        """Return the warm worker serving a project, starting it if needed."""
        return self._worker(paths.project_root(project_path, self.relative_to))

    def _worker(self, root: Path) -> Worker:
        worker = self._workers.get(root)
        if worker is not None and worker.alive and not worker.worn_out():
            worker.wait_ready()
            return worker
        if worker is not None:
            worker.close()
        self._stamps[root] = imports.stamp(root)
        worker = self._start_worker(self._worker_argv(root))
        self._workers[root] = worker
        return worker

    # ----- typed methods ---------------------------------------------------------------------

    # Each takes the members of its request model (bridge/models.py) as keywords, less `op`, `id` and
    # the variant spellings; tests/test_api.py holds the signatures against the models.

    def resource_read(
        self,
        project_path: StrPath,
        resource_path: StrPath,
        *,
        depth: int = 1,
        properties: list[str] | None = None,
        include_defaults: bool = False,
        allow_scripts: bool = False,
    ) -> dict[str, Any]:
        """Read a saved resource's stored properties (`properties`: exactly these, defaults included)."""
        return self._typed("resource_read", project_path=project_path, resource_path=resource_path, depth=depth,
                           properties=properties, include_defaults=include_defaults, allow_scripts=allow_scripts)

    def material_create(
        self,
        project_path: StrPath,
        material_type: str,
        resource_path: StrPath,
        *,
        properties: dict[str, Any] | None = None,
        shader_path: StrPath | None = None,
        allow_scripts: bool = False,
    ) -> dict[str, Any]:
        """Create a material (`shader_path` for a ShaderMaterial) and save it as a .tres file."""
        return self._typed("material_create", project_path=project_path, material_type=material_type,
                           resource_path=resource_path, properties=properties, shader_path=shader_path,
                           allow_scripts=allow_scripts)

    def shape_create(
        self,
        project_path: StrPath,
        shape_type: str,
        *,
        shape_params: dict[str, Any] | None = None,
        save_path: StrPath | None = None,
        scene_path: StrPath | None = None,
        node_path: str | None = None,
        allow_scripts: bool = False,
    ) -> dict[str, Any]:
        """Create a collision shape; save it (`save_path`) and/or assign it to a scene's node."""
        return self._typed("shape_create", project_path=project_path, shape_type=shape_type,
                           shape_params=shape_params, save_path=save_path, scene_path=scene_path,
                           node_path=node_path, allow_scripts=allow_scripts)

    def style_box_create(
        self,
        project_path: StrPath,
        style_type: str,
        resource_path: StrPath,
        *,
        properties: dict[str, Any] | None = None,
        allow_scripts: bool = False,
    ) -> dict[str, Any]:
        """Create a UI style box and save it as a .tres file."""
        return self._typed("style_box_create", project_path=project_path, style_type=style_type,
                           resource_path=resource_path, properties=properties, allow_scripts=allow_scripts)

    def resource_duplicate(
        self,
        project_path: StrPath,
        source_path: StrPath,
        dest_path: StrPath,
        *,
        property_overrides: dict[str, Any] | None = None,
        deep_copy: bool = False,
        allow_scripts: bool = False,
    ) -> dict[str, Any]:
        """Copy a saved resource to a new .tres file, with optional property overrides."""
        return self._typed("resource_duplicate", project_path=project_path, source_path=source_path,
                           dest_path=dest_path, property_overrides=property_overrides, deep_copy=deep_copy,
                           allow_scripts=allow_scripts)

    def resource_update(
        self,
        project_path: StrPath,
        resource_path: StrPath,
        *,
        properties: dict[str, Any] | None = None,
        reset: list[str] | None = None,
        allow_scripts: bool = False,
    ) -> dict[str, Any]:
        """Change properties of a saved resource in place; `reset` puts others back to their defaults."""
        return self._typed("resource_update", project_path=project_path, resource_path=resource_path,
                           properties=properties, reset=reset, allow_scripts=allow_scripts)

    def resource_create(
        self,
        project_path: StrPath,
        resource_type: str,
        resource_path: StrPath,
        *,
        properties: dict[str, Any] | None = None,
        allow_scripts: bool = False,
    ) -> dict[str, Any]:
        """Create a resource of any class that holds no code and save it as a .tres file."""
        return self._typed("resource_create", project_path=project_path, resource_type=resource_type,
                           resource_path=resource_path, properties=properties, allow_scripts=allow_scripts)

    def _typed(self, op: str, **fields: Any) -> dict[str, Any]:
        request = {"op": op, **{key: os.fspath(value) if isinstance(value, os.PathLike) else value
                                for key, value in fields.items() if value is not None}}
        reply = self.run(request)
        if reply["result"] != "ok":
            raise from_wire(reply["error"])
        return reply


def engine_message(request: AnyRequest, root: Path) -> tuple[dict[str, Any], dict[str, str]]:
    """Return what the engine needs of a request (its members with paths made res:// paths), and
    the real path of each file member, by the member's name in the message."""
    message: dict[str, Any] = request.model_dump(
        exclude_none=True, exclude={"id", "project_path", "resource_path", "save_path"}
    )
    reals: dict[str, str] = {}

    def place(key: str, value: str, field: str, suffixes: tuple[str, ...]) -> None:
        message[key], reals[key] = paths.resolve(root, value, field=field, suffixes=suffixes)

    if request.path_key is not None:
        suffixes = (paths.READABLE_SUFFIXES if isinstance(request, ResourceRead) else
                    paths.UPDATABLE_SUFFIXES if isinstance(request, ResourceUpdate) else paths.RESOURCE_SUFFIXES)
        message.pop("path", None)
        place("path", getattr(request, request.path_key), request.path_key, suffixes)
    if isinstance(request, MaterialCreate) and request.shader_path is not None:
        place("shader_path", request.shader_path, "shader_path", paths.SHADER_SUFFIXES)
    if isinstance(request, ShapeCreate):
        message.pop("shape_params", None)
        message["properties"] = request.params
        for key, suffixes in (("save_path", paths.RESOURCE_SUFFIXES), ("scene_path", paths.SCENE_SUFFIXES)):
            value = getattr(request, key)
            if value is not None:
                place(key, value, key, suffixes)
    if isinstance(request, ResourceDuplicate):
        place("source_path", request.source_path, "source_path", paths.READABLE_SUFFIXES)
        place("dest_path", request.dest_path, "dest_path", paths.RESOURCE_SUFFIXES)
        if reals["dest_path"] == reals["source_path"]:
            raise InvalidPath("dest_path must differ from source_path (it names the same file)", field="dest_path")
    return message, reals


VALUE_MEMBERS = frozenset({"properties", "shape_params", "property_overrides"})
"""Members whose contents are property values (resource_read's `properties` is a list of names)."""


def check_input(raw: Any) -> None:
    """Refuse what cannot cross the pipe intact: deep nesting, inexact numbers, broken text.

    Every member is walked without recursion, so no nesting depth can exhaust Python's stack,
    and the engine's parser and value codec never see more than MAX_DEPTH levels. A number or a
    string that no property can hold is invalid_value inside property values, invalid_request in
    any other member.
    """
    if not isinstance(raw, dict):
        return
    for key, value in raw.items():
        field = str(key)
        values = field in VALUE_MEMBERS and not (field == "properties" and raw.get("op") == "resource_read")
        stack: list[tuple[Any, int]] = [(value, 1)]
        while stack:
            item, depth = stack.pop()
            if isinstance(item, dict):
                _check_scalar(field, list(item.keys()), values)
                children: Any = item.values()
            elif isinstance(item, (list, tuple)):
                children = item
            else:
                _check_scalar(field, [item], values)
                continue
            if depth > MAX_DEPTH:
                raise InvalidRequest(f"{field} nests arrays or objects deeper than {MAX_DEPTH} levels", field=field)
            nested = _check_scalar(field, children, values)
            stack.extend((child, depth + 1) for child in nested)


def _check_scalar(field: str, items: Any, values: bool) -> list[Any]:
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
                # with a NUL get their own codes, from bridge/paths.py.)
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


def hold_writes(worker: Worker, root: Path, message: dict[str, Any], deadline: float) -> Release:
    """Lock the files a scene edit or a resource_update rewrites (see bridge/locks.py), waiting until `deadline`.

    Return what `worker` is to run once it is done with the message. When its engine died before
    answering, that removes the temp files it left beside the files the message writes and, for a
    scene edit, puts the scene and the saved shape back as they were (read under the lock before the
    message goes out): a shape saved and attached is written both or neither, even under SIGKILL.
    """
    written = _written(root, message)
    # Read-modify-write inside the engine: a scene edit, and an update of a resource in place.
    rewrites = [Path(path) for path in written] if "scene_path" in message or message.get("op") == "resource_update" else []
    held = locks.hold(rewrites, deadline)
    before = locks.snapshot(rewrites)

    def release(answered: bool) -> None:
        try:
            if not answered and worker.pid is not None:
                locks.sweep(written, worker.pid)
                locks.restore(before)
        finally:
            held.release()

    return release


def _written(root: Path, message: dict[str, Any]) -> list[str]:
    """The files an engine message writes, as real paths: the engine writes through links to the
    file they lead to (gdscript/saving.gd), and puts its temp file beside that one."""
    keys: list[str] = [key for key in ("save_path", "scene_path", "dest_path") if key in message]
    if "path" in message and message.get("op") != "resource_read":
        keys.append("path")
    return [os.path.realpath(os.path.join(root, str(message[key]).removeprefix("res://"))) for key in keys]


class HugeInteger(str):
    """An integer literal too long for Python to convert (over 4,300 digits): check_input refuses it."""


def _integer(literal: str) -> int | HugeInteger:
    try:
        return int(literal)
    except ValueError:
        return HugeInteger(literal)


def decode_request(text: str) -> dict[str, Any]:
    """Return the JSON object of one request's text, or raise InvalidJson."""
    if text.startswith("\0"):
        raise InvalidJson("the request is not UTF-8; send one JSON object")
    if not text.strip():
        raise InvalidJson("the request is empty; send one JSON object")
    try:
        raw = json.loads(text, parse_int=_integer)
    except json.JSONDecodeError as exc:
        raise InvalidJson(f"the request is not valid JSON ({exc.msg} at column {exc.colno}); send one JSON object") from None
    except (ValueError, RecursionError):
        raise InvalidJson("the request is not valid JSON; send one JSON object") from None
    if not isinstance(raw, dict):
        raise InvalidJson(f"the request is a JSON {type(raw).__name__}, not an object")
    return raw


def engine_reply(request: AnyRequest, answer: dict[str, Any]) -> dict[str, Any]:
    """Return the reply to `request` from the engine's answer to its message."""
    if not answer.get("ok"):
        return error_reply(request, _as_requested(request, from_wire(answer.get("error") or {})))
    return ok_reply(request, answer.get("reply") or {})


def _as_requested(request: AnyRequest, error: BridgeError) -> BridgeError:
    """Name members as the request spelled them: the engine always calls the main file `path`
    and a shape's params `properties`."""
    spelled: dict[str, str | None] = {"path": request.path_key}
    if isinstance(request, ShapeCreate) and request.shape_params is not None:
        spelled["properties"] = "shape_params"
    engine_name = error.field or ""
    key = spelled.get(engine_name)
    if key is not None:
        error.field = key
        if error.message.startswith((f"{engine_name}: ", f"{engine_name}.")):
            error.message = key + error.message.removeprefix(engine_name)
    return error


ECHOED_PATHS = ("resource_path", "path", "save_path", "source_path", "dest_path", "scene_path", "node_path",
                "shader_path")
"""Every request member naming a file or node, in the order an error reply lists them."""


def _echo(request: Any, every_path: bool = False) -> dict[str, Any]:
    """The members a reply repeats from its request: op, id, and the path key as written (with
    `every_path`, each path member the request had, as an error reply gives them)."""
    if isinstance(request, Request):
        # Only these members: dumping the model would copy every property value for each reply.
        keys = ["op", "id", *(ECHOED_PATHS if every_path else request.path_keys)]
        fields = {key: getattr(request, key, None) for key in keys}
    elif isinstance(request, dict):
        fields = request
        keys = ["op", "id", *(ECHOED_PATHS if every_path else ("resource_path", "path", "save_path"))]
    else:
        fields, keys = {}, []
    echo: dict[str, Any] = {"op": fields.get("op") if isinstance(fields.get("op"), str) else None}
    for key in keys[1:]:
        value = fields.get(key)
        if key == "id" and isinstance(value, (str, int)) and not isinstance(value, bool):
            echo["id"] = value
        elif key != "id" and isinstance(value, str):
            echo[key] = value
            if not every_path:
                break
    return echo


def error_reply(request: Any, error: BridgeError) -> dict[str, Any]:
    """Return the error reply to `request` (a model, or whatever was received)."""
    wire = error.to_wire()
    message = wire["message"]
    if len(message) > _MESSAGE_MAX:
        # A message quotes the offending value, which may be megabytes long: keep both ends.
        wire["message"] = f"{message[: _MESSAGE_MAX - 300]} [...] {message[-250:]}"
    return {**_echo(request, every_path=True), "result": "error", "error": wire}


def ok_reply(request: AnyRequest, data: dict[str, Any]) -> dict[str, Any]:
    """Return the success reply to `request` with the engine's data."""
    reply = _echo(request)
    if isinstance(request, ShapeCreate):
        reply["shape_type"] = request.shape_type
        for key in ("save_path", "scene_path", "node_path"):
            value = getattr(request, key)
            if value is not None:
                reply[key] = value
    elif isinstance(request, ResourceDuplicate):
        reply["source_path"] = request.source_path
        reply["dest_path"] = request.dest_path
    if "properties" in data:
        data = {**data, "properties": tidy_floats(data["properties"])}
    reply.update(data)
    reply["result"] = "ok"
    return reply


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
