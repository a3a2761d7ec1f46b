"""Reading a command's requests: one from an argument, @FILE or standard input, a batch's lines from a
file, standard input or a named pipe (which may go quiet with its writer alive)."""

from __future__ import annotations

import contextlib
import itertools
import os
import sys

from gdres.front.command import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import IO, Any


def stdin_closed(instead: str) -> UsageError:
    return UsageError(f"standard input is closed (`<&-`): {instead}")


def batch_input(source: str) -> tuple[contextlib.AbstractContextManager[Any], Iterator[bytes]]:
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
            raise stdin_closed("give the requests in a file")
        buffer: Any = sys.stdin.buffer
        raw = getattr(buffer, "raw", None)
        if raw is None:  # a stand-in (a test's BytesIO): nothing below it to read
            return contextlib.nullcontext(), iter(buffer)
        # What the buffered reader holds already (read ahead for whoever read from it before, in
        # this process) comes first.
        return contextlib.nullcontext(), lines_of(raw, buffer.read1(len(buffer.peek())))
    try:
        pipe = open(source, "rb", buffering=0)  # noqa: SIM115  # closed at its end: see above
    except OSError as exc:
        raise UsageError(f"cannot read {source}: {exc.strerror}") from None
    return contextlib.nullcontext(), lines_of(pipe, close=True)


def lines_of(raw: Any, held: bytes = b"", *, close: bool = False) -> Iterator[bytes]:
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
            from gdres import platform

            platform.wait_for_input(raw)
            continue
        yield chunk


def request_lines(stream: Iterable[bytes]) -> Iterator[str]:
    """Every line a request, blank ones too (they get an invalid_json reply): reply N is line N."""
    for raw in stream:
        yield decoded(raw)


def decoded(data: bytes) -> str:
    """Return the text of a request, or a NUL-led marker that decode_request reports as not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return "\0invalid utf-8"


def count_lines(source: str, most: int | None = None) -> int | None:
    """Return the number of requests in a batch file (counting no further than `most`), or None
    for a pipe."""
    if source == "-" or not os.path.isfile(source):
        return None
    with open(source, "rb") as lines:
        return sum(1 for _ in itertools.islice(lines, most))


def read_file(path: str) -> bytes:
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
