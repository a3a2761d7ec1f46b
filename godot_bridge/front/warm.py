"""A warm engine per project, reused across processes: `godot-bridge run --warm` and `warm_run()`.

A cold `run` spends ~0.4 s before its request: the engine starts and compiles the bridge's GDScript
(~0.3 s of it). With `--warm`, the first `run` on a project starts a host process
(`python -m godot_bridge.front.warm`) holding a Bridge and its engine for that project, and every
later one hands its request to that host and prints the reply: the engine is already up.

The host listens on a Unix socket in a folder only its user can open (cache_dir()/hosts, mode
0700, checked before each use; a local socket, never a network one), and on Linux also checks the
user of each connection. It serves one request at a time, as one `Bridge.run()` each (the same
checks, locks, journal recovery and replies as a cold run), and ends once no request has come for
its idle time (GODOT_BRIDGE_WARM_IDLE seconds, default 600). A host serves requests only with the
settings it was started with: the project, the Godot it was told (or what would choose one: GODOT_BIN,
GODOT, GODOT4, PATH), --timeout, --no-import, and the bridge's own code (its version and its files'
times), so a changed setting or an upgraded bridge starts another host, and the old one idles out.

This module's client side imports only the standard library and the path checks: a warm `run` is
~25 ms of Python start and this module, plus the request.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import sys
import time
import zlib
from pathlib import Path
from typing import Any

from godot_bridge.engine import DEFAULT_TIMEOUT, cache_dir
from godot_bridge.errors import BridgeError, EngineCrashed
from godot_bridge.requests import paths
from godot_bridge.version import __version__

IDLE_DEFAULT = 600.0
"""Seconds a host waits for its next request before it ends (GODOT_BRIDGE_WARM_IDLE overrides)."""
_START_WAIT = 30.0
_MESSAGE_MAX = 256 << 20
_SOCKET_PATH_MAX = 100
_CODE = Path(__file__).resolve().parents[2]


def available() -> bool:
    """Whether this system can keep a warm host (Unix sockets; not Windows)."""
    return hasattr(socket, "AF_UNIX") and os.name == "posix"


def warm_run(
    request: Any, *, godot: str | None = None, timeout: float = DEFAULT_TIMEOUT, auto_import: bool = True,
    relative_to: str | None = None,
) -> dict[str, Any]:
    """Serve one request (a decoded JSON object, or its text) through its project's warm host,
    started if none is up; return its reply. Where no host can serve it (no Unix sockets, a
    request that names no project, allow_scripts), it is served by a Bridge of this process."""
    text = request if isinstance(request, str) else json.dumps(request)
    reply = ask_host(text, godot=godot, timeout=timeout, auto_import=auto_import,
                     cwd=relative_to if relative_to is not None else os.getcwd())
    if reply is not None:
        return reply
    from godot_bridge.front.api import Bridge

    with Bridge(godot, timeout=timeout, auto_import=auto_import, relative_to=relative_to) as bridge:
        return bridge.run(request)


def ask_host(text: str, *, godot: str | None, timeout: float, auto_import: bool, cwd: str) -> dict[str, Any] | None:
    """The reply of the warm host of the project `text` names (started if none is up), or None
    where no host is to serve it: the caller serves it cold (which also gives a bad request its
    error reply)."""
    if not available():
        return None
    root = _project(text, cwd)
    if root is None:
        return None
    folder = _hosts_folder()
    if folder is None:
        return None
    key = _key(root, godot, timeout, auto_import)
    name = f"{zlib.crc32(key.encode()):08x}{zlib.adler32(key.encode()):08x}"
    address = str(folder / f"{name}.sock")
    if len(address.encode()) > _SOCKET_PATH_MAX:
        sys.stderr.write(f"godot-bridge: {folder} is too deep for a Unix socket's address (at most "
                         f"{_SOCKET_PATH_MAX} bytes; XDG_CACHE_HOME moves it): served without a warm host\n")
        return None
    message = (json.dumps({"key": key, "cwd": cwd, "request": text}, ensure_ascii=False) + "\n").encode()
    connection = _connect(address)
    if connection is None:
        connection = _start(folder, name, address, key, root, godot, timeout, auto_import)
        if connection is None:
            return None
    with connection:
        try:
            connection.sendall(message)
            connection.shutdown(socket.SHUT_WR)
            answer = _read_all(connection)
        except OSError:
            answer = b""
    if not answer:
        # The host ended after taking the request: it may have been served. Not served again here.
        return _crashed(text, "the warm host of this project ended before it replied; the request may have been "
                        f"served (its log: {folder / (name + '.log')})")
    reply: dict[str, Any] = json.loads(answer)
    return None if reply.get("host") == "other" else reply


def _project(text: str, cwd: str) -> Path | None:
    """The real project folder a request names, or None (not a request, no project, allow_scripts)."""
    try:
        request = json.loads(text)
    except ValueError:
        return None
    if not isinstance(request, dict) or request.get("allow_scripts") is True:
        return None
    project = request.get("project_path")
    if not isinstance(project, str):
        return None
    try:
        return paths.project_root(project, cwd)
    except BridgeError:
        return None


def _hosts_folder() -> Path | None:
    """cache_dir()/hosts, made if missing; None unless this user owns it and no one else may enter it."""
    folder = cache_dir() / "hosts"
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(folder)
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        sys.stderr.write(f"godot-bridge: {folder} is not a folder only you can open: served without a warm host\n")
        return None
    return folder


def _key(root: Path, godot: str | None, timeout: float, auto_import: bool) -> str:
    """Every setting a host serves with: a host answers only requests with the same key."""
    finder = [godot] if godot is not None else [os.environ.get(n) for n in ("GODOT_BIN", "GODOT", "GODOT4", "PATH")]
    return json.dumps([str(root), finder, repr(float(timeout)), auto_import, __version__, _code_times()])


def _code_times() -> int:
    """The newest modification time of the bridge's code (its Python and GDScript): a bridge changed
    in place (an upgrade, a checkout) gets a new host."""
    newest = 0
    for folder in (_CODE / "godot_bridge", _CODE / "gdscript"):
        for where, dirs, files in os.walk(folder):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for file in files:
                if file.endswith((".py", ".gd", ".json")):
                    newest = max(newest, os.stat(os.path.join(where, file)).st_mtime_ns)
    return newest


def _connect(address: str) -> socket.socket | None:
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(address)
    except OSError:
        connection.close()
        return None
    return connection


def _start(
    folder: Path, name: str, address: str, key: str, root: Path, godot: str | None, timeout: float,
    auto_import: bool,
) -> socket.socket | None:
    """Start the host at `address` (one process at a time per address: a file lock) and connect."""
    import subprocess

    from filelock import FileLock, Timeout

    try:
        with FileLock(str(folder / f"{name}.lock"), timeout=_START_WAIT):
            connection = _connect(address)
            if connection is not None:
                return connection
            if os.path.lexists(address):
                os.unlink(address)
            with open(folder / f"{name}.log", "wb") as log:
                host = subprocess.Popen(
                    [sys.executable, "-m", "godot_bridge.front.warm", address, key, str(root), godot or "",
                     repr(float(timeout)), "import" if auto_import else "no-import"],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log, start_new_session=True,
                    cwd=str(root))
            deadline = time.monotonic() + _START_WAIT
            while time.monotonic() < deadline and host.poll() is None:
                connection = _connect(address)
                if connection is not None:
                    return connection
                time.sleep(0.01)
    except (Timeout, OSError):
        pass
    sys.stderr.write(f"godot-bridge: the warm host did not start (its log: {folder / (name + '.log')}); "
                     "served without it\n")
    return None


def _read_all(connection: socket.socket) -> bytes:
    """Every byte until the other end stops sending (no more than _MESSAGE_MAX and a bit)."""
    chunks, size = [], 0
    while size <= _MESSAGE_MAX and (chunk := connection.recv(1 << 16)):
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _crashed(text: str, message: str) -> dict[str, Any]:
    from godot_bridge.requests.request import refuse

    try:
        source = json.loads(text)
    except ValueError:
        source = None
    return refuse(source, EngineCrashed(message))


# ----- the host ----------------------------------------------------------------------------------


def host(address: str, key: str, project: str, godot: str, timeout: float, auto_import: bool) -> int:
    """Serve the requests sent to `address` until none comes for the idle time; return the exit status."""
    import logging

    from godot_bridge.front.api import Bridge

    logging.basicConfig(format="%(asctime)s %(message)s", level=logging.INFO, stream=sys.stderr)
    idle = float(os.environ.get("GODOT_BRIDGE_WARM_IDLE") or IDLE_DEFAULT)
    os.umask(0o077)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(address)
    listener.listen(64)
    ours = os.stat(address).st_ino
    with Bridge(godot or None, timeout=timeout, auto_import=auto_import) as bridge:
        bridge.prewarm(project, 1)
        listener.settimeout(idle)
        try:
            while True:
                try:
                    connection, _ = listener.accept()
                except TimeoutError:
                    break
                _serve(bridge, connection, key)
        finally:
            # Gone from its address first, so that no new request comes; then those already queued are served.
            if os.path.lexists(address) and os.stat(address).st_ino == ours:
                os.unlink(address)
            listener.settimeout(0)
            while True:
                try:
                    connection, _ = listener.accept()
                except OSError:
                    break
                _serve(bridge, connection, key)
            listener.close()
    return 0


def _serve(bridge: Any, connection: socket.socket, key: str) -> None:
    with connection:
        connection.setblocking(True)
        connection.settimeout(_START_WAIT)
        try:
            if not _same_user(connection):
                return
            data = _read_all(connection)
            if len(data) > _MESSAGE_MAX:
                return
            message = json.loads(data)
            if message.get("key") != key:
                connection.sendall(b'{"host": "other"}\n')
                return
            try:
                os.chdir(message["cwd"])
            except OSError:
                # Its relative paths cannot be taken as the client meant: the client serves it itself.
                connection.sendall(b'{"host": "other"}\n')
                return
            reply = bridge.run(message["request"])
            connection.sendall((json.dumps(reply, ensure_ascii=False) + "\n").encode())
        except (OSError, ValueError, KeyError, AttributeError):
            return


def _same_user(connection: socket.socket) -> bool:
    """Whether the peer is this user (Linux tells; elsewhere the folder's mode alone keeps others out)."""
    if not hasattr(socket, "SO_PEERCRED"):
        return True
    import struct

    credentials = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    uid: int = struct.unpack("3i", credentials)[1]
    return uid == os.getuid()


if __name__ == "__main__":
    sys.exit(host(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]), sys.argv[6] == "import"))
