"""Read and write files below a folder without following a link on the way, however the folders
change meanwhile.

An import's engines write into a folder the bridge reads back (its shadow, or the project's copy that
an allow_scripts import runs on), and a project's code may run there or linger after it (a process
the code started in a session of its own). Such code can swap any folder of the way for a link at
any moment, after any check of it. So each folder is opened from the one above it by name with
O_NOFOLLOW (openat), and the file last, likewise: a link met anywhere fails the open (ELOOP), and
what is read or written is in the folder that was opened, whatever its name leads to by then.

Where the system has no such opens (Windows: no O_NOFOLLOW, no dir_fd), each name is checked not
to be a link before it is used; no project code runs behind a wall there to race the checks.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

_AT = os.open in os.supports_dir_fd and hasattr(os, "O_NOFOLLOW") and hasattr(os, "O_DIRECTORY")
_FOLDER = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
# O_NONBLOCK: a FIFO (or a file under a lease its owner holds) would hold the open until someone else
# acts; it opens at once instead, and is then found to be no regular file (or the open fails).
_FILE = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
MOST = 1 << 31
"""The most bytes a file read back may hold (an artefact is far smaller): a sparse file of a terabyte
costs its writer nothing, and the bridge would hold it in memory."""


def regular_files(base: Path, folder: Sequence[str],
                  wanted: Callable[[str], bool] = lambda name: True) -> Iterator[tuple[str, bytes]]:
    """Each regular file of `base/folder...` whose name is `wanted`, as (name, bytes), sorted by name
    (no other file is opened); none when the folder is missing or a link is on the way. A link or
    anything but a regular file in it is skipped."""
    if not _AT:
        yield from _regular_files_by_path(base, folder, wanted)
        return
    try:
        fd = _open_folder(base, folder, create=False)
    except OSError:
        return
    try:
        for name in sorted(filter(wanted, os.listdir(fd))):
            data = _read_at(fd, name)
            if data is not None:
                yield name, data
    finally:
        os.close(fd)


def write(root: Path, relative: Sequence[str], data: bytes) -> None:
    """Make the file `root/relative...` hold `data`: folders made where missing, a temp file of a
    random name created where nothing is (O_EXCL) and renamed over the target (a link there is
    replaced, never written through); nothing written when it holds `data` already. A link on the
    way raises OSError."""
    *folder, name = relative
    _names(relative)
    if not _AT:
        _write_by_path(root, folder, name, data)
        return
    fd = _open_folder(root, folder, create=True)
    temp = f".{name}.{secrets.token_hex(8)}.bridge.tmp"
    try:
        if _read_at(fd, name) == data:
            return
        handle = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666, dir_fd=fd)
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temp, name, src_dir_fd=fd, dst_dir_fd=fd)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=fd)
        os.close(fd)


def _names(parts: Sequence[str]) -> None:
    """Refuse a part that is no plain name: `..`, `.`, empty, or holding a separator."""
    for part in parts:
        if part in ("", ".", "..") or "/" in part or os.sep in part:
            raise OSError(f"{part!r} is no file name")


def _open_folder(base: Path, folder: Sequence[str], *, create: bool) -> int:
    _names(folder)
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for depth, part in enumerate(folder):
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, dir_fd=fd)
            try:
                below = os.open(part, _FOLDER, dir_fd=fd)
            except OSError as exc:  # ELOOP or ENOTDIR for a link, by system
                where = base.joinpath(*folder[:depth + 1])
                raise OSError(exc.errno, f"{where} is no folder, or a link (not followed)") from None
            os.close(fd)
            fd = below
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_at(fd: int, name: str) -> bytes | None:
    """The bytes of the regular file `name` in the folder `fd`, or None (a link, no file, no access)."""
    try:
        handle = os.open(name, _FILE, dir_fd=fd)
    except OSError:
        return None
    status = os.fstat(handle)
    if not stat.S_ISREG(status.st_mode) or status.st_size > MOST:
        os.close(handle)  # a folder, a device, a FIFO, a file too big: opened, but not read
        return None
    with os.fdopen(handle, "rb") as file:
        return file.read(status.st_size)  # what it held when looked at, however it grows meanwhile


def _linked(base: Path, folder: Sequence[str]) -> bool:
    """Whether a folder on the way from `base` down `folder` is a link."""
    path = base
    for part in folder:
        path = path / part
        if path.is_symlink():
            return True
    return False


def _regular_files_by_path(base: Path, folder: Sequence[str],
                           wanted: Callable[[str], bool]) -> Iterator[tuple[str, bytes]]:
    _names(folder)
    path = base.joinpath(*folder)
    if _linked(base, folder) or not path.is_dir():
        return
    for entry in sorted(path.iterdir()):
        if wanted(entry.name) and entry.is_file() and not entry.is_symlink() and entry.stat().st_size <= MOST:
            yield entry.name, entry.read_bytes()


def _write_by_path(root: Path, folder: Sequence[str], name: str, data: bytes) -> None:
    if _linked(root, folder):
        raise OSError(f"{root.joinpath(*folder)} leads through a link")
    path = root.joinpath(*folder)
    target = path / name
    with contextlib.suppress(OSError):
        if not target.is_symlink() and target.read_bytes() == data:
            return
    path.mkdir(parents=True, exist_ok=True)
    temp = path / f".{name}.{secrets.token_hex(8)}.bridge.tmp"
    try:
        with open(temp, "xb") as file:
            file.write(data)
        os.replace(temp, target)
    finally:
        temp.unlink(missing_ok=True)
