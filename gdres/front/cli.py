"""The `gdres` command: requests in, replies out; stdout carries replies and nothing else."""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import math
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence

from gdres.engine import DEFAULT_TIMEOUT, ENGINES_PER_PROCESS, default_processes
from gdres.errors import BridgeError
from gdres.requests import paths
from gdres.version import __version__

# Types only: typing costs a warm `run` ~5 ms of its ~60. Type checkers take any TYPE_CHECKING as True.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import IO, Any, NoReturn

    from gdres.front.api import Bridge

# The API and the engine's modules are imported where they are needed: `schema` starts no engine,
# and a warm `run` (front/warm.py) hands its request to a host process that has them loaded.

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"gdres: {message} (see gdres --help)\n")


class UsageError(Exception):
    """The command line itself is wrong (exit status 2)."""


def _global_options(top: bool) -> _Parser:
    """The options accepted before and after the command; only the top level sets defaults,
    so that `gdres --godot X run` is not undone by the command's own default."""
    default = (lambda value: value) if top else (lambda value: argparse.SUPPRESS)
    options = _Parser(add_help=False)
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
    parser = _Parser(
        prog="gdres",
        description="Create and inspect Godot 4 resources through the real headless engine. "
        "Replies are JSON on stdout; exit status 0 when all are ok, 1 when any is an error, 2 for misuse.",
        parents=[_global_options(top=True)],
    )
    parser.add_argument("--version", action="version", version=f"gdres {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)
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
                       help=f"engine workers serving the batch at once (default: the number of cores, {_cores()})")
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
                                 help="list the Godot binaries found, say which is used, check a project, and "
                                      "say whether engines start behind the Landlock wall")
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
        return _usage(f"--timeout must be a positive number of seconds, not {args.timeout}")
    try:
        if args.command == "schema":
            from gdres.requests.models import request_schema

            _print(request_schema(), indent=2)
            return EXIT_OK
        if args.command == "doctor":
            return _doctor(args.godot, args.project, args.json)
        if args.command == "import":
            return _import(args)
        if args.command == "batch":
            return _batch(args)
        if args.command == "run":
            return _run(args)
        with _bridge(args) as bridge:
            return _mcp(bridge, args.project, args.allow_scripts)
    except UsageError as exc:
        return _usage(str(exc))
    except BrokenPipeError:
        _reader_gone()
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
        text = _decoded(_read_file(source[1:]))
    elif source == "-":
        if sys.stdin is None:
            raise _stdin_closed("give the request as an argument, or @FILE")
        if sys.stdin.isatty():
            sys.stderr.write("gdres run: reading one JSON request from the terminal; end it with Ctrl-D "
                             "(or give the request as an argument, or @FILE)\n")
        text = _decoded(sys.stdin.buffer.read())
    else:
        text = source
    reply = None
    if args.warm:
        from gdres.front import warm

        reply = warm.ask_host(text, godot=args.godot, timeout=args.timeout, auto_import=not args.no_import,
                              cwd=os.getcwd(), on_note=_show_note)
    if reply is None:
        reply = _run_cold(args, text)
    _print(reply)
    return EXIT_OK if reply["result"] == "ok" else EXIT_ERROR


def _show_note(level: int, message: str) -> None:
    """Show what the bridge said while a warm host served this run, as _log_to_stderr() shows it
    (and, as logging does, never at the cost of the reply: a closed stderr loses the message only)."""
    with contextlib.suppress(OSError):
        sys.stderr.write(f"{message}\n")
        sys.stderr.flush()


def _run_cold(args: argparse.Namespace, text: str) -> dict[str, Any]:
    """The reply to the request `text` from an engine started for it."""
    request = _decode(text)
    with _bridge(args) as bridge:
        _prewarm(bridge, request, 1)
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


def _bridge(args: argparse.Namespace, jobs: int = 1, progress: _Progress | None = None) -> Bridge:
    """The bridge of a command; an import while `progress` shows a bar gets a bar of its own."""
    # Imported here, and light: the request models (pydantic, ~0.1 s) load with the first request,
    # while the engine that _prewarm launched starts.
    from gdres.front.api import Bridge

    _log_to_stderr()
    shown = (lambda root: _ImportBar(root, progress)) if progress is not None and progress.bar is not None else None
    return Bridge(args.godot, jobs=jobs, timeout=args.timeout, verbose=args.verbose,
                  auto_import=not args.no_import, relative_to=os.getcwd(), import_shown=shown)


def _decode(text: str) -> Any:
    """The decoded request, or its text where it does not decode (its reply then says why)."""
    from gdres.requests.request import decode

    try:
        return decode(text)
    except BridgeError:
        return text


def _prewarm(bridge: Bridge, request: Any, count: int) -> None:
    """Launch the engines of the project the first request names, so they start while Python goes
    on (~0.2 s each way). A project that is not one gets its error reply from the request itself."""
    project = request.get("project_path") if isinstance(request, dict) else None
    if isinstance(project, str) and request.get("allow_scripts") is not True:
        with contextlib.suppress(BridgeError):
            bridge.prewarm(project, count)


def _mcp(bridge: Bridge, project: str | None, allow_scripts: bool) -> int:
    if sys.stdin is None:
        raise _stdin_closed("the MCP server reads its client's messages there")
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


def _batch(args: argparse.Namespace) -> int:
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.processes is not None and args.processes < 1:
        raise UsageError("--processes must be at least 1")
    if args.atomic and args.jobs not in (None, 1):
        raise UsageError("--atomic serves the requests in order on one engine: leave out --jobs")
    one_at_a_time = args.atomic or args.stop_on_error
    if one_at_a_time and args.processes not in (None, 1):
        raise UsageError("--atomic and --stop-on-error serve one request at a time, in one process: leave out "
                         "--processes")
    jobs = 1 if args.atomic else args.jobs or _cores()
    if args.processes is not None and args.processes > jobs:
        raise UsageError(f"--processes {args.processes} is more than the {jobs} jobs: each process needs an engine")
    processes = 1 if one_at_a_time or args.part else args.processes or default_processes(jobs)
    want_progress = _want_progress(args.progress)
    if args.shard is not None or args.resume is not None:
        return _batch_some(args, jobs, processes, want_progress)
    stream, lines = _input(args.file)
    # The bar needs the whole count; the engines started at once only whether there are as many
    # lines as --jobs. Start no more engines than the batch has lines: a one-line batch needs one,
    # not one per core. From a pipe the count is unknown: one starts now, and the pool starts the
    # others (without waiting for them) once there are requests for them.
    total = _count_lines(args.file, None if want_progress else jobs)
    progress = _Progress(total, bar=want_progress, summary=not args.part)
    with stream:
        return _serve(args, jobs, processes, _request_lines(lines), total, progress, itertools.count(1), {})


def _batch_some(args: argparse.Namespace, jobs: int, processes: int, want_progress: bool) -> int:
    """Serve the lines of the batch that fall to this shard (--shard) and that an earlier output did
    not answer ok (--resume); the replies --resume copies come in their places. The whole input is
    read first: every shard must see every line to draw the same partition (serving/shards.py)."""
    earlier = _answered(args.resume) if args.resume is not None else {}
    stream, lines = _input(args.file)
    with stream:
        texts = list(_request_lines(lines))
    numbers: Sequence[int] = range(1, len(texts) + 1)
    if args.shard is not None:
        from gdres.serving import shards

        try:
            shard, count = shards.parse_shard(args.shard, os.environ.get("JOB_COMPLETION_INDEX"))
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        numbers = shards.shard_lines(texts, shard, count, os.getcwd())
    copies = {number: earlier[number] for number in numbers if number in earlier}
    if copies:
        sys.stderr.write(f"gdres: {len(copies)} line{'s' if len(copies) != 1 else ''} answered ok in "
                         f"{args.resume}, copied from it\n")
    served = [texts[number - 1] for number in numbers if number not in copies]
    progress = _Progress(len(served), bar=want_progress, summary=not args.part)
    return _serve(args, jobs, processes, iter(served), len(served), progress, numbers, copies)


class _Copy(str):
    """A reply line copied from an earlier output (--resume): written as it is, counted as done before."""


def _answered(path: str) -> dict[int, _Copy]:
    """The lines an earlier output of the batch answered ok, with the reply's text. A line cut short
    (the batch was killed while writing it) or without `line` answers nothing."""
    with contextlib.suppress(OSError, ValueError, AttributeError):  # stdout closed, or no file behind it
        if os.path.samestat(os.stat(path), os.fstat(sys.stdout.fileno())):
            raise UsageError(f"--resume reads {path}, which is also this batch's output (`>` emptied it before "
                             "the batch began): write the output to another file")
    answered: dict[int, _Copy] = {}
    for raw in _read_file(path).splitlines():
        try:
            reply = json.loads(raw)
        except ValueError:
            continue
        if isinstance(reply, dict) and reply.get("result") == "ok" and type(reply.get("line")) is int:
            answered[reply["line"]] = _Copy(raw.decode("utf-8") + "\n")
    return answered


def _serve(args: argparse.Namespace, jobs: int, processes: int, texts: Iterator[str], total: int | None,
           progress: _Progress, numbers: Iterable[int], copies: dict[int, _Copy]) -> int:
    """Serve the requests `texts` (`total` of them, where known), which are the input's lines `numbers`
    less those in `copies`; write the replies, the copies in their places; return the exit status."""
    first = next(texts, None)
    if processes > 1:
        lines = itertools.chain([first] if first is not None else [], texts)
        return _batch_parts(args, jobs, processes, lines, numbers, copies, progress)
    request: Any = _decode(first) if first is not None else None
    with _bridge(args, jobs, progress) as bridge:
        if not args.atomic:
            # An atomic batch starts its engines once it has begun its journal.
            _prewarm(bridge, request, min(jobs, total) if total is not None else 1)
        items: Iterable[Any] = itertools.chain([request] if first is not None else [], texts)
        replies = bridge.batch(items, stop_on_error=args.stop_on_error, atomic=args.atomic)
        return _write_replies(_numbered(numbers, ((reply["result"] == "ok", reply) for reply in replies), copies),
                              bridge.ready, progress, marked=args.part)


def _numbered(numbers: Iterable[int], replies: Iterable[tuple[bool, Any]],
              copies: dict[int, _Copy]) -> Iterator[tuple[int, bool, Any]]:
    """Each reply with its input line, and each copy in its place."""
    replies = iter(replies)
    for number in numbers:
        if number in copies:
            yield number, True, copies[number]
            continue
        reply = next(replies, None)
        if reply is None:
            return
        yield number, *reply


def _batch_parts(args: argparse.Namespace, jobs: int, processes: int, lines: Iterable[str], numbers: Iterable[int],
                 copies: dict[int, _Copy], progress: _Progress) -> int:
    """Serve the batch through `processes` bridge processes sharing `jobs` engines (serving/fleet.py)."""
    from gdres.serving.fleet import Fleet, part_argv, shares

    _log_to_stderr()
    options = [f"--timeout={args.timeout!r}"]
    options += [f"--godot={args.godot}"] if args.godot is not None else []
    options += ["--verbose"] if args.verbose else []
    options += ["--no-import"] if args.no_import else []
    fleet = Fleet(part_argv(options), shares(jobs, processes), os.getcwd())
    # A pipe may pause between lines: each goes to its part at once; a file's are sent a few at a time.
    replies = fleet.map(lines, eager=args.file == "-" or not os.path.isfile(args.file))
    try:
        return _write_replies(_numbered(numbers, replies, copies), fleet.ready, progress, marked=False)
    except KeyboardInterrupt:
        # Raised here, not inside the fleet's generator, which its close() then ends.
        fleet.interrupted = True
        replies.close()
        raise


def _write_replies(replies: Iterable[tuple[int, bool, Any]], ready: Callable[[], bool], progress: _Progress, *,
                   marked: bool) -> int:
    """Write each reply (an object, a part's JSON line, or a _Copy) as one line of stdout, its input
    line first (`line`); return the exit status. `marked`: each line starts with its status, + or -,
    and has no `line` (a part of a fleet writes so: its lines are not the input's)."""
    failed = False
    out = sys.stdout
    try:
        for number, ok, reply in replies:
            failed = failed or not ok
            if isinstance(reply, _Copy):
                out.write(reply)
                continue
            if isinstance(reply, str):
                text = reply
            else:
                if reply["result"] == "error" and reply["error"]["code"] == "invalid_json":
                    reply["error"]["message"] = f"line {number}: {reply['error']['message']}"
                text = _json_line(reply)
            out.write(("+" if ok else "-") + text if marked else f'{{"line":{number},{text[1:]}')
            # Flush only when the next reply is not ready yet: replies stream as they come,
            # without one system call per reply on a fast run.
            if not ready():
                out.flush()
            progress.update(ok)
        out.flush()
    except BrokenPipeError:
        _reader_gone()
        return EXIT_ERROR
    finally:
        progress.close()
    return EXIT_ERROR if failed else EXIT_OK


def _json_line(value: Any, indent: int | None = None) -> str:
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


def _stdin_closed(instead: str) -> UsageError:
    return UsageError(f"standard input is closed (`<&-`): {instead}")


def _input(source: str) -> tuple[contextlib.AbstractContextManager[Any], Iterator[bytes]]:
    """The batch's input (a file, or standard input for "-"): what closes it, and its lines.

    A regular file is read as usual, and closed. Standard input, or a pipe named on the command
    line, may go quiet with its writer alive (`tail -f`): the thread left waiting on it when the
    batch is cut short (a Ctrl-C) must hold no lock of Python's, which a buffered reader does
    (closing the file then waits for it, and so may the interpreter's exit), so it is read through
    its unbuffered file object. Standard input stays open; a named pipe is closed once it ends.
    """
    if source != "-" and os.path.isfile(source):
        stream = _open(source)
        return stream, iter(stream)
    if source == "-":
        if sys.stdin is None:
            raise _stdin_closed("give the requests in a file")
        buffer: Any = sys.stdin.buffer
        raw = getattr(buffer, "raw", None)
        if raw is None:  # a stand-in (a test's BytesIO): nothing below it to read
            return contextlib.nullcontext(), iter(buffer)
        # What the buffered reader holds already (read ahead for whoever read from it before, in
        # this process) comes first.
        return contextlib.nullcontext(), _lines_of(raw, buffer.read1(len(buffer.peek())))
    try:
        pipe = open(source, "rb", buffering=0)  # noqa: SIM115  # closed at its end: see above
    except OSError as exc:
        raise UsageError(f"cannot read {source}: {exc.strerror}") from None
    return contextlib.nullcontext(), _lines_of(pipe, close=True)


def _lines_of(raw: Any, held: bytes = b"", *, close: bool = False) -> Iterator[bytes]:
    """The lines of `held` and what the unbuffered file object `raw` reads after it (each line with
    its b"\n"; the last one without, where the input ends in none); `close`: close `raw` at its end."""
    pieces: list[bytes] = []
    for chunk in _reads(raw, held):
        if b"\n" not in chunk:
            pieces.append(chunk)  # a long line: joined once, not copied at each read
            continue
        first, *more, rest = chunk.split(b"\n")
        yield b"".join([*pieces, first, b"\n"])
        for line in more:
            yield line + b"\n"
        pieces = [rest] if rest else []
    if close:
        raw.close()
    if pieces:
        yield b"".join(pieces)


def _reads(raw: Any, held: bytes) -> Iterator[bytes]:
    """`held`, then each read of `raw` until its end."""
    if held:
        yield held
    while (chunk := raw.read(1 << 16)) != b"":
        if chunk is None:
            # Nothing yet on a descriptor left non-blocking by whoever started this process: wait
            # for more (it was taken for the input's end, and the batch cut short).
            from gdres.engine import platform

            platform.wait_for_input(raw)
            continue
        yield chunk


def _request_lines(stream: Iterable[bytes]) -> Iterator[str]:
    """Every line a request, blank ones too (they get an invalid_json reply): reply N is line N."""
    for raw in stream:
        yield _decoded(raw)


def _decoded(data: bytes) -> str:
    """Return the text of a request, or a NUL-led marker that decode_request reports as not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return "\0invalid utf-8"


def _log_to_stderr() -> None:
    """Show the bridge's messages (imports, restarts) on stderr."""
    import logging

    logging.basicConfig(format="%(message)s", level=logging.INFO, stream=sys.stderr)


def _doctor(godot: str | None, project: str | None, as_json: bool) -> int:
    from gdres.engine import godot as engines
    from gdres.engine import wall

    _log_to_stderr()
    report: dict[str, Any] = {"op": "doctor"}
    ok = True
    survey = engines.survey(godot)
    candidates = [finding.to_json() for finding in survey.findings]
    if survey.engine is not None:
        source = next(finding.source for finding in survey.findings if finding.chosen)
        report["godot"] = {"path": survey.engine.path, "version": survey.engine.version, "supported": True,
                           "source": source, "candidates": candidates}
    else:
        assert survey.error is not None
        report["godot"] = {"supported": False, "error": survey.error.to_wire(), "candidates": candidates}
        ok = False
    if project is None and os.path.isfile("project.godot"):
        project = "."  # run in a project, as `doctor .`
    if project is not None:
        try:
            root = paths.project_root(project, os.getcwd())
            imported = os.path.isdir(os.path.join(root, ".godot", "imported"))
            report["project"] = {"path": root, "valid": True, "imported": imported}
        except BridgeError as exc:
            report["project"] = {"path": project, "valid": False, "error": exc.to_wire()}
            ok = False
    up, detail = wall.status()
    report["wall"] = {"up": up, "detail": detail}
    report["result"] = "ok" if ok else "error"
    if as_json:
        _print(report)
    else:
        sys.stdout.write(_doctor_text(report))
        sys.stdout.flush()  # here, where a reader gone is seen (main()), as _print() does
    return EXIT_OK if ok else EXIT_ERROR


def _import(args: argparse.Namespace) -> int:
    """Import every asset of a project not imported yet (gdres/serving/imports.py), with a
    progress bar; print one reply."""
    from pathlib import Path  # not at the top: a warm run's own process loads no pathlib

    from gdres.engine import godot as engines
    from gdres.serving import imports

    _log_to_stderr()
    reply: dict[str, Any] = {"op": "import", "project_path": args.project}
    try:
        root = Path(paths.project_root(args.project, os.getcwd()))
        engine = engines.probe(engines.find_godot(args.godot))
        pack = engines.settings_pack(engine)
    except BridgeError as exc:
        _print({**reply, "result": "error", "error": exc.to_wire()})
        return EXIT_ERROR
    from gdres.serving.starter import LoggedImport

    shown = _ImportBar(root) if _want_progress(args.progress) else LoggedImport(root)
    outcome = imports.import_project(engine, root, pack, max(args.timeout, imports.IMPORT_TIMEOUT),
                                     imports.stamp(root), lambda assets: shown.start(assets, ""), shown.update)
    shown.close(imported=bool(outcome.imported))
    reply.update(imported=len(outcome.imported), refused=outcome.refused)
    why = outcome.why_not()
    if why is None:
        _print({**reply, "result": "ok"})
        return EXIT_OK
    _print({**reply, "result": "error", "error": {"code": "not_imported", "message": why}})
    return EXIT_ERROR


def _doctor_text(report: dict[str, Any]) -> str:
    """The doctor's report for people: one line per thing checked, and what to do about a problem."""
    godot = report["godot"]
    if godot["supported"]:
        lines = [f"Godot:   {godot['path']} (version {godot['version']}): supported, found by {godot['source']}"]
    else:
        lines = [f"Godot:   not usable: {godot['error']['message']}"]
    if not godot["candidates"]:
        lines.append("Found:   no Godot on PATH or where its installers put it")
    else:
        used = "* marks the one used" if godot["supported"] else "none is used"
        lines.append(f"Found:   in search order; {used}")
    for candidate in godot["candidates"]:
        version = candidate["version"] if candidate["version"] is not None else "version unknown"
        lines.append(f"  {'*' if candidate['chosen'] else ' '} {candidate['source']}: {candidate['path']}")
        lines.append(f"      {version or 'no version printed'}: {candidate['reason']}")
    project = report.get("project")
    if project is not None and project["valid"]:
        state = ("imported" if project["imported"] else
                 "not imported yet (a request imports the assets it needs; `gdres import` imports all)")
        lines.append(f"Project: {project['path']}: a Godot project, {state}")
    elif project is not None:
        lines.append(f"Project: not usable: {project['error']['message']}")
    lines.append(f"Wall:    {report['wall']['detail']}")
    lines.append("Ready." if report["result"] == "ok" else "Not ready: see above.")
    return "\n".join(lines) + "\n"


def _want_progress(flag: bool | None) -> bool:
    return sys.stderr.isatty() if flag is None else flag


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _count_lines(source: str, most: int | None = None) -> int | None:
    """Return the number of requests in a batch file (counting no further than `most`), or None
    for a pipe."""
    if source == "-" or not os.path.isfile(source):
        return None
    with open(source, "rb") as lines:
        return sum(1 for _ in itertools.islice(lines, most))


class _ImportBar:
    """An import on a terminal: the line naming what is imported and why at once (LoggedImport's),
    then a bar of its own. The batch's bar, whose rate means nothing meanwhile, is cleared and its
    clock stopped until the import ends."""

    def __init__(self, root: Path, batch: _Progress | None = None) -> None:
        from gdres.serving.starter import LoggedImport

        self.logged = LoggedImport(root)
        self.batch = batch.bar if batch is not None else None
        self.bar: Any = None

    def start(self, assets: Sequence[str], why: str) -> None:
        from tqdm import tqdm

        if self.batch is not None:
            self.batch.clear()
        self.logged.start(assets, why)
        self.bar = tqdm(total=len(assets), desc="import", unit="asset", file=sys.stderr, dynamic_ncols=True)

    def update(self, done: int, total: int) -> None:
        if self.bar is not None:
            self.bar.update(done - self.bar.n)

    def close(self, *, imported: bool) -> None:
        if self.bar is not None:
            self.bar.close()
        self.logged.close(imported=imported)
        if self.batch is not None:
            self.batch.unpause()
            self.batch.refresh()


class _Progress:
    """The batch's progress bar on stderr when `bar` (tqdm: as wide as the terminal, percentage,
    elapsed time, rate and time left), errors counted beside it, and, bar or not (a CI log), a
    summary line when the batch ends. While the bar is up, the bridge's messages are written above it
    (tqdm.write), not through it."""

    def __init__(self, total: int | None, *, bar: bool, summary: bool = True) -> None:
        self.summary = summary
        self.errors = 0
        self.done = 0
        self.started = time.monotonic()
        self.bar = None
        self._messages = contextlib.ExitStack()
        if bar:
            # Imported only for a bar: tqdm's import (its version lookup reads package metadata) is
            # ~30 ms of CPU, a batch's whole start-up in a pipeline or CI log otherwise.
            from tqdm import tqdm
            from tqdm.contrib.logging import logging_redirect_tqdm

            _log_to_stderr()
            self._messages.enter_context(logging_redirect_tqdm())
            self.bar = tqdm(total=total, desc="batch", unit="req", file=sys.stderr, dynamic_ncols=True,
                            mininterval=0.1, smoothing=0.1)

    def update(self, ok: bool) -> None:
        self.done += 1
        if not ok:
            self.errors += 1
        if self.bar is not None:
            if not ok:
                self.bar.set_postfix_str(f"{self.errors} error{'s' if self.errors != 1 else ''}", refresh=False)
            self.bar.update(1)

    def close(self) -> None:
        done, elapsed = self.done, time.monotonic() - self.started
        if self.bar is not None:
            self.bar.close()
        self._messages.close()
        if not self.summary:
            return
        errors = f"{self.errors} error{'s' if self.errors != 1 else ''}"
        sys.stderr.write(f"gdres: {done} request{'s' if done != 1 else ''} in {elapsed:.1f} s "
                         f"({done / max(elapsed, 1e-9):.0f} req/s): {done - self.errors} ok, {errors}\n")
        sys.stderr.flush()


def _read_file(path: str) -> bytes:
    try:
        with open(path, "rb") as file:
            return file.read()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None


def _open(path: str) -> IO[bytes]:
    try:
        return open(path, "rb")
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None


def _print(value: Any, indent: int | None = None) -> None:
    sys.stdout.write(_json_line(value, indent))
    sys.stdout.flush()


def _reader_gone() -> None:
    """The reader of stdout went away (`| head`): what is left for it goes nowhere, so that the
    command ends quietly, as other command-line tools do, with no error from a last flush."""
    nowhere = os.open(os.devnull, os.O_WRONLY)
    os.dup2(nowhere, sys.stdout.fileno())
    os.close(nowhere)


def _usage(message: str) -> int:
    sys.stderr.write(f"gdres: {message}\n")
    return EXIT_USAGE

