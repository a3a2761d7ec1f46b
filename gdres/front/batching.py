"""`gdres batch`: a stream of requests served by one process or a fleet of them, in input order, with
--shard, --resume, --atomic and --stop-on-error."""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from gdres import serving
from gdres.front import command, inputs
from gdres.front.command import EXIT_ERROR, EXIT_OK, UsageError
from gdres.front.progress import Progress, bar_wanted, log_to_stderr
from gdres.settings import default_processes


def batch(args: argparse.Namespace) -> int:
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
    jobs = 1 if args.atomic else args.jobs or command.cores()
    if args.processes is not None and args.processes > jobs:
        raise UsageError(f"--processes {args.processes} is more than the {jobs} jobs: each process needs an engine")
    processes = 1 if one_at_a_time or args.part else args.processes or default_processes(jobs)
    want_progress = bar_wanted(args.progress)
    if args.shard is not None or args.resume is not None:
        return _batch_some(args, jobs, processes, want_progress)
    stream, lines = inputs.batch_input(args.file)
    # The bar needs the whole count; the engines started at once only whether there are as many
    # lines as --jobs. Start no more engines than the batch has lines: a one-line batch needs one,
    # not one per core. From a pipe the count is unknown: one starts now, and the pool starts the
    # others (without waiting for them) once there are requests for them.
    total = inputs.count_lines(args.file, None if want_progress else jobs)
    progress = Progress(total, bar=want_progress, summary=not args.part)
    with stream:
        return _serve(args, jobs, processes, inputs.request_lines(lines), total, progress, itertools.count(1), {})


def _batch_some(args: argparse.Namespace, jobs: int, processes: int, want_progress: bool) -> int:
    """Serve the lines of the batch that fall to this shard (--shard) and that an earlier output did
    not answer ok (--resume); the replies --resume copies come in their places. The whole input is
    read first: every shard must see every line to draw the same partition (serving/shards.py)."""
    earlier = _answered(args.resume) if args.resume is not None else {}
    stream, lines = inputs.batch_input(args.file)
    with stream:
        texts = list(inputs.request_lines(lines))
    numbers: Sequence[int] = range(1, len(texts) + 1)
    if args.shard is not None:
        try:
            shard, count = serving.parse_shard(args.shard, os.environ.get("JOB_COMPLETION_INDEX"))
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        numbers = serving.shard_lines(texts, shard, count, os.getcwd())
    copies = {number: earlier[number] for number in numbers if number in earlier}
    if copies:
        sys.stderr.write(f"gdres: {len(copies)} line{'s' if len(copies) != 1 else ''} answered ok in "
                         f"{args.resume}, copied from it\n")
    served = [texts[number - 1] for number in numbers if number not in copies]
    progress = Progress(len(served), bar=want_progress, summary=not args.part)
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
    for raw in inputs.read_file(path).splitlines():
        try:
            reply = json.loads(raw)
        except ValueError:
            continue
        if isinstance(reply, dict) and reply.get("result") == "ok" and type(reply.get("line")) is int:
            answered[reply["line"]] = _Copy(raw.decode("utf-8") + "\n")
    return answered


def _serve(args: argparse.Namespace, jobs: int, processes: int, texts: Iterator[str], total: int | None,
           progress: Progress, numbers: Iterable[int], copies: dict[int, _Copy]) -> int:
    """Serve the requests `texts` (`total` of them, where known), which are the input's lines `numbers`
    less those in `copies`; write the replies, the copies in their places; return the exit status."""
    first = next(texts, None)
    if processes > 1:
        lines = itertools.chain([first] if first is not None else [], texts)
        return _batch_parts(args, jobs, processes, lines, numbers, copies, progress)
    request: Any = command.decoded_request(first) if first is not None else None
    with command.bridge(args, jobs, progress) as bridge:
        if not args.atomic:
            # An atomic batch starts its engines once it has begun its journal.
            command.prewarm(bridge, request, min(jobs, total) if total is not None else 1)
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
                 copies: dict[int, _Copy], progress: Progress) -> int:
    """Serve the batch through `processes` bridge processes sharing `jobs` engines (serving/fleet.py)."""
    log_to_stderr()
    options = [f"--timeout={args.timeout!r}"]
    options += [f"--godot={args.godot}"] if args.godot is not None else []
    options += ["--verbose"] if args.verbose else []
    options += ["--no-import"] if args.no_import else []
    fleet = serving.Fleet(serving.part_argv(options), serving.shares(jobs, processes), os.getcwd())
    # A pipe may pause between lines: each goes to its part at once; a file's are sent a few at a time.
    replies = fleet.map(lines, eager=args.file == "-" or not os.path.isfile(args.file))
    try:
        return _write_replies(_numbered(numbers, replies, copies), fleet.ready, progress, marked=False)
    except KeyboardInterrupt:
        # Raised here, not inside the fleet's generator, which its close() then ends.
        fleet.interrupted = True
        replies.close()
        raise


def _write_replies(replies: Iterable[tuple[int, bool, Any]], ready: Callable[[], bool], progress: Progress, *,
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
                text = command.json_line(reply)
            out.write(("+" if ok else "-") + text if marked else f'{{"line":{number},{text[1:]}')
            # Flush only when the next reply is not ready yet: replies stream as they come,
            # without one system call per reply on a fast run.
            if not ready():
                out.flush()
            progress.update(ok)
        out.flush()
    except BrokenPipeError:
        command.reader_gone()
        return EXIT_ERROR
    finally:
        progress.close()
    return EXIT_ERROR if failed else EXIT_OK
