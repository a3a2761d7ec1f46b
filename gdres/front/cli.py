"""The `gdres` command: requests in, replies out; stdout carries replies and nothing else."""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
from collections.abc import Sequence

from gdres.errors import BridgeError
from gdres.front import command, inputs
from gdres.front.command import EXIT_ERROR, EXIT_OK, UsageError
from gdres.requests import paths
from gdres.settings import DEFAULT_TIMEOUT, ENGINES_PER_PROCESS
from gdres.version import __version__

# Types only: typing costs a warm `run` ~5 ms of its ~60. Type checkers take any TYPE_CHECKING as True.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn

    from gdres.front.api import Bridge

# The API and the engine's modules are imported where they are needed: `schema` starts no engine,
# and a warm `run` (front/warm.py) hands its request to a host process that has them loaded.


def _global_options(top: bool) -> command.Parser:
    """The options accepted before and after the command; only the top level sets defaults,
    so that `gdres --godot X run` is not undone by the command's own default."""
    default = (lambda value: value) if top else (lambda value: argparse.SUPPRESS)
    options = command.Parser(add_help=False)
    options.add_argument("--godot", metavar="PATH", default=default(None),
                         help="Godot binary (default: GODOT_BIN, GODOT or GODOT4, else the newest Godot 4.4+ on PATH "
                         "or where its installers put it; `gdres doctor` lists what it finds)")
    options.add_argument("--timeout", type=float, default=default(DEFAULT_TIMEOUT), metavar="SECONDS",
                         help=f"deadline of one request (default {DEFAULT_TIMEOUT:g}); the engine is replaced after it")
    options.add_argument("--verbose", action="store_true", default=default(False),
                         help="echo engine output to stderr")
    options.add_argument("--no-import", action="store_true", default=default(False),
                         help="answer not_imported instead of importing the project when a request needs "
                         "an imported asset")
    return options


def build_parser() -> argparse.ArgumentParser:
    """Return the parser of the whole command line."""
    common = _global_options(top=False)
    parser = command.Parser(
        prog="gdres",
        description="Create and inspect Godot 4 resources through the real headless engine. "
        "Replies are JSON on stdout; exit status 0 when all are ok, 1 when any is an error, 2 for misuse.",
        parents=[_global_options(top=True)],
    )
    parser.add_argument("--version", action="version", version=f"gdres {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=command.Parser)
    run = commands.add_parser("run", parents=[common], help="serve one request",
                              description="Serve one request and print its reply as one line of JSON.")
    run.add_argument("request", nargs="?", default="-",
                     help="a JSON object, @FILE, or - (default) to read it from stdin")
    run.add_argument("--warm", action="store_true",
                     help="serve it through an engine kept warm for the project across commands: the first "
                          "starts a host process, which ends after 10 minutes without a request (not on Windows; "
                          "--verbose shows nothing of a warm engine's output)")
    batch = commands.add_parser("batch", parents=[common], help="serve JSON Lines, replies in input order",
                                description="Serve one request per input line; print one reply per line, "
                                "in input order.")
    batch.add_argument("file", nargs="?", default="-", help="JSON Lines file, or - (default) for stdin")
    batch.add_argument("--jobs", "-j", type=int, default=None, metavar="N",
                       help="engine workers serving the batch at once (default: the number of cores, "
                       f"{command.cores()})")
    batch.add_argument("--atomic", action="store_true",
                       help="all writes of the batch stay, or none: requests run in order on one engine, on one "
                            "project; if one fails, every write is undone (rolled_back); after a kill, by the "
                            "next request on the project")
    batch.add_argument("--stop-on-error", action="store_true",
                       help="after the first error, answer the remaining requests with 'skipped' "
                       "(requests then run one at a time, so none after the error runs)")
    batch.add_argument("--processes", "-p", type=int, default=None, metavar="P",
                       help="bridge processes sharing the engines (default: one per "
                            f"{ENGINES_PER_PROCESS} jobs): one process prepares requests for about "
                            f"{ENGINES_PER_PROCESS} engines")
    batch.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                       help="progress bar on stderr (default: when stderr is a terminal)")
    batch.add_argument("--shard", metavar="K/N",
                       help="serve only shard K of N (K from 1; `N` alone: K is JOB_COMPLETION_INDEX + 1, as a "
                            "Kubernetes Indexed Job sets it): lines that touch one file fall in one shard, so "
                            "shards write disjoint files, and their outputs merged by `line` are one batch's")
    batch.add_argument("--resume", metavar="FILE",
                       help="an earlier output of this batch (cut short, say): the lines it answered ok are not "
                            "served again but copied from it; the output is then the whole batch's")
    # A part of a batch served by several processes (gdres/serving/fleet.py): each reply is
    # marked with its status, and no summary is written.
    batch.add_argument("--part", action="store_true", help=argparse.SUPPRESS)
    commands.add_parser("schema", parents=[common], help="print the JSON Schema of all requests")
    doctor = commands.add_parser("doctor", parents=[common],
                                 help="list the Godot binaries found, say which is used, check a project, "
                                      "compile the bridge's scripts to that Godot's binary tokens (engines start "
                                      "sooner), and say whether engines start behind the Landlock wall")
    doctor.add_argument("project", nargs="?",
                        help="a Godot project folder to check (default: the folder it runs in, when it is one)")
    doctor.add_argument("--json", action="store_true", help="print the report as one JSON object")
    imports = commands.add_parser(
        "import", parents=[common], help="import every asset of a project not imported yet, as the editor would",
        description="Import every asset of a project that has no current import (a fresh clone), the way the "
        "editor does and running none of the project's code; requests otherwise import what they need as they "
        "meet it. Prints one JSON reply: how many were imported, and each asset refused with why.")
    imports.add_argument("project", nargs="?", default=".", help="the project folder (default: the current one)")
    imports.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                         help="progress bar on stderr (default: when stderr is a terminal)")
    mcp = commands.add_parser("mcp", parents=[common], help="serve the operations as MCP tools on stdio",
                              description="Serve the operations as Model Context Protocol tools on stdin/stdout.")
    mcp.add_argument("--project", metavar="PATH", help="project_path of every tool call that omits it")
    mcp.add_argument("--allow-scripts", action="store_true",
                     help="offer allow_scripts to tool calls (off: no call can make the engine run project code)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    args = build_parser().parse_args(argv)
    if not math.isfinite(args.timeout) or args.timeout <= 0:
        return command.usage(f"--timeout must be a positive number of seconds, not {args.timeout}")
    try:
        if args.command == "schema":
            from gdres.requests.models import request_schema

            command.print_json(request_schema(), indent=2)
            return EXIT_OK
        if args.command == "doctor":
            from gdres.front import doctor

            return doctor.doctor(args.godot, args.project, args.json)
        if args.command == "import":
            from gdres.front import doctor

            return doctor.import_assets(args)
        if args.command == "batch":
            from gdres.front import batching

            return batching.batch(args)
        if args.command == "run":
            return _run(args)
        with command.bridge(args) as bridge:
            return _mcp(bridge, args.project, args.allow_scripts)
    except UsageError as exc:
        return command.usage(str(exc))
    except BrokenPipeError:
        command.reader_gone()
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130


def entry() -> NoReturn:
    """The `gdres` command (and `python -m gdres`): main(), then out of the process
    without the interpreter's teardown.

    Once main() has returned, each engine it started is stopped and each reply is written. The
    teardown then frees what the process hands back to the system anyway: ~8-10 ms of a warm `run`
    (a sixth of it) and ~40-60 ms of a cold one, which has pydantic loaded (2-core VM). So logging's
    handlers and the standard streams are flushed, and the process ends at once; where a thread is
    still running (an orderly exit waits for it) or a stream does not flush, it exits the usual way.
    """
    status = main()
    logging = sys.modules.get("logging")
    if logging is not None:
        logging.shutdown()
    threading = sys.modules.get("threading")
    running = threading is not None and any(
        not thread.daemon for thread in threading.enumerate() if thread is not threading.main_thread())
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:  # None: Python started with that descriptor closed (`2>&-`)
                stream.flush()
    except (OSError, ValueError):
        running = True
    if running:
        sys.exit(status)
    os._exit(status)


def _run(args: argparse.Namespace) -> int:
    source: str = args.request
    if source.startswith("@"):
        text = inputs.decoded(inputs.read_file(source[1:]))
    elif source == "-":
        if sys.stdin is None:
            raise inputs.stdin_closed("give the request as an argument, or @FILE")
        if sys.stdin.isatty():
            sys.stderr.write("gdres run: reading one JSON request from the terminal; end it with Ctrl-D "
                             "(or give the request as an argument, or @FILE)\n")
        text = inputs.decoded(sys.stdin.buffer.read())
    else:
        text = source
    reply = None
    if args.warm:
        from gdres.front import warm

        reply = warm.ask_host(text, godot=args.godot, timeout=args.timeout, auto_import=not args.no_import,
                              cwd=os.getcwd(), on_note=_show_note)
    if reply is None:
        reply = _run_cold(args, text)
    command.print_json(reply)
    return EXIT_OK if reply["result"] == "ok" else EXIT_ERROR


def _show_note(level: int, message: str) -> None:
    """Show what the bridge said while a warm host served this run, as progress.log_to_stderr() shows it
    (and, as logging does, never at the cost of the reply: a closed stderr loses the message only)."""
    with contextlib.suppress(OSError):
        sys.stderr.write(f"{message}\n")
        sys.stderr.flush()


def _run_cold(args: argparse.Namespace, text: str) -> dict[str, Any]:
    """The reply to the request `text` from an engine started for it."""
    request = command.decoded_request(text)
    with command.bridge(args) as bridge:
        command.prewarm(bridge, request, 1)
        reply = bridge.run(request)
    json_like = text.removeprefix("\ufeff").lstrip().startswith(("{", "["))
    if isinstance(request, str) and not json_like and "error" in reply:
        reply["error"]["message"] += (
            "; `gdres run` takes the request itself as JSON, or @FILE naming a file that holds it, "
            'e.g. {"op": "resource_read", "project_path": ".", "resource_path": "' + _example_path(text) + '"}')
    return reply


def _example_path(text: str) -> str:
    """`text` when it reads as a resource path (what a user meant to read), else a sample one."""
    word = text.strip()
    return word if word.endswith((".tres", ".tscn", ".res")) and '"' not in word and "\\" not in word else "a.tres"


def _mcp(bridge: Bridge, project: str | None, allow_scripts: bool) -> int:
    if sys.stdin is None:
        raise inputs.stdin_closed("the MCP server reads its client's messages there")
    if project is not None:
        try:
            # A per-repository client configuration says `--project .`: the folder the client starts in.
            project = paths.project_root(project, os.getcwd())
        except BridgeError as exc:
            raise UsageError(f"--project: {exc.message}") from None
    # Imported here because the MCP SDK takes ~0.4 s to import, which no other command should pay.
    try:
        from gdres.front.mcp import serve
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] != "mcp":
            raise
        raise UsageError("the MCP server needs the MCP SDK: pip install 'gdres[mcp]' "
                         "(or pipx inject gdres mcp)") from None

    serve(bridge, project, allow_scripts)
    return EXIT_OK
