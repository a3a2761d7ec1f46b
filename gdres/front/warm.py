"""A warm engine per project, reused across processes: `gdres run --warm` and `warm_run()`.

A cold `run` spends ~0.5 s before its request: the engine starts and compiles the bridge's GDScript
(~0.3 s of it). With `--warm`, the first `run` on a project starts a host process
(gdres.front.warm_host, started by platform.own_python()) holding a Bridge and its engine for that project, and every
later one hands its request to that host and prints the reply: the engine is already up.

The host listens on a Unix socket (never a network one) in a folder only its user can open:
$XDG_RUNTIME_DIR/gdres where that is set, else cache_dir()/hosts. Before each use the client
checks that folder (its user's, mode 0700) and every folder above it (its user's or root's, and
writable by no one else unless sticky), and on Linux that the host it reached runs as its user; the
host checks each client likewise, and takes only clients that send the secret it wrote beside its
socket (engines run as the same user and may reach the socket through the wall, but cannot read
that folder). The host runs from that folder, not the project, so that no Python file in a project
can be imported in its place. It serves one request at a time, each as
`Bridge.run()` serves it (the same checks, locks, journal recovery and replies as a cold run), for
its own project only, and ends once no request has come for its idle time (GDRES_WARM_IDLE
seconds, default 600). What the bridge logs on the serving thread while the host serves a request
goes to that request's client too, a line each before the reply, without waiting on it (warm_host.py _notes_to(),
_answer()): an import's progress shows where a cold run shows it. A host serves requests only with
the settings it was started with (_settings(), the key ask_host() makes of them:
the project, the Godot chosen and what would choose one, --timeout, --no-import, the umask, the
environment the bridge and the engine read, this machine, the bridge's own code), so a changed
setting or an upgraded bridge gets another host, and the old one idles out.

This module's client side imports only the standard library and a few light modules of the bridge
(the path checks, its errors, its version), and of the standard library neither typing nor pathlib
(~10 ms of a warm run's ~60): a warm `run` is Python's start, this module and the request. Starting
a host imports more (filelock, subprocess).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import sys
import zlib
from collections.abc import Callable

from gdres.errors import BridgeError, EngineCrashed
from gdres.requests import paths
from gdres.settings import DEFAULT_TIMEOUT, cache_dir
from gdres.version import __version__

# Types only (the module docstring says why). Type checkers take any TYPE_CHECKING as True.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

IDLE_DEFAULT = 600.0
"""Seconds a host waits for its next request before it ends (GDRES_WARM_IDLE overrides)."""
START_WAIT = 30.0
MESSAGE_MAX = 256 << 20
_SOCKET_PATH_MAX = 100
NOTE = b'{"note": '
"""How a line from a host that is a note starts (warm_host.py _notes_to() writes them; a reply starts otherwise)."""
TAKEN = b'{"taken": true}\n'
"""The line a host sends once it takes a request, before serving it."""
_WARNING = 30
_CODE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
"""The folder that holds the bridge's code: gdres/ and gdscript/."""
_KEYED_ENVIRONMENT = ("PATH", "HOME", "PYTHONPATH", "LANG", "LC_ALL", "TMPDIR", "XDG_CACHE_HOME", "XDG_DATA_HOME",
                      "XDG_CONFIG_HOME", "XDG_DATA_DIRS")
"""Variables the bridge or the engine reads (with every GODOT* and GDRES_* one): a host is started with the client's."""


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
    cwd = os.path.abspath(relative_to if relative_to is not None else os.getcwd())
    try:
        text = request if isinstance(request, str) else json.dumps(request)
    except (TypeError, ValueError):
        text = None
    reply = None
    if text:
        reply = ask_host(text, godot=godot, timeout=timeout, auto_import=auto_import, cwd=cwd, on_note=_log)
    if reply is not None:
        return reply
    from gdres.front.api import Bridge

    with Bridge(godot, timeout=timeout, auto_import=auto_import, relative_to=cwd) as bridge:
        return bridge.run(request)


def ask_host(text: str, *, godot: str | None, timeout: float, auto_import: bool, cwd: str,
             on_note: Callable[[int, str], object]) -> dict[str, Any] | None:
    """The reply of the warm host of the project `text` names (started if none is up), or None
    where no host is to serve it: the caller serves it cold (which also gives a bad request its
    error reply). What the bridge logs while the host serves the request (an import's progress, say)
    is given to `on_note` (level, message) as it comes, where a cold run would have logged it, and
    so is what this client has to say (a host started, or why none serves)."""
    if not available():
        return None
    try:
        f"{text}{cwd}".encode()
    except UnicodeEncodeError:
        return None  # not UTF-8 (a name from the system in another encoding): served cold
    root = project_of(text, cwd)
    if root is None:
        return None
    try:
        paths.cache_outside(root)
    except BridgeError:
        return None  # served cold, which refuses it: no host starts in a cache the project holds

    def say(message: str) -> None:
        on_note(_WARNING, f"gdres: {message}")

    folder = _hosts_folder(root, say)
    if folder is None:
        return None
    settings = _settings(root, godot, timeout, auto_import, cwd)
    key = json.dumps(settings, sort_keys=True)
    name = f"{zlib.crc32(key.encode()):08x}{zlib.adler32(key.encode()):08x}"
    place = {kind: os.path.join(folder, f"{name}.{kind}") for kind in ("sock", "token", "log")}
    address = place["sock"]
    if len(address.encode()) > _SOCKET_PATH_MAX:
        say(f"{folder} is too deep for a Unix socket's address (at most {_SOCKET_PATH_MAX} bytes): served "
            "without a warm host")
        return None
    connection = _connect(address) or _start(folder, place, settings, key, say)
    if connection is None:
        return None
    with connection:
        token = _read_token(place["token"])
        if not same_user(connection) or token is None:
            say(f"the warm host at {address} is not this user's: served without it")
            return None
        data = json.dumps({"key": key, "token": token, "cwd": cwd, "request": text}, ensure_ascii=False).encode()
        try:
            connection.sendall(data)
            connection.shutdown(socket.SHUT_WR)
        except OSError:
            return None  # the host took nothing: it reads a request whole before it takes it
        taken, reply = _answer(connection, on_note)
    if not taken:
        # Turned away (another key, say), or the host ended with this run still in its queue: nothing
        # of it was served, so it is served here.
        if not (isinstance(reply, dict) and reply.get("host") == "other"):
            say(f"the warm host ended before it took this run (its log: {place['log']}): served without it")
        return None
    if not isinstance(reply, dict) or reply.get("host") == "failed":
        # The host ended, or failed, after taking the request: it may have been served. Not served again here.
        return _crashed(text, "the warm host of this project ended or failed before it replied; the request may "
                        f"have been served (its log: {place['log']})")
    return reply


def project_of(text: str, cwd: str) -> str | None:
    """The real project folder a request names, or None (not a request, no project, allow_scripts)."""
    try:
        request = json.loads(text)
        project = request.get("project_path") if isinstance(request, dict) else None
        if not isinstance(project, str) or request.get("allow_scripts") is True:
            return None
        return paths.project_root(project, cwd)
    except (ValueError, RecursionError, BridgeError):
        return None


def _hosts_folder(root: str, say: Callable[[str], None]) -> str | None:
    """The folder of the hosts' sockets, made if missing; None (with a note) unless no other user can
    enter it, or replace it or a folder above it, and the project `root` does not hold it (code that
    allow_scripts lets run could take a host's secret there, or put a socket of its own)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    folder = (os.path.join(runtime, "gdres") if runtime and os.path.isabs(runtime)
              else os.path.join(cache_dir(), "hosts"))
    try:
        paths.folder_outside(folder, root, "the warm hosts' folder", "XDG_RUNTIME_DIR")
    except BridgeError as exc:
        say(f"{exc.message}: served without a warm host")
        return None
    try:
        # The folders made here are this user's alone, whatever the umask (002 would make them shared).
        for missing in reversed([place for place in [folder, *_above(folder)] if not os.path.lexists(place)]):
            with contextlib.suppress(FileExistsError):
                os.mkdir(missing, 0o700)
        # Checked and used by its real path: a link on the way, changed later, changes nothing.
        folder = os.path.realpath(folder)
        problem = _not_private(folder)
    except OSError as exc:
        problem = f"it cannot be made ({exc.strerror})"
    if problem:
        say(f"{folder}: {problem}: served without a warm host")
        return None
    return folder


def _above(path: str) -> list[str]:
    """The folders above the absolute `path`, nearest first, up to the root."""
    above = []
    while (parent := os.path.dirname(path)) != path:
        above.append(parent)
        path = parent
    return above


def _not_private(folder: str) -> str:
    """Why another user could reach into `folder`, a real path ("" when none could)."""
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        return "not a folder only you can open"
    for place in _above(folder):
        info = os.stat(place)
        shared = info.st_mode & 0o022 and not info.st_mode & stat.S_ISVTX
        if info.st_uid not in (0, os.getuid()) or shared:
            return f"{place} is a folder another user may change"
    return ""


def _settings(root: str, godot: str | None, timeout: float, auto_import: bool, cwd: str) -> dict[str, Any]:
    """What a host serves with: the project, the Godot named, the environment the bridge and the engine
    read (a Godot path and PATH's folders made absolute: the host runs elsewhere), the umask, this
    machine and the code."""
    environment = {name: value for name, value in os.environ.items()
                   if name in _KEYED_ENVIRONMENT or name.startswith(("GODOT", "GDRES_"))}
    environment.pop("GDRES_WARM_IDLE", None)
    for name in ("PATH", "PYTHONPATH"):
        if name in environment:
            # Relative folders as the run would take them; empty ones are not looked in (discovery.py:
            # a project's own `godot` must not run), so they go.
            environment[name] = os.pathsep.join(os.path.join(cwd, part)
                                                for part in environment[name].split(os.pathsep) if part)
    for name in ("GODOT_BIN", "GODOT", "GODOT4"):
        if os.sep in environment.get(name, ""):
            environment[name] = os.path.join(cwd, environment[name])
    named = os.path.join(cwd, godot) if godot is not None and os.sep in godot else godot
    return {"root": root, "godot": named, "timeout": float(timeout), "import": auto_import,
            "environment": environment, "umask": _umask(), "machine": socket.gethostname(),
            "python": sys.executable, "code": code()}


def _umask() -> int:
    """This process's umask, read without changing it where the system tells (Linux)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


def code() -> list[Any]:
    """The bridge's code: where it is, its version and the newest time of its files."""
    return [_CODE, __version__, _code_times()]


def _code_times() -> int:
    """The newest modification time of the bridge's code (its Python and GDScript): a bridge changed
    in place (an upgrade, a checkout) gets a new host."""
    newest = 0
    for folder in (os.path.join(_CODE, "gdres"), os.path.join(_CODE, "gdscript")):
        for where, dirs, files in os.walk(folder):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for file in files:
                if file.endswith((".py", ".gd", ".json")):
                    with contextlib.suppress(OSError):  # gone meanwhile (an upgrade going on)
                        newest = max(newest, os.stat(os.path.join(where, file)).st_mtime_ns)
    return newest


def _read_token(path: str) -> str | None:
    """The secret a host wrote beside its socket for its clients (None when there is none that is
    this user's). Engines, behind the wall, can reach the socket but cannot read this folder."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with open(handle, encoding="ascii") as file:
        if os.fstat(handle).st_uid != os.getuid():
            return None
        try:
            return file.read(128).strip() or None
        except ValueError:
            return None


def _connect(address: str) -> socket.socket | None:
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(address)
    except OSError:
        connection.close()
        return None
    return connection


def _start(folder: str, place: dict[str, str], settings: dict[str, Any], key: str,
           say: Callable[[str], None]) -> socket.socket | None:
    """Start the host whose socket, secret and log are `place` and connect to it; one client at a
    time starts hosts (a file lock).
    The process started binds the socket, then leaves the host running on its own and exits: its
    exit status says whether the host listens."""
    import subprocess

    from filelock import FileLock, Timeout

    from gdres import platform

    address, log = place["sock"], place["log"]
    try:
        with FileLock(os.path.join(folder, "start.lock"), timeout=START_WAIT):
            connection = _connect(address)
            if connection is not None:
                return connection
            if os.path.lexists(address):
                os.unlink(address)  # a host that is gone: nothing answers there
            say(f"starting a warm host for {settings['root']} (it ends after {idle():g} s without a request; "
                f"its log: {log})")
            environment = {**os.environ, **settings["environment"]}
            output = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
            try:
                # Its own installation first on its import path, never the folder it runs in (the hosts
                # folder): a cache inside a project made that the project's (a red-team read).
                launcher = subprocess.Popen(
                    platform.own_python("from gdres.front.warm_host import host; sys.exit(host())"),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL, stderr=output, cwd=folder, env=environment,
                    **platform.current().popen_options())
            finally:
                os.close(output)
            try:
                launcher.communicate(json.dumps({"key": key, "place": place, **settings}).encode(),
                                     timeout=START_WAIT)
            except subprocess.TimeoutExpired:
                launcher.kill()
                launcher.wait()
            if launcher.returncode == 0:
                return _connect(address)
    except Timeout:
        say("another warm host is still starting: served without one")
        return None
    except (OSError, subprocess.SubprocessError):
        pass
    say(f"the warm host did not start (its log: {log}): served without it")
    return None


def idle() -> float:
    """The host's idle time: GDRES_WARM_IDLE seconds when that is a positive number."""
    try:
        idle = float(os.environ.get("GDRES_WARM_IDLE") or IDLE_DEFAULT)
    except ValueError:
        return IDLE_DEFAULT
    return idle if 0 < idle < float("inf") else IDLE_DEFAULT


def _answer(connection: socket.socket, on_note: Callable[[int, str], object]) -> tuple[bool, Any]:
    """Whether the host took the request (it says so before it serves it), and its answer, decoded:
    its last line (None where the stream ends or breaks before it, or it is not JSON). Each line
    between is a note, given to `on_note` as it comes."""
    taken = False
    try:
        with connection.makefile("rb") as lines:
            while line := lines.readline(MESSAGE_MAX):
                if line == TAKEN:
                    taken = True
                    continue
                note = line.startswith(NOTE)
                try:
                    message = json.loads(line)
                except (ValueError, RecursionError):
                    if note:
                        continue  # a note the host sent in part (its client was not reading)
                    return taken, None
                if not note:
                    return taken, message if line.endswith(b"\n") else None
                if isinstance(message, dict) and isinstance(message.get("note"), str):
                    level = message.get("level")
                    on_note(level if isinstance(level, int) else _WARNING, message["note"])
    except OSError:
        pass  # the host is gone: what it said so far stands
    return taken, None


def same_user(connection: socket.socket) -> bool:
    """Whether the other end runs as this user (Linux tells; elsewhere the folder's checks alone
    keep other users out)."""
    if not hasattr(socket, "SO_PEERCRED"):
        return True
    # struct ucred: pid, uid, gid, each a 32-bit number in the machine's order.
    credentials = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
    return int.from_bytes(credentials[4:8], sys.byteorder) == os.getuid()


def _crashed(text: str, message: str) -> dict[str, Any]:
    from gdres.requests.request import refuse

    try:
        source = json.loads(text)
    except (ValueError, RecursionError):
        source = None
    return refuse(source, EngineCrashed(message))


def _log(level: int, message: str) -> None:
    """Log a host's note as the bridge's own message (what a cold warm_run() would have logged)."""
    import logging

    import gdres.serving  # noqa: F401  (its logger's NullHandler: quiet unless logging is configured)

    logging.getLogger("gdres").log(level, message)
