"""The Python API: `Bridge`, a facade over the serving pool (gdres/serving/pool.py).

`run()` serves one request, `batch()` a stream of them, and the typed methods (`material_create()`,
...) one each with keyword arguments. Requests go down one path: api → pool → request → worker.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar, Union, cast

from gdres.engine import DEFAULT_TIMEOUT
from gdres.engine.worker import MAX_REQUESTS, MAX_RSS, START_TIMEOUT, Worker
from gdres.errors import from_wire
from gdres.requests.request import Item, Reply
from gdres.serving.pool import Pool
from gdres.serving.starter import Settings

if TYPE_CHECKING:
    # Types only: pydantic and the models cost ~0.1 s to import, which `gdres run` spends
    # while its engine starts (the first request is parsed then), not before it launches the engine.
    from pathlib import Path

    from gdres.requests.models import Answers
    from gdres.requests.replies import Answer, DuplicateReply, ReadReply, SavedReply, ShapeReply, UpdateReply
    from gdres.serving.starter import ImportShown

StrPath = Union[str, "os.PathLike[str]"]
"""A path member of a typed method: a string or a pathlib.Path."""
Typed = TypeVar("Typed", bound="Answer")


class Bridge:
    """Serve requests with warm engine processes per project, reused across calls.

    `run()` takes and returns plain dicts and never raises for a bad request: errors are replies.
    The typed methods return the reply of a success, typed (gdres/requests/replies.py), and raise the
    `BridgeError` subclass of an error reply. `batch()` streams replies in input order, up to
    `jobs` engines per project at once. Call a Bridge from one thread at a time (the MCP server
    serialises its calls); for parallel work use one Bridge per thread, or `batch()`.
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
        import_shown: Callable[[Path], ImportShown] | None = None,
    ) -> None:
        """`import_shown`: how an import of a project's assets is shown, made for each import from the
        project's root (default: lines on the `gdres` logger; gdres/serving/starter.py ImportShown)."""
        self.settings = Settings(godot, timeout=timeout, verbose=verbose, auto_import=auto_import,
                                 start_timeout=start_timeout, max_requests=max_requests, max_rss=max_rss,
                                 relative_to=relative_to, import_shown=import_shown)
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

    def batch(self, requests: Iterable[Item], *, stop_on_error: bool = False, atomic: bool = False) -> Iterator[Reply]:
        """Yield the reply to each request, in input order, while the input is still being read.

        An input that is not a list or tuple is read by a thread of its own. A batch ended early
        (closed, or a Ctrl-C) while that thread waits for the input's next item does not wait for
        it: the thread takes that item, if one comes, and ends; the input is then not to be read
        again. Waiting inside a buffered file's read (lines of `sys.stdin`), it holds that file's
        lock: closing the file waits for it, and so may the interpreter's exit.

        With `stop_on_error`, every request after the first error reply gets `skipped` and none
        of them runs (they then run one at a time).

        With `atomic`, every write of the batch stays or none does: the requests (on one project)
        run in order on one engine, each seeing the writes before it; if one fails, every write is
        undone, each request before it that had written gets `rolled_back`, and each after it
        `skipped` (`rolled_back` where it had run, sent ahead of the failing one's reply, and written).
        A batch cut short (the process killed) is undone by the next command on the project. The
        replies come once the whole batch is served.
        """
        if atomic:
            return iter(self._pool.atomic(requests))
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

    def call(self, request: Answers[Typed]) -> Typed:
        """Serve one request given as its model and return its success reply, typed.

        Every operation has a model in gdres.requests.models, whose members are the
        request's (`op` is set for you), checked as they are given:
        `bridge.call(ResourceRead(project_path="game", resource_path="a.tres"))` returns a
        `ReadReply`. The methods below do the same for the first seven operations, with their
        members as keywords.

        Raises:
            The `BridgeError` subclass of an error reply's code.
        """
        from gdres.requests.models import Request

        if not isinstance(request, Request):
            raise TypeError(f"call() takes a model of gdres.requests.models, not {type(request).__name__}")
        return cast(Typed, self._typed(**request.model_dump(exclude_none=True)))

    # Each takes the members of its request model (gdres/requests/models.py) as keywords, less `op`, `id` and
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
    ) -> ReadReply:
        """Read the stored properties of a saved resource (.tres, .res, or a .tscn scene's root).

        Args:
            project_path: The project folder (holding project.godot), absolute or relative to the
                current folder.
            resource_path: The file, relative to the project or as res://.
            depth: Levels of nested resources shown as objects ({"type", "properties"}); deeper
                ones, and all at 0, as paths. Imported assets are always {"type", "path"}.
            properties: Return exactly these properties, those at their class default included.
            include_defaults: Return every stored property, also those at their class default.
            allow_scripts: Load the resource even if it carries a script (which runs its code).

        Returns:
            The reply: `type`, `script` (or None) and `properties`, name -> value (colours and
            vectors as lists of numbers).

        Raises:
            NotFound, UnsafeResource, LoadFailed, ... : the `BridgeError` of the error reply.
        """
        reply = self._typed("resource_read", project_path=project_path, resource_path=resource_path,
                            depth=depth, properties=properties, include_defaults=include_defaults,
                            allow_scripts=allow_scripts)
        return cast("ReadReply", reply)

    def material_create(
        self,
        project_path: StrPath,
        material_type: str,
        resource_path: StrPath,
        *,
        properties: dict[str, Any] | None = None,
        shader_path: StrPath | None = None,
        allow_scripts: bool = False,
        dry_run: bool = False,
        if_match: str | None = None,
    ) -> SavedReply:
        """Create a material and save it as a .tres file (replacing one that is there).

        Args:
            project_path: The project folder, absolute or relative to the current folder.
            material_type: A Material class (StandardMaterial3D, ORMMaterial3D, ShaderMaterial,
                CanvasItemMaterial, ParticleProcessMaterial, ...) or PhysicsMaterial.
            resource_path: Where to save, a .tres file relative to the project (or res://).
            properties: Set after creation, name -> value as the engine names them: colours as
                "#rrggbb", a colour name or [r, g, b(, a)] in 0-1, vectors as lists, resources as a
                path or {"type", "properties"}.
            shader_path: ShaderMaterial only: the .gdshader assigned before the properties.
            allow_scripts: Allow loading resources that carry a script.
            dry_run: Change nothing: the reply's `changes` say what would be written, with diffs.
            if_match: The etag a reply gave of the file this rewrites: if the file has changed
                since, Conflict is raised and nothing is written.

        Returns:
            The reply: `resource_path`, `type` and `uid` of the file written.

        Raises:
            UnknownProperty, InvalidType, InvalidValue, SaveFailed, ... : the `BridgeError` of the
            error reply; nothing is written then.
        """
        reply = self._typed("material_create", project_path=project_path, material_type=material_type,
                            resource_path=resource_path, properties=properties, shader_path=shader_path,
                            allow_scripts=allow_scripts, dry_run=dry_run, if_match=if_match)
        return cast("SavedReply", reply)

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
        dry_run: bool = False,
        if_match: str | None = None,
    ) -> ShapeReply:
        """Create a collision shape; save it (`save_path`) and/or assign it to a scene's node.

        Args:
            project_path: The project folder, absolute or relative to the current folder.
            shape_type: A Godot 4 shape class (BoxShape3D, CircleShape2D, ...; docs/usage.md lists them).
            shape_params: The shape's properties (size, radius, height, points, ...).
            save_path: Save the shape as this .tres file.
            scene_path: A scene (.tscn) whose node gets the shape; `node_path` names the node.
            node_path: The CollisionShape2D/3D node of that scene (required with `scene_path`).
            allow_scripts: Allow loading a scene or resources that carry a script.
            dry_run: Change nothing: the reply's `changes` say what would be written, with diffs.
            if_match: The etag a reply gave of the file this rewrites: if the file has changed
                since, Conflict is raised and nothing is written.

        Returns:
            The reply: `shape_type` and `type`, the `save_path` (and its `uid`), `scene_path` and `node_path` given.

        Raises:
            NodeNotFound, IncompatibleNode, InvalidValue, ... : the `BridgeError` of the error reply.
        """
        reply = self._typed("shape_create", project_path=project_path, shape_type=shape_type,
                            shape_params=shape_params, save_path=save_path, scene_path=scene_path,
                            node_path=node_path, allow_scripts=allow_scripts, dry_run=dry_run, if_match=if_match)
        return cast("ShapeReply", reply)

    def style_box_create(
        self,
        project_path: StrPath,
        style_type: str,
        resource_path: StrPath,
        *,
        properties: dict[str, Any] | None = None,
        allow_scripts: bool = False,
        dry_run: bool = False,
        if_match: str | None = None,
    ) -> SavedReply:
        """Create a UI style box and save it as a .tres file.

        Args:
            project_path: The project folder, absolute or relative to the current folder.
            style_type: StyleBoxFlat, StyleBoxTexture, StyleBoxLine or StyleBoxEmpty.
            resource_path: Where to save, a .tres file relative to the project (or res://).
            properties: Set after creation, name -> value (as for `material_create`).
            allow_scripts: Allow loading resources that carry a script.
            dry_run: Change nothing: the reply's `changes` say what would be written, with diffs.
            if_match: The etag a reply gave of the file this rewrites: if the file has changed
                since, Conflict is raised and nothing is written.

        Returns:
            The reply: `resource_path`, `type` and `uid` of the file written.

        Raises:
            UnknownProperty, InvalidType, InvalidValue, ... : the `BridgeError` of the error reply.
        """
        reply = self._typed("style_box_create", project_path=project_path, style_type=style_type,
                            resource_path=resource_path, properties=properties, allow_scripts=allow_scripts,
                            dry_run=dry_run, if_match=if_match)
        return cast("SavedReply", reply)

    def resource_duplicate(
        self,
        project_path: StrPath,
        source_path: StrPath,
        dest_path: StrPath,
        *,
        property_overrides: dict[str, Any] | None = None,
        deep_copy: bool = False,
        allow_scripts: bool = False,
        dry_run: bool = False,
        if_match: str | None = None,
    ) -> DuplicateReply:
        """Copy a saved resource to a new .tres file, with optional property overrides.

        Args:
            project_path: The project folder, absolute or relative to the current folder.
            source_path: The resource to copy, relative to the project (or res://).
            dest_path: Where the copy is saved, a .tres file.
            property_overrides: Properties set on the copy; all others keep the source's values.
            deep_copy: Copy nested resources into the file instead of sharing them.
            allow_scripts: Allow loading resources that carry a script.
            dry_run: Change nothing: the reply's `changes` say what would be written, with diffs.
            if_match: The etag a reply gave of the file this rewrites: if the file has changed
                since, Conflict is raised and nothing is written.

        Returns:
            The reply: `source_path`, `dest_path`, the copy's `type` and `uid`.

        Raises:
            NotFound, UnknownProperty, InvalidValue, ... : the `BridgeError` of the error reply.
        """
        reply = self._typed("resource_duplicate", project_path=project_path, source_path=source_path,
                            dest_path=dest_path, property_overrides=property_overrides, deep_copy=deep_copy,
                            allow_scripts=allow_scripts, dry_run=dry_run, if_match=if_match)
        return cast("DuplicateReply", reply)

    def resource_update(
        self,
        project_path: StrPath,
        resource_path: StrPath,
        *,
        properties: dict[str, Any] | None = None,
        reset: list[str] | None = None,
        allow_scripts: bool = False,
        dry_run: bool = False,
        if_match: str | None = None,
    ) -> UpdateReply:
        """Change properties of a saved resource in place; its uid, ids and other lines stay as they are.

        Args:
            project_path: The project folder, absolute or relative to the current folder.
            resource_path: The .tres or .res file to change.
            properties: New values, name -> value (a ShaderMaterial's uniforms as
                shader_parameter/<name>).
            reset: Properties put back to their class default (their lines leave the file).
            allow_scripts: Allow loading resources that carry a script.
            dry_run: Change nothing: the reply's `changes` say what would be written, with diffs.
            if_match: The etag a reply gave of the file this rewrites: if the file has changed
                since, Conflict is raised and nothing is written.

        Returns:
            The reply: the resource's `type`, `uid` and `changed`, every stored property that changed
            (those set first, then any the engine changed with them).

        Raises:
            NotFound, UnknownProperty, InvalidValue, ... : the `BridgeError` of the error reply;
            the file is as it was then.
        """
        reply = self._typed("resource_update", project_path=project_path, resource_path=resource_path,
                            properties=properties, reset=reset, allow_scripts=allow_scripts, dry_run=dry_run,
                            if_match=if_match)
        return cast("UpdateReply", reply)

    def resource_create(
        self,
        project_path: StrPath,
        resource_type: str,
        resource_path: StrPath,
        *,
        properties: dict[str, Any] | None = None,
        allow_scripts: bool = False,
        dry_run: bool = False,
        if_match: str | None = None,
    ) -> SavedReply:
        """Create a resource of any class that holds no code and save it as a .tres file.

        Args:
            project_path: The project folder, absolute or relative to the current folder.
            resource_type: The engine class (Gradient, Curve, Environment, NoiseTexture2D, Theme, ...).
            resource_path: Where to save, a .tres file relative to the project (or res://).
            properties: Set after creation, name -> value (as for `material_create`).
            allow_scripts: Allow loading resources that carry a script.
            dry_run: Change nothing: the reply's `changes` say what would be written, with diffs.
            if_match: The etag a reply gave of the file this rewrites: if the file has changed
                since, Conflict is raised and nothing is written.

        Returns:
            The reply: `resource_path`, `type` and `uid` of the file written.

        Raises:
            InvalidType (an unknown class, with a suggestion), UnknownProperty, ... : the
            `BridgeError` of the error reply.
        """
        reply = self._typed("resource_create", project_path=project_path, resource_type=resource_type,
                            resource_path=resource_path, properties=properties, allow_scripts=allow_scripts,
                            dry_run=dry_run, if_match=if_match)
        return cast("SavedReply", reply)

    def _typed(self, op: str, **fields: Any) -> Reply:
        request = {"op": op, **{key: os.fspath(value) if isinstance(value, os.PathLike) else value
                                for key, value in fields.items() if value is not None}}
        reply = self.run(request)
        if reply["result"] != "ok":
            raise from_wire(reply["error"])
        return reply
