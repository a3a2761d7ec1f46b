"""The reply scanner on bytes alone: frames split anywhere, long chatter, garbage after a token."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gdres.engine.frames import PIECE, Garbled, ReplyScanner

TOKEN = b"0123456789abcdef0123456789abcdef"


def frame(body: bytes) -> bytes:
    return TOKEN + b" %d " % len(body) + body + b"\n"


def scan(pieces: list[bytes]) -> tuple[list[bytes], bytes]:
    scanner = ReplyScanner(TOKEN)
    frames: list[bytes] = []
    chatter: list[bytes] = []
    for piece in pieces:
        got, said = scanner.feed(piece)
        frames += got
        chatter += said
    return frames, b"".join(chatter) + scanner.end()


STREAM = (b"WARNING: a project script printed this\n" + frame(b'{"seq": 1}') + b"half a line " + frame(b"")
          + frame('{"text": "caf\u00e9 \\n"}'.encode()) + b"the end\n")
BODIES = [b'{"seq": 1}', b"", '{"text": "caf\u00e9 \\n"}'.encode()]


def test_one_read() -> None:
    frames, chatter = scan([STREAM])
    assert frames == BODIES
    assert b"a project script printed this" in chatter and b"half a line" in chatter and b"the end" in chatter


def test_a_token_and_a_header_split_across_every_byte() -> None:
    frames, chatter = scan([STREAM[at : at + 1] for at in range(len(STREAM))])
    assert frames == BODIES
    assert TOKEN not in chatter


@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=12))
def test_any_split_gives_the_same_frames(cuts: list[int]) -> None:
    bounds = [0, *sorted(cuts), len(STREAM)]
    assert scan([STREAM[a:b] for a, b in itertools.pairwise(bounds)])[0] == BODIES


def test_a_mebibyte_line_passes_as_chatter_and_the_frame_after_it_is_found() -> None:
    body = json.dumps({"seq": 2, "reply": "x" * (1 << 20)}).encode()
    line = b"y" * (3 * PIECE) + b"\n"
    stream = line + frame(body)
    scanner = ReplyScanner(TOKEN)
    frames: list[bytes] = []
    for at in range(0, len(stream), 65536):
        got, _ = scanner.feed(stream[at : at + 65536])
        frames += got
    assert frames == [body]


def test_a_line_without_end_is_not_held_whole() -> None:
    scanner = ReplyScanner(TOKEN)
    passed = 0
    for _ in range(8):
        passed += sum(len(piece) for piece in scanner.feed(b"z" * PIECE)[1])
    assert passed >= 7 * PIECE


@pytest.mark.parametrize("garbage", [b" x ", b" 12x", b"  12 ", b" 1234567890123456 ", b"garbage"])
def test_garbage_after_a_token_is_garbled_and_keeps_what_came_before(garbage: bytes) -> None:
    scanner = ReplyScanner(TOKEN)
    with pytest.raises(Garbled) as caught:
        scanner.feed(frame(b'{"seq": 1}') + b"chatter\n" + TOKEN + garbage + b"." * 40)
    assert caught.value.frames == [b'{"seq": 1}']
    assert b"chatter" in b"".join(caught.value.chatter)


def test_a_header_still_coming_is_waited_for() -> None:
    scanner = ReplyScanner(TOKEN)
    assert scanner.feed(TOKEN + b" 12") == ([], [])
    assert scanner.feed(b"3") == ([], [])
    assert scanner.feed(b" " + b"a" * 123 + b"\n")[0] == [b"a" * 123]
