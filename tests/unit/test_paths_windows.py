"""Paths on every file system, as pure functions: each row is a path as a request would write it, and the
code gdres/requests/paths.py gives it without looking at the disk (normalise() then is_engine_file()).
The engine answers each alike: tests/engine/test_paths_windows.py; which stored name a path opens on a
case-insensitive mount: tests/engine/test_casefold.py."""

from __future__ import annotations

import pytest

from gdres.errors import BridgeError
from gdres.requests import paths

OK, INVALID, OUTSIDE = "ok", "invalid_path", "path_outside_project"


DEVICES = ["CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$",
           *(f"{port}{n}" for port in ("COM", "LPT") for n in [*"0123456789", "\u00b9", "\u00b2", "\u00b3"])]


TABLE: list[tuple[str, str, str]] = [
    # Drive letters: absolute, or relative to a drive's current folder.
    ("C:/x.tres", INVALID, "a drive letter"),
    ("c:/x.tres", INVALID, "a drive letter in lower case"),
    ("res://C:/x.tres", INVALID, "a drive letter after res://"),
    ("C:x.tres", INVALID, "relative to drive C's current folder"),
    ("C:", INVALID, "a drive alone"),
    ("C:\\x.tres", INVALID, "a drive letter and a backslash"),
    # Network shares (UNC) and the \\?\ and \\.\ prefixes, with either slash.
    ("//server/share/x.tres", INVALID, "a network share"),
    ("//server/share", INVALID, "a network share's root"),
    ("\\\\server\\share\\x.tres", INVALID, "a network share, with backslashes"),
    ("\\\\?\\C:\\x.tres", INVALID, "a long path"),
    ("\\\\?\\UNC\\server\\share\\x.tres", INVALID, "a long path to a network share"),
    ("//?/C:/x.tres", INVALID, "a long path, with slashes"),
    ("\\\\.\\C:\\x.tres", INVALID, "a device path"),
    ("//./COM1", INVALID, "a device path to a serial port"),
    # Backslashes, which Godot reads as slashes.
    ("a\\b.tres", INVALID, "a backslash between names"),
    ("a\\..\\..\\x.tres", INVALID, "'..' between backslashes"),
    # NTFS streams and the characters Windows forbids in names.
    ("x.tres:hidden", INVALID, "a stream of x.tres"),
    ("x.tres::$DATA", INVALID, "x.tres's data stream"),
    ("sub:s/x.tres", INVALID, "a stream of a folder"),
    (".godot::$INDEX_ALLOCATION/x.tres", INVALID, "the .godot folder under NTFS's name for its index"),
    *((f"a{char}b.tres", INVALID, f"{char!r}, which Windows forbids") for char in '<>:"|?*'),
    ("a\x01b.tres", INVALID, "a control character"),
    # Trailing dots and spaces, which Windows drops.
    ("x.tres.", INVALID, "a trailing dot"),
    ("x.tres..", INVALID, "two trailing dots"),
    ("x.tres ", INVALID, "a trailing space"),
    ("x.tres. ", INVALID, "a trailing dot and space"),
    ("sub./x.tres", INVALID, "a folder with a trailing dot"),
    ("sub /x.tres", INVALID, "a folder with a trailing space"),
    ("...", INVALID, "three dots, nothing on Windows"),
    (".../x.tres", INVALID, "three dots as a folder"),
    ("..x.tres", OK, "leading dots are part of a name"),
    (".x.tres", OK, "a hidden name"),
    (" x.tres", OK, "a leading space is kept on Windows"),
    ("x..tres", OK, "two dots inside a name"),
    # 8.3 short names, which may open another file.
    ("GODOT~1/x.tres", INVALID, "the short name of .godot"),
    ("godot~1/x.tres", INVALID, "the short name of .godot, in lower case"),
    ("PROJEC~1.GOD", INVALID, "the short name of project.godot"),
    ("GO3A1B~1/x.tres", INVALID, "a hashed short name"),
    ("MATER~12/x.tres", INVALID, "a short name with a two-digit number"),
    ("x~1.tres", OK, "not a short name: its extension is longer than three"),
    ("a~b.tres", OK, "a tilde without a number"),
    ("backup~1x/x.tres", OK, "a tilde and a number inside a name"),
    ("LONGNAMES~1/x.tres", OK, "longer than a short name's eight"),
    # Invisible characters that HFS+ leaves out when it compares names.
    (".go\u200cdot/x.tres", INVALID, ".godot on HFS+ (a zero-width non-joiner)"),
    ("x\u200d.tres", INVALID, "a zero-width joiner"),
    ("x\u202e.tres", INVALID, "a right-to-left override"),
    ("\ufeffx.tres", INVALID, "a byte order mark"),
    # The engine's own files, in any case; '..' in any case.
    (".GODOT/x.tres", INVALID, ".godot/ in capitals"),
    (".Godot", INVALID, "the engine's folder, capitalised"),
    (".Godot/imported/..", INVALID, "the engine's folder once normalised"),
    ("sub/../.GoDoT/x.tres", INVALID, "inside .godot/ once normalised"),
    ("Project.Godot", INVALID, "the project file, capitalised"),
    ("res://PROJECT.GODOT", INVALID, "the project file in capitals, after res://"),
    ("MATS/../..", OUTSIDE, "'..' past the root through a folder in capitals"),
    ("MATS/../../x.tres", OUTSIDE, "'..' past the root through a folder in capitals"),
    (".godot2/x.tres", OK, "a folder whose name only starts with .godot"),
    ("sub/.GODOT/x.tres", OK, "a folder named .godot below the root is the project's own"),
    ("sub/Project.Godot", OK, "project.godot below the root is the project's own"),
    ("project.godot.tres", OK, "a name that only starts with project.godot"),
    # Device names, with or without an extension, as files and folders, in any case.
    *((f"{device}.tres", INVALID, "a device with an extension") for device in DEVICES),
    *((f"{device.lower()}", INVALID, "a device in lower case") for device in DEVICES),
    *((f"{device.title()}/x.tres", INVALID, "a device as a folder") for device in DEVICES),
    *((f"{device} .a.tres", INVALID, "a device, a space and two extensions") for device in DEVICES),
    ("console.tres", OK, "a name that starts with a device's"),
    ("com10.tres", OK, "no port 10"),
    ("lpt.tres", OK, "no port number"),
    ("nul_x.tres", OK, "more than a device's name before the dot"),
    ("x.aux", OK, "a device's name as an extension"),
]


@pytest.mark.parametrize(("path", "code", "why"), TABLE, ids=[ascii(row[0][:40]) for row in TABLE])
def test_python_answers_each_form(path: str, code: str, why: str) -> None:
    refused: BridgeError | None = None
    try:
        normal = paths.normalise(path, field="resource_path")
    except BridgeError as exc:
        refused = exc
    if refused is None:
        assert (INVALID if paths.is_engine_file(normal) else OK) == code, why
    else:
        assert refused.code == code, why
        assert repr(path) in refused.message  # the message names the value
        assert refused.field == "resource_path"
