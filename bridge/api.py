"""The Python API: `Bridge`, a facade over the serving pool (bridge/pool.py).

`run()` serves one request, `batch()` a stream of them, and the typed methods (`material_create()`,
...) one each with keyword arguments. Requests go down one path: api → pool → request → worker.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from types import TracebackType
from typing import Any, Union

from . import engine as engines
from .errors import from_wire
from .pool import Pool, Settings
from .request import Item, Reply
from .worker import MAX_REQUESTS, MAX_RSS, START_TIMEOUT, Worker

DEFAULT_TIMEOUT = engines.DEFAULT_TIMEOUT
StrPath = Union[str, "os.PathLike[str]"]
"""A path member of a typed method: a string or a pathlib.Path."""


class Bridge:
    """Serve requests with warm engine processes per project, reused across calls.

    `run()` takes and returns plain dicts and never raises for a bad request: errors are replies.
    The typed methods return the reply of a success and raise the `BridgeError` subclass of an
    error reply. `batch()` streams replies in input order, up to `jobs` engines per project at
    once. Call a Bridge from one thread at a time (the MCP server serialises its calls); for
    parallel work use one Bridge per thread, or `batch()`.
    """

    def __init__(
        self,
        godot: str | None = None,
        *,
        jobs: int = 1,
        timeout: float = DEFAULT_TIMEOUT,
        verbose: bool = False,
        auto_import: bool = True,
        start_timeout: float = START_TIMEOUT,
        max_requests: int | None = MAX_REQUESTS,
        max_rss: int | None = MAX_RSS,
        relative_to: str | None = None,
    ) -> None:
        self.settings = Settings(godot, timeout=timeout, verbose=verbose, auto_import=auto_import,
                                 start_timeout=start_timeout, max_requests=max_requests, max_rss=max_rss,
                                 relative_to=relative_to)
        self._pool = Pool(self.settings, jobs=jobs)

    def __enter__(self) -> Bridge:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Stop every engine process this bridge started."""
        self._pool.close()

    # ----- requests --------------------------------------------------------------------------

    def run(self, request: Any) -> Reply:
        """Serve one request, a decoded JSON object (or its text); return its reply. Anything else
        gets an error reply too."""
        (reply,) = self._pool.map([request])
        return reply

    def batch(self, requests: Iterable[Item], *, stop_on_error: bool = False) -> Iterator[Reply]:
        """Yield the reply to each request, in input order, while the input is still being read.

        With `stop_on_error`, every request after the first error reply gets `skipped` and none
        of them runs (they then run one at a time).
        """
        return self._pool.map(requests, stop_on_error=stop_on_error)

    def ready(self) -> bool:
        """Return whether the next reply of the running `batch()` is there without waiting."""
        return self._pool.ready()

    def prewarm(self, project_path: str, count: int = 1, *, wait: bool = False) -> list[Worker]:
        """Start the engines that will serve a project (up to `count`, those running included) and
        return them; with `wait`, once they are ready. Raises the BridgeError a request for the
        project would get (a project that is not one, no Godot)."""
        return self._pool.prewarm(project_path, count, wait=wait)

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
    ) -> Reply:
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
    ) -> Reply:
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
    ) -> Reply:
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
    ) -> Reply:
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
    ) -> Reply:
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
    ) -> Reply:
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
    ) -> Reply:
        """Create a resource of any class that holds no code and save it as a .tres file."""
        return self._typed("resource_create", project_path=project_path, resource_type=resource_type,
                           resource_path=resource_path, properties=properties, allow_scripts=allow_scripts)

    def _typed(self, op: str, **fields: Any) -> Reply:
        request = {"op": op, **{key: os.fspath(value) if isinstance(value, os.PathLike) else value
                                for key, value in fields.items() if value is not None}}
        reply = self.run(request)
        if reply["result"] != "ok":
            raise from_wire(reply["error"])
        return reply
