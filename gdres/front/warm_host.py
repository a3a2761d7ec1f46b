"""The warm host (host(), started by front/warm.py through platform.own_python()): one process per
project holding a Bridge and its engine, serving the requests `gdres run --warm` hands it over a Unix
socket (front/warm.py, the client side, says how a host is found, checked and started, and what it
promises).

It reads its settings on stdin, listens, and goes on in a process of its own; it takes only clients
of its user that send the secret it wrote beside its socket, serves one request at a time as
`Bridge.run()` serves it, each for its own project, sends what the bridge logs meanwhile to that
request's client (a note a line), and ends once no request has come for its idle time.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
from collections.abc import Iterator

from gdres.errors import BridgeError
from gdres.front import warm

TYPE_CHECKING = False
if TYPE_CHECKING:
    import logging
    from typing import Any


def host() -> int:
    """Read the host's settings from stdin, listen, and go on in a process of its own (this one exits
    0 once the socket listens, 1 when this host is not to serve); serve until no request comes for
    the idle time."""
    import logging
    import secrets

    from gdres import platform

    # Imported before this process says it listens: a host that cannot import its code never serves.
    from gdres.front.api import Bridge

    settings = json.loads(sys.stdin.buffer.read())
    if settings["code"] != warm.code() or settings["python"] != sys.executable:
        _note("this host's code is not the code of the run that started it (an upgrade going on?)")
        return 1
    settings["secret"] = secrets.token_hex(32)
    place = _Place(settings)
    platform.detach()
    try:
        end_on_sigterm()
        logging.basicConfig(format="%(asctime)s %(message)s", level=logging.INFO, stream=sys.stderr)
        home = os.getcwd()
        with Bridge(settings["godot"], timeout=settings["timeout"], auto_import=settings["import"]) as bridge:
            # No Godot, or no project any more: each request then gets its error reply.
            with contextlib.suppress(BridgeError):
                bridge.prewarm(settings["root"], 1)
            _serve_queue(bridge, place.listener, warm.idle(), settings, home)
            # Gone from its address first, so that no new request comes; then those queued are served.
            place.leave()
            _serve_queue(bridge, place.listener, 0, settings, home)
    except KeyboardInterrupt:
        return 0  # SIGTERM (or SIGINT): ended as an exit ends it, its engines stopped; its log kept
    finally:
        platform.on_sigterm(None)  # ending already: another SIGTERM would only cut the cleanup short
        place.leave()
    # Ended as planned: its log holds nothing anyone needs.
    place.forget_log()
    return 0


def end_on_sigterm() -> None:
    """Have SIGTERM end this process as a Ctrl-C would, its cleanup run: in a pool's loop, at the
    loop's next safe point (serving/pool.py; raised where it landed, it could leave the request in
    flight to wait out its deadline), elsewhere at once."""
    from gdres import platform, serving

    platform.on_sigterm(serving.on_interrupt)


class _Place:
    """Where a host is found: its socket, and beside it the secret its clients must send (a file only
    this user can read: engines, which can reach the socket through the wall, cannot), and its log."""

    def __init__(self, settings: dict[str, Any]) -> None:
        self.address, self.token, self.log = (settings["place"][kind] for kind in ("sock", "token", "log"))
        umask = os.umask(0o077)
        try:
            handle = os.open(self.token, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
            with open(handle, "w", encoding="ascii") as file:
                file.write(settings["secret"])
            self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.listener.bind(self.address)
        finally:
            os.umask(umask)
        self.listener.listen(64)
        self._ours = {path: os.stat(path).st_ino for path in (self.address, self.token)}
        self._log = os.fstat(sys.stderr.fileno()).st_ino

    def leave(self) -> None:
        """Remove the socket and the secret, once, each only while it is still this host's (a newer
        host may have taken the address since)."""
        for path, inode in self._ours.items():
            with contextlib.suppress(OSError):
                if os.stat(path).st_ino == inode:
                    os.unlink(path)
        self._ours = {}

    def forget_log(self) -> None:
        with contextlib.suppress(OSError):
            if os.stat(self.log).st_ino == self._log:
                os.unlink(self.log)


def _serve_queue(bridge: Any, listener: socket.socket, wait: float, settings: dict[str, Any], home: str) -> None:
    """Serve each client until none comes within `wait` seconds (0: those already waiting)."""
    listener.settimeout(wait)
    while True:
        try:
            connection, _ = listener.accept()
        except OSError:
            return
        _serve(bridge, connection, settings, home)


def _serve(bridge: Any, connection: socket.socket, settings: dict[str, Any], home: str) -> None:
    """Serve one client: its request's reply, or {"host": "other"} for one this host is not to serve
    (the client serves it itself), or {"host": "failed"}."""
    import logging

    answer: dict[str, Any] = {"host": "other"}
    notes: _Notes | None = None
    with connection:
        connection.setblocking(True)
        connection.settimeout(warm.START_WAIT)
        try:
            if not warm.same_user(connection):
                return
            request = _request(connection, settings)
            if request is not None:
                # Said before anything of it is served: a client that never reads it (this host ended
                # with the client still queued) knows that nothing was, and serves the request itself.
                with contextlib.suppress(OSError):
                    connection.sendall(warm.TAKEN)
                with _notes_to(connection) as notes:
                    answer = bridge.run(request)
        except Exception:
            logging.getLogger("gdres").exception("the warm host failed on a request")
            answer = {"host": "failed"}
        finally:
            try:
                os.chdir(home)
            except OSError:
                os.chdir("/")
        # A note cut short (its client was not reading) ends where the reply's own line begins, even
        # when the request failed after it.
        start = notes.reply_start if notes is not None else b""
        with contextlib.suppress(OSError):
            # ASCII: a message may hold text that is not Unicode (a file name in another encoding).
            connection.sendall(start + (json.dumps(answer) + "\n").encode())


class _Notes:
    """Sends the client what the bridge logs while its request is served, a note a line: only what
    the serving thread logs, and without waiting (a client that does not read loses notes, and the
    host does not stall on it)."""

    def __init__(self, connection: socket.socket) -> None:
        import threading

        self.connection: socket.socket | None = connection
        self.thread = threading.get_ident()
        self.reply_start = b""
        """What the reply's line starts with: a new line where a note went out in part."""

    def send(self, record: logging.LogRecord, handler: logging.Handler) -> None:
        if record.thread != self.thread or self.connection is None:
            return
        try:
            # ASCII: a message may hold text that is not Unicode (a file name in another encoding).
            line = (json.dumps({"note": record.getMessage(), "level": record.levelno}) + "\n").encode()
            sent = self.connection.send(line, socket.MSG_DONTWAIT)
        except OSError:
            sent = 0  # the client reads nothing now (or is gone): no more notes for it
        except Exception:
            handler.handleError(record)
            return
        if sent < len(line):
            self.connection = None
            if sent:
                self.reply_start = b"\n"


@contextlib.contextmanager
def _notes_to(connection: socket.socket) -> Iterator[_Notes]:
    """Send the client, as a note each, what the bridge logs meanwhile: where a cold run shows it."""
    import logging

    notes = _Notes(connection)

    class Handler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            notes.send(record, self)

    handler = Handler()
    logger = logging.getLogger("gdres")
    logger.addHandler(handler)
    try:
        yield notes
    finally:
        logger.removeHandler(handler)


def _request(connection: socket.socket, settings: dict[str, Any]) -> str | None:
    """The request a client sent, with this host's folder changed to the client's; None for a message
    this host is not to serve: not whole, with other settings, or on another project."""
    import hmac  # here, in the host: ~5 ms of every warm run's client otherwise

    try:
        data = _read_all(connection)
        message = json.loads(data) if len(data) <= warm.MESSAGE_MAX else None
        if not (isinstance(message, dict) and message.get("key") == settings["key"]
                and isinstance(message.get("token"), str)
                and hmac.compare_digest(message["token"].encode(), settings["secret"].encode())
                and isinstance(message.get("cwd"), str) and isinstance(message.get("request"), str)
                and os.path.isabs(message["cwd"])):
            return None
        os.chdir(message["cwd"])
    except (OSError, ValueError, RecursionError):
        return None
    request: str = message["request"]
    return request if warm.project_of(request, message["cwd"]) == settings["root"] else None


def _read_all(connection: socket.socket) -> bytes:
    """Every byte until the other end stops sending (no more than warm.MESSAGE_MAX and a bit)."""
    chunks, size = [], 0
    while size <= warm.MESSAGE_MAX and (chunk := connection.recv(1 << 16)):
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _note(message: str) -> None:
    sys.stderr.write(f"gdres: {message}\n")
