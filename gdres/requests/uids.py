"""Resolve `uid://` names of project files as the editor does: from the files themselves.

The editor learns each file's uid when it scans the project: a text resource or scene carries it in
its header (`[gd_resource ... uid="uid://..."]`), an imported asset in its `.import` file, a script or
shader in the `.uid` file beside it (Godot 4.4 on), a binary resource in its header. The engine's own
table (`.godot/uid_cache.bin`) is that scan's result and is missing from a fresh clone, so the bridge
reads the files, as the scan does: no hidden file or folder (`.godot/` among them), nothing under a
folder holding `.gdignore`, nothing through a linked folder, only the first 4 KB of a file.

A project's table is built on the first uid:// request and kept; a uid it does not hold, or one whose
file has since taken another uid, sends it back to the files once more. A uid two files claim (a file
copied outside the editor keeps its uid) names neither: the request is refused, naming both.
"""

from __future__ import annotations

import os
import re
import struct
from pathlib import Path

from gdres.errors import InvalidPath, NotFound

PREFIX = "uid://"
_TEXT_SUFFIXES = (".tres", ".tscn")
_BINARY_SUFFIXES = (".res", ".scn")
_HEADER_UID = re.compile(rb'^\[gd_[a-z]+ [^\n]*?\buid="(uid://[a-z0-9]+)"')
_IMPORT_UID = re.compile(rb'^uid="(uid://[a-z0-9]+)"', re.MULTILINE)
_UID_FILE = re.compile(rb"^\s*(uid://[a-z0-9]+)\s*$")
_UIDS_FLAG = 2
"""The binary format's FORMAT_FLAG_UIDS: a uid follows the flags in the header."""
_UID_CHARS = "abcdefghijklmnopqrstuvwxy012345678"
"""ResourceUID.id_to_text()'s digits: base 34, without z or 9 (found by asking the engine, 4.6.3)."""
_HEAD = 4096
"""Bytes read of a file to find its uid: a header, never a whole file (a project may hold huge ones)."""
_MAX_IDS = 64
"""Projects whose tables are kept (a batch rarely spans more)."""

_tables: dict[Path, dict[str, list[str]]] = {}


def resolve(root: Path, value: str, *, field: str) -> str:
    """The project-relative path of the file `value` (a uid://) names in the project at `root`."""
    table = _tables.get(root)
    found = table.get(value) if table is not None else None
    if found is None or len(found) != 1 or uid_of(root / found[0]) != value:
        if len(_tables) >= _MAX_IDS:
            _tables.clear()
        table = _tables[root] = scan(root)
        found = table.get(value)
    if not found:
        raise NotFound(f"{field}: {value} names no file of the project (its .tres and .tscn headers, .import and "
                       ".uid files were searched)", field=field)
    if len(found) > 1:
        raise InvalidPath(f"{field}: {value} is claimed by {' and '.join(sorted(found))} (a file copied outside the "
                          "editor keeps its uid); name the file by its path", field=field)
    return found[0]


def scan(root: Path) -> dict[str, list[str]]:
    """Every uid the project's files claim, each with the files (project-relative) that claim it."""
    named: set[Path] = set()
    for folder, dirs, files in os.walk(root):
        if ".gdignore" in files:
            dirs[:] = []
            continue
        dirs[:] = [name for name in dirs if not name.startswith(".") and not os.path.islink(os.path.join(folder, name))]
        for name in files:
            if name.startswith("."):
                continue  # hidden, as the editor has it (and the bridge's own temp files)
            if name.endswith((".import", ".uid")):
                named.add(Path(folder, name.rsplit(".", 1)[0]))
            elif name.endswith(_TEXT_SUFFIXES + _BINARY_SUFFIXES):
                named.add(Path(folder, name))
    table: dict[str, list[str]] = {}
    for path in sorted(named):
        uid = uid_of(path)
        if uid:
            table.setdefault(uid, []).append(path.relative_to(root).as_posix())
    return table


def uid_of(path: Path) -> str:
    """The uid:// the editor reads for the file at `path`, or "" when it has none or is unreadable."""
    try:
        # Regular files only (is_file): a FIFO or a device named like a resource would block or never end.
        for holder, pattern in ((Path(f"{path}.import"), _IMPORT_UID), (Path(f"{path}.uid"), _UID_FILE)):
            if holder.is_file():
                with holder.open("rb") as file:
                    found = pattern.search(file.read(_HEAD))
                return found.group(1).decode() if found else ""
        if not path.is_file():
            return ""
        if path.name.endswith(_BINARY_SUFFIXES):
            return _binary_uid(path)
        if path.name.endswith(_TEXT_SUFFIXES):
            with path.open("rb") as file:
                found = _HEADER_UID.match(file.readline(_HEAD))
            return found.group(1).decode() if found else ""
    except OSError:
        return ""
    return ""


def _binary_uid(path: Path) -> str:
    """The uid in a binary resource's header (ResourceFormatLoaderBinary's layout), or ""."""
    with path.open("rb") as file:
        head = file.read(_HEAD)
    if head[:4] != b"RSRC" or len(head) < 28:
        return ""
    # Magic, then big-endian, real64, major, minor and format as 32-bit numbers, the class name
    # (length, then as many bytes), the import metadata's offset (64 bits), the flags, the uid.
    order = ">" if struct.unpack_from("<I", head, 4)[0] else "<"
    (type_length,) = struct.unpack_from(order + "I", head, 24)
    at = 28 + type_length + 8
    if len(head) < at + 12:
        return ""
    flags, uid = struct.unpack_from(order + "IQ", head, at)
    if not flags & _UIDS_FLAG or uid >= 2**63 - 1:
        return ""
    return PREFIX + _uid_text(uid)


def _uid_text(uid: int) -> str:
    """ResourceUID.id_to_text() of `uid`, without the uid:// (its digits, most significant first)."""
    text = ""
    while True:
        uid, digit = divmod(uid, len(_UID_CHARS))
        text = _UID_CHARS[digit] + text
        if uid == 0:
            return text
