"""The Python API: `Bridge`, a facade over the serving pool (gdres/serving/pool.py).

`run()` serves one request, `batch()` a stream of them, `call()` one given as its model, and each
operation is a method made from its model (`material_create()`, ...: operation_method()). Requests
go down one path: api → pool → request → worker.
"""

from __future__ import annotations

import functools
import inspect
import os
import types
from collections.abc import Callable, Iterable, Iterator
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar, cast

from gdres import serving
from gdres.errors import from_wire
from gdres.requests.request import Item, Reply
from gdres.settings import DEFAULT_TIMEOUT, MAX_REQUESTS, MAX_RSS, START_TIMEOUT

if TYPE_CHECKING:
    # Types only: pydantic and the models cost ~0.1 s to import, which `gdres run` spends
    # while its engine starts (the first request is parsed then), not before it launches the engine.
    from pathlib import Path

    from gdres.requests.models import Answers
    from gdres.requests.replies import Answer

StrPath = str | os.PathLike[str]
"""A path member of an operation's method: a string or a pathlib.Path."""
Typed = TypeVar("Typed", bound="Answer")


class Bridge:
    """Serve requests with warm engine processes per project, reused across calls.

    `run()` takes and returns plain dicts and never raises for a bad request: errors are replies.
    `call()` and the operation methods return the reply of a success, typed
    (gdres/requests/replies.py), and raise the `BridgeError` subclass of an error reply. `batch()`
    streams replies in input order, up to `jobs` engines per project at once. Call a Bridge from one
    thread at a time (the MCP server serialises its calls); for parallel work use one Bridge per
    thread, or `batch()`.
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
        import_shown: Callable[[Path], serving.ImportShown] | None = None,
    ) -> None:
        """`import_shown`: how an import of a project's assets is shown, made for each import from the
        project's root (default: lines on the `gdres` logger; gdres/serving/starter.py ImportShown)."""
        self.settings = serving.Settings(godot, timeout=timeout, verbose=verbose, auto_import=auto_import,
                                 start_timeout=start_timeout, max_requests=max_requests, max_rss=max_rss,
                                 relative_to=relative_to, import_shown=import_shown)
        self._pool = serving.Pool(self.settings, jobs=jobs)

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

    def prewarm(self, project_path: str, count: int = 1, *, wait: bool = False) -> list[serving.Worker]:
        """Start the engines that will serve a project (up to `count`, those running included) and
        return them; with `wait`, once they are ready. Raises the BridgeError a request for the
        project would get (a project that is not one, no Godot)."""
        return self._pool.prewarm(project_path, count, wait=wait)

    # ----- operation methods -----------------------------------------------------------------

    def call(self, request: Answers[Typed]) -> Typed:
        """Serve one request given as its model and return its success reply, typed.

        Every operation has a model in gdres.requests.models, whose members are the
        request's (`op` is set for you), checked as they are given:
        `bridge.call(ResourceRead(project_path="game", resource_path="a.tres"))` returns a
        `ReadReply`. Each operation is also a method of its own, taking the same members
        (`bridge.resource_read("game", "a.tres")`: operation_method()).

        Raises:
            The `BridgeError` subclass of an error reply's code.
        """
        from gdres.requests.models import Request

        if not isinstance(request, Request):
            raise TypeError(f"call() takes a model of gdres.requests.models, not {type(request).__name__}")
        return cast(Typed, self._typed(**request.model_dump(exclude_none=True)))

    def __getattr__(self, op: str) -> Callable[..., Any]:
        """Each operation as a method taking its request's members (operation_method()):
        `bridge.resource_read("game", "a.tres", depth=0)`."""
        if op.startswith("_"):
            raise AttributeError(op)
        return types.MethodType(operation_method(op), self)

    def __dir__(self) -> Iterable[str]:
        from gdres.requests.models import OPERATIONS

        return sorted({*super().__dir__(), *OPERATIONS})

    def _typed(self, op: str, **fields: Any) -> Reply:
        request = {"op": op, **{key: os.fspath(value) if isinstance(value, os.PathLike) else value
                                for key, value in fields.items() if value is not None}}
        reply = self.run(request)
        if reply["result"] != "ok":
            raise from_wire(reply["error"])
        return reply


@functools.cache
def operation_method(op: str) -> Callable[..., Answer]:
    """The method of `Bridge` that serves operation `op`, made from its request model
    (gdres/requests/models.py): `project_path` and the members the model requires, in its order,
    by position or keyword; every other member by keyword, with the model's default (a variant
    spelling of a member is left out). A path may be a `pathlib.Path`. It returns the success reply,
    typed as the model names it, and raises the `BridgeError` of an error reply. Its docstring says
    each member as the model describes it."""
    from gdres.requests.models import REQUEST_MODELS, reply_type

    model = REQUEST_MODELS.get(op)
    if model is None:
        raise AttributeError(f"Bridge has no attribute {op!r}: operations are {', '.join(REQUEST_MODELS)}")
    variants = set(model.own_names())
    members = {name: field for name, field in model.model_fields.items() if name not in {"op", "id", *variants}}
    paths = {"project_path", *model.files}

    def required(name: str) -> bool:
        # The main file is optional in the model only because it has a variant spelling.
        return members[name].is_required() or (name in model.spellings and name in model.files)

    def annotation(name: str) -> Any:
        return StrPath if name in paths else members[name].annotation

    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    parameters += [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=annotation(name))
                   for name in members if required(name)]
    parameters += [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=members[name].default,
                                     annotation=annotation(name) | None if members[name].default is None
                                     else annotation(name))
                   for name in members if not required(name)]
    reply = reply_type(model)
    signature = inspect.Signature(parameters, return_annotation=reply)

    def method(self: Bridge, *args: Any, **kwargs: Any) -> Answer:
        given = signature.bind(self, *args, **kwargs).arguments
        given.pop("self")
        return cast("Answer", self._typed(op, **given))

    described = "".join(f"    {name}: {members[name].description}\n" for name in signature.parameters if name != "self")
    method.__name__ = method.__qualname__ = op
    method.__signature__ = signature  # type: ignore[attr-defined]
    method.__doc__ = (f"{model.__doc__}\n\nArgs:\n{described}\nReturns:\n    {reply.__name__}: {reply.__doc__}\n\n"
                      "Raises:\n    The BridgeError subclass of an error reply's code (NotFound, InvalidValue, ...);\n"
                      "    a write writes nothing then.\n")
    return method
