"""A case-insensitive file system for tests: a FUSE passthrough that matches names regardless of case.

The folder it mounts shows a backing folder; each name in a path opens the entry spelled that way
if there is one, else the one entry that equals it case-folded (`Mats/M.tres` opens `mats/m.tres`),
as on macOS and Windows by default. Names keep the case they were made with. A rename onto a name
held in another case replaces that entry and leaves the new spelling, so a writer that renames onto
a name spelled otherwise changes the name's case on disk, which a test can see. Inode numbers are
the backing ones, so two spellings of one file are one file to stat().

Run `python tests/casefold_fs.py BACKING MOUNTPOINT` as root (mounting needs it; libfuse 3 comes
from the `libfuse3-3` package, the bindings from `mfusepy`); it stays in the foreground until the
mount goes. `mounted()` mounts one for a test and always unmounts it.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

_STAT_KEYS = ("st_mode", "st_ino", "st_nlink", "st_uid", "st_gid", "st_size", "st_atime_ns", "st_mtime_ns",
              "st_ctime_ns")


class CaseFolding:
    """The file system's operations (mfusepy's Operations protocol), on real paths below `backing`."""

    use_ns = True

    def __init__(self, backing: str) -> None:
        self.backing = os.path.realpath(backing)

    def _real(self, path: str) -> str:
        """The backing path of `path`, each existing name matched regardless of case."""
        real = self.backing
        for name in path.strip("/").split("/"):
            if name:
                real = os.path.join(real, self._entry(real, name))
        return real

    def _entry(self, folder: str, name: str) -> str:
        """The name in `folder` that `name` opens: `name` when it is there, else the first that equals
        it case-folded, else `name` (a name yet to be made)."""
        try:
            entries = sorted(os.listdir(folder))
        except OSError:
            return name
        if name in entries:
            return name
        key = name.casefold()
        return next((entry for entry in entries if entry.casefold() == key), name)

    def getattr(self, path: str, fh: int | None = None) -> dict[str, Any]:
        st = os.lstat(self._real(path))
        attrs: dict[str, Any] = {key.replace("_ns", ""): getattr(st, key) for key in _STAT_KEYS}
        return attrs

    def readdir(self, path: str, fh: int) -> list[tuple[str, dict[str, int], int]]:
        # With each entry's inode number: an entry listed with none (0) is left out by readdir(3).
        folder = self._real(path)
        listed = []
        for name in [".", "..", *os.listdir(folder)]:
            st = os.lstat(os.path.join(folder, name))
            listed.append((name, {"st_mode": st.st_mode, "st_ino": st.st_ino}, 0))
        return listed

    def readlink(self, path: str) -> str:
        return os.readlink(self._real(path))

    def access(self, path: str, amode: int) -> int:
        if not os.access(self._real(path), amode, follow_symlinks=False):
            raise OSError(errno.EACCES, os.strerror(errno.EACCES))
        return 0

    def mkdir(self, path: str, mode: int) -> int:
        os.mkdir(self._real(path), mode)
        return 0

    def rmdir(self, path: str) -> int:
        os.rmdir(self._real(path))
        return 0

    def unlink(self, path: str) -> int:
        os.unlink(self._real(path))
        return 0

    def symlink(self, target: str, source: str) -> int:
        os.symlink(source, self._real(target))
        return 0

    def rename(self, old: str, new: str) -> int:
        source = self._real(old)
        folder = self._real(os.path.dirname(new))
        name = os.path.basename(new)
        held = self._entry(folder, name)
        target = os.path.join(folder, name)
        if held != name and os.path.join(folder, held) != source:
            # The entry held in another case goes; the new spelling stays.
            replaced = os.path.join(folder, held)
            if os.path.isdir(replaced) and not os.path.islink(replaced):
                os.rmdir(replaced)
            else:
                os.unlink(replaced)
        os.rename(source, target)
        return 0

    def chmod(self, path: str, mode: int) -> int:
        os.chmod(self._real(path), mode)
        return 0

    def chown(self, path: str, uid: int, gid: int) -> int:
        os.chown(self._real(path), uid, gid, follow_symlinks=False)
        return 0

    def utimens(self, path: str, times: tuple[int, int] | None = None) -> int:
        if times is None:
            os.utime(self._real(path), follow_symlinks=False)
        else:
            os.utime(self._real(path), ns=times, follow_symlinks=False)
        return 0

    def truncate(self, path: str, length: int, fh: int | None = None) -> int:
        if fh is None:
            os.truncate(self._real(path), length)
        else:
            os.ftruncate(fh, length)
        return 0

    def create(self, path: str, mode: int, flags: int) -> int:
        return os.open(self._real(path), flags | os.O_CREAT, mode)

    def open(self, path: str, flags: int) -> int:
        return os.open(self._real(path), flags)

    def read(self, path: str, size: int, offset: int, fh: int) -> bytes:
        return os.pread(fh, size, offset)

    def write(self, path: str, data: bytes, offset: int, fh: int) -> int:
        return os.pwrite(fh, data, offset)

    def flush(self, path: str, fh: int) -> int:
        return 0

    def fsync(self, path: str, datasync: int, fh: int) -> int:
        os.fsync(fh)
        return 0

    def release(self, path: str, fh: int) -> int:
        os.close(fh)
        return 0

    def statfs(self, path: str) -> dict[str, int]:
        st = os.statvfs(self._real(path))
        return {key: getattr(st, key) for key in ("f_bsize", "f_frsize", "f_blocks", "f_bfree", "f_bavail",
                                                  "f_files", "f_ffree", "f_favail", "f_flag", "f_namemax")}


def serve(backing: str, mountpoint: str) -> None:
    """Mount the file system and serve it until it is unmounted."""
    import mfusepy

    # No caching of names or attributes: the kernel asks each time, so one file seen through two
    # spellings is never stale through either.
    mfusepy.FUSE(CaseFolding(backing), mountpoint, foreground=True, use_ino=True, hard_remove=True, entry_timeout=0,
                 attr_timeout=0, negative_timeout=0, fsname="casefold")


@contextmanager
def mounted(backing: Path, mountpoint: Path, timeout: float = 20) -> Iterator[Path]:
    """Mount a case-folding view of `backing` on `mountpoint` for the time of the block; raise
    OSError when it cannot be mounted (not root, no /dev/fuse, no libfuse or mfusepy)."""
    mountpoint.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile() as log:
        # A file, not a pipe, for its output: a full pipe would stall the file system.
        server = subprocess.Popen([sys.executable, __file__, str(backing), str(mountpoint)],
                                  stdout=log, stderr=log)
        try:
            deadline = time.monotonic() + timeout
            while not os.path.ismount(mountpoint):
                if server.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    said = log.read().decode(errors="replace").strip()[-500:]
                    raise OSError(errno.ENODEV, f"cannot mount a case-folding file system: {said}")
                time.sleep(0.05)
            yield mountpoint
        finally:
            if os.path.ismount(mountpoint):
                subprocess.run(["umount", "-l", str(mountpoint)], capture_output=True)
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


if __name__ == "__main__":
    serve(sys.argv[1], sys.argv[2])
