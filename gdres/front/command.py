"""What every command of the command line shares: its exit statuses, a usage error, JSON on stdout,
and the Bridge it serves through."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys

from gdres.errors import BridgeError
from gdres.front import progress

# Types only: typing costs a warm `run` ~5 ms of its ~60. Type checkers take any TYPE_CHECKING as True.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn

    from gdres.front.api import Bridge

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"gdres: {message} (see gdres --help)\n")


class UsageError(Exception):
    """The command line itself is wrong (exit status 2)."""


def json_line(value: Any, indent: int | None = None) -> str:
    """A reply as JSON ending in a newline (compact, unless `indent`), non-ASCII text as is; a lone
    surrogate (quoted from a request that holds one: no UTF-8 stream can carry it) as its escape."""
    separators = (",", ":") if indent is None else None
    text = json.dumps(value, ensure_ascii=False, indent=indent, separators=separators) + "\n"
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = json.dumps(value, indent=indent, separators=separators) + "\n"
    return text


def print_json(value: Any, indent: int | None = None) -> None:
    sys.stdout.write(json_line(value, indent))
    sys.stdout.flush()


def reader_gone() -> None:
    """The reader of stdout went away (`| head`): what is left for it goes nowhere, so that the
    command ends quietly, as other command-line tools do, with no error from a last flush."""
    nowhere = os.open(os.devnull, os.O_WRONLY)
    os.dup2(nowhere, sys.stdout.fileno())
    os.close(nowhere)


def usage(message: str) -> int:
    sys.stderr.write(f"gdres: {message}\n")
    return EXIT_USAGE


def bridge(args: argparse.Namespace, jobs: int = 1, shown: progress.Progress | None = None) -> Bridge:
    """The bridge of a command; an import while `shown` shows a bar gets a bar of its own."""
    # Imported here, and light: the request models (pydantic, ~0.1 s) load with the first request,
    # while the engine that prewarm launched starts.
    from gdres.front.api import Bridge

    progress.log_to_stderr()
    bar = (lambda root: progress.ImportBar(root, shown)) if shown is not None and shown.bar is not None else None
    return Bridge(args.godot, jobs=jobs, timeout=args.timeout, verbose=args.verbose,
                  auto_import=not args.no_import, relative_to=os.getcwd(), import_shown=bar)


def decoded_request(text: str) -> Any:
    """The decoded request, or its text where it does not decode (its reply then says why)."""
    from gdres.requests.request import decode

    try:
        return decode(text)
    except BridgeError:
        return text


def prewarm(bridge: Bridge, request: Any, count: int) -> None:
    """Launch the engines of the project the first request names, so they start while Python goes
    on (~0.2 s each way). A project that is not one gets its error reply from the request itself."""
    project = request.get("project_path") if isinstance(request, dict) else None
    if isinstance(project, str) and request.get("allow_scripts") is not True:
        with contextlib.suppress(BridgeError):
            bridge.prewarm(project, count)


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1
