"""The engine's reply stream, scanned: pure bytes in, reply frames and chatter out.

An engine writes each reply to its stderr as `<token> <byte length> <JSON>\\n` (gdscript/main.gd). The
token is random per process, so nothing else the engine or a project prints can pass for a reply;
everything between frames is chatter. `ReplyScanner.feed()` takes the stream in whatever pieces the
pipe gives (a token or a header split across reads, a 1 MiB line of chatter without an end) and
returns the frame bodies it completed and the chatter it passed, holding at most about a piece's
worth of unfinished chatter (`PIECE`): a line without end costs no more memory.
"""

from __future__ import annotations

import re

PIECE = 1 << 20
"""Longest piece of chatter held back while waiting for its line to end."""
_HEAD = re.compile(rb" (\d{1,15}) ")
_HEAD_START = re.compile(rb" ?\d{0,15}")
_HEAD_MAX = 18
"""Longest header after the token: a space, 15 digits, a space, and one byte more to decide."""


class Garbled(Exception):
    """A token followed by something that is no frame header: nothing after it can be trusted.

    Carries what the stream held before it (`frames`, `chatter`), which can.
    """

    def __init__(self, head: bytes, frames: list[bytes], chatter: list[bytes]) -> None:
        super().__init__(f"no frame header after the token: {head[:_HEAD_MAX]!r}")
        self.frames = frames
        self.chatter = chatter


class ReplyScanner:
    """Split an engine's reply stream into frame bodies and chatter."""

    def __init__(self, token: bytes) -> None:
        self._marker = token
        self._scan = b""
        self._body: list[bytes] = []
        self._need = 0

    def feed(self, data: bytes) -> tuple[list[bytes], list[bytes]]:
        """Scan the next bytes of the stream; return the frame bodies completed and the chatter passed.

        Raise Garbled when a token is followed by no valid header (it carries the frames and chatter
        before that; the stream is not to be read further).
        """
        frames: list[bytes] = []
        chatter: list[bytes] = []
        while data:
            if self._need:
                piece = data[: self._need]
                self._body.append(piece)
                self._need -= len(piece)
                data = data[len(piece) :]
                if not self._need:
                    frames.append(b"".join(self._body))
                    self._body = []
                continue
            scan, self._scan = self._scan + data, b""
            data = b""
            at = scan.find(self._marker)
            if at < 0:
                cut = scan.rfind(b"\n") + 1
                rest = scan[cut:]
                if len(rest) > PIECE:
                    # A piece of a longer line: only its end may hold the start of a token.
                    keep = len(self._marker)
                    cut, rest = len(scan) - keep, scan[-keep:]
                _add(chatter, scan[:cut])
                self._scan = rest
                break
            _add(chatter, scan[:at])
            head = scan[at + len(self._marker) :]
            match = _HEAD.match(head)
            if match is None:
                if len(head) < _HEAD_MAX and _HEAD_START.fullmatch(head):
                    self._scan = scan[at:]
                    break
                raise Garbled(head, frames, chatter)
            self._need = int(match[1])
            data = head[match.end() :]
            if not self._need:
                frames.append(b"")
        return frames, chatter

    def end(self) -> bytes:
        """Return what the stream left unfinished when it ended (chatter, or a cut frame)."""
        rest = self._scan + b"".join(self._body)
        self._scan, self._body, self._need = b"", [], 0
        return rest


def _add(chatter: list[bytes], piece: bytes) -> None:
    if piece:
        chatter.append(piece)
