"""The engine's second wall on Linux: the kernel (Landlock) confines what a serving engine may open.

The load gate (gdscript/safety/gate.gd) keeps project code from running and paths from leading out;
this wall holds even where the gate were wrong: an engine started behind it can read only the files
an engine needs (the system's, the engine's own, the bridge's scripts and settings pack, the
project), list folders (names only), write only inside the project and /dev/null, and (Landlock
ABI 4, Linux 6.7) neither bind nor connect a TCP socket. An import's engines are walled alike, with
the import's shadow and a private home in place of the project (gdres/serving/imports.py). Landlock
needs no privilege (Linux 5.13+); where it is missing the engine runs without the wall, and
`gdres doctor` says so.

The wall is put up by this file run as a launcher, which restricts itself and then becomes the
engine (exec): `python -I -S wall.py --read DIR... --write DIR... -- ENGINE ARGS...`. A launcher, not
a `preexec_fn`: the bridge starts engines from several threads, where running Python between fork
and exec is unsafe. It costs one small interpreter start (~25 ms here) per engine started.

macOS and Windows (not built): sandbox-exec profiles (deprecated but working) or the App Sandbox would
do on macOS; on Windows an AppContainer or a restricted token with the project's folder the only one
granted write access.
"""

from __future__ import annotations

import ctypes
import os
import sys

# The launcher (this file run as a script, once per engine started) imports no more than it needs:
# pathlib, re and typing cost it ~10 ms of its ~30, and functools and signal (with enum) ~5 ms of
# its ~19 (`python -I -S` alone starts in ~10 ms here). Type checkers take any TYPE_CHECKING as True.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

# Landlock's system calls (the same numbers on every architecture) and constants (linux/landlock.h).
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_PDEATHSIG = 1

_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_REMOVE_DIR, _REMOVE_FILE, _MAKE_CHAR, _MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
_MAKE_REG, _MAKE_SOCK, _MAKE_FIFO, _MAKE_BLOCK, _MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
_REFER, _TRUNCATE = 1 << 13, 1 << 14

# Landlock ABI 4 (Linux 6.7) on: TCP binds and connections, refused unless a rule allows them.
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1
_NET_ABI = 4
# Landlock ABI 6 (Linux 6.12) on: no abstract Unix socket and no signal reaches out of the domain.
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1
_SCOPE_ABI = 6

_READ = _READ_FILE | _READ_DIR | _EXECUTE
_WRITE = (_WRITE_FILE | _REMOVE_DIR | _REMOVE_FILE | _MAKE_CHAR | _MAKE_DIR | _MAKE_REG | _MAKE_SOCK
          | _MAKE_FIFO | _MAKE_BLOCK | _MAKE_SYM)
# The rights that apply to a file (a rule on a file may grant no others).
_FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE

# What every engine reads: the system's libraries, configuration and kernel interfaces.
SYSTEM_READ = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc", "/proc", "/sys", "/dev")

OFF_VARIABLE = "GDRES_WALL"
"""Set to "off" to start engines without the wall (for a Godot build that must open more)."""

_LAUNCHER = os.path.realpath(__file__)
_LAUNCHERS_FOLLOWED = 8
_LAUNCHER_MAX = 64 * 1024
_ABSOLUTE_PATH = r"""/[^\s"'$:;|&()<>`]+"""


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


_abi: list[int] = []
"""abi(), once asked."""


def abi() -> int:
    """The Landlock ABI version this kernel offers, 0 where there is none (or no Linux)."""
    if not _abi:
        _abi.append(_ask_abi())
    return _abi[0]


def _ask_abi() -> int:
    if not sys.platform.startswith("linux"):
        return 0
    try:
        version = _libc().syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return max(int(version), 0)


def status() -> tuple[bool, str]:
    """Whether engines start behind the wall here, and a line saying so (for `doctor`)."""
    if os.environ.get(OFF_VARIABLE) == "off":
        return False, f"down ({OFF_VARIABLE}=off; the load gate alone keeps project code from running)"
    version = abi()
    if version == 0:
        reason = "Landlock needs Linux 5.13 or later" if sys.platform.startswith("linux") else "Linux only"
        return False, f"down ({reason}; the load gate alone keeps project code from running)"
    network = "; no TCP" if version >= _NET_ABI else "; TCP not governed before Landlock ABI 4"
    network += "; no abstract Unix socket or signal out" if version >= _SCOPE_ABI else ""
    return True, (f"up (Landlock ABI {version}: engines and imports read only what they need, write only in the "
                  f"project or the import's shadow{network})")


def argv(engine_argv: Sequence[str], *, read: Sequence[Path], write: Sequence[Path],
         die_with_parent: bool = False) -> list[str]:
    """`engine_argv` behind the wall where this system has one, else as it is. `die_with_parent`: the
    engine is killed when the thread that starts it ends (PR_SET_PDEATHSIG), for an engine with no
    heartbeat to fail (an import's editor, which a project's script can hold up for as long as it
    likes); only for a thread that waits for the engine, as an import's does."""
    if not status()[0]:
        return list(engine_argv)
    folders = [arg for path in read for arg in ("--read", str(path))]
    folders += [arg for path in write for arg in ("--write", str(path))]
    if die_with_parent:
        folders.append("--die-with-parent")
    return [sys.executable, "-I", "-S", _LAUNCHER, *folders, "--", *engine_argv]


def engine_reads(engine_path: str) -> list[Path]:
    """The folders the engine at `engine_path` needs to read: its own folder and, when it is a
    launcher script (as scripts/install-godot.sh writes, or a distribution's wrapper), the folders
    and the files' folders that the script names by absolute path, followed through launchers that
    start launchers."""
    import re
    from pathlib import Path

    found: list[Path] = []
    pending = [Path(engine_path)]
    seen: set[Path] = set()
    while pending and len(seen) < _LAUNCHERS_FOLLOWED:
        path = pending.pop().resolve()
        if path in seen:
            continue
        seen.add(path)
        found.append(path.parent)
        for named in map(Path, re.findall(_ABSOLUTE_PATH, _launcher_text(path))):
            if named.is_dir():
                found.append(named)
            elif named.is_file():
                pending.append(named)
    return found


def _launcher_text(path: Path) -> str:
    """The text of a launcher script (`#!` first), or "" for a binary or anything unreadable."""
    try:
        with path.open("rb") as file:
            head = file.read(_LAUNCHER_MAX)
    except OSError:
        return ""
    return head.decode("utf-8", "replace") if head.startswith(b"#!") else ""


def restrict(read: Sequence[str], write: Sequence[str]) -> None:
    """Confine this process (and what it executes) to reading `read` and `write`, writing `write`."""
    libc = _libc()
    version = abi()
    handled = _READ | _WRITE | (_REFER if version >= 2 else 0) | (_TRUNCATE if version >= 3 else 0)
    # No engine needs the network: from ABI 4 on, TCP is handled and no rule allows any of it.
    net = _NET_BIND_TCP | _NET_CONNECT_TCP if version >= _NET_ABI else 0
    # Nor may it talk to an abstract Unix socket outside its domain (a session bus, an agent) or
    # signal a process outside it (its bridge), from ABI 6 on.
    scoped = _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL if version >= _SCOPE_ABI else 0
    attr = _RulesetAttr(handled, net, scoped)
    size = 24 if scoped else 16 if net else 8
    ruleset = libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    try:
        for paths, rights in ((read, _READ), (write, handled)):
            for path in paths:
                _allow(libc, ruleset, path, rights)
        _allow(libc, ruleset, "/dev/null", _READ_FILE | _WRITE_FILE)
        # Folders may be listed anywhere (names, not contents): the engine's confinement checks list
        # a folder outside the project to learn how it stores a name (a link out and back in, on a
        # file system that ignores case: gdscript/safety/paths.gd).
        _allow(libc, ruleset, "/", _READ_DIR)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
        if libc.syscall(_RESTRICT_SELF, ruleset, ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    finally:
        os.close(ruleset)


def _allow(libc: ctypes.CDLL, ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # a folder this system does not have (/lib32): nothing there to allow
    try:
        if not os.path.isdir(path):
            rights &= _FILE_RIGHTS
        rule = _PathBeneath(rights, fd)
        if libc.syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), f"landlock_add_rule({path})")
    finally:
        os.close(fd)


def _main(args: list[str]) -> None:
    parent = os.getppid()
    split = args.index("--")
    options, command = args[:split], args[split + 1:]
    if "--die-with-parent" in options:
        options.remove("--die-with-parent")
        if _libc().prctl(_PR_SET_PDEATHSIG, 9, 0, 0, 0) != 0 or os.getppid() != parent:
            sys.exit(1)  # no way to die with the bridge, or it is gone already
    read = [options[i + 1] for i in range(0, len(options), 2) if options[i] == "--read"]
    write = [options[i + 1] for i in range(0, len(options), 2) if options[i] == "--write"]
    restrict(read, write)
    # Python ignores SIGPIPE and SIGXFSZ, and an ignored signal stays ignored across exec: the
    # engine must die of SIGPIPE once its bridge is gone (gdscript/main.gd's heartbeat). _signal is
    # what the signal module wraps, built into the interpreter: signal's own import (enum) is not.
    import _signal  # type: ignore[import-not-found]  # typeshed has no stub of it

    for number in (_signal.SIGPIPE, _signal.SIGXFSZ):
        _signal.signal(number, _signal.SIG_DFL)
    os.execv(command[0], command)


if __name__ == "__main__":
    _main(sys.argv[1:])
