"""Confine request paths to the project: pure functions, no I/O beyond realpath, stat and listing a folder.

One rule on every system (README, "Paths on every file system"): a path is refused if any system
Godot runs on would read it as another file or could not hold it (a Windows teammate must be able to
check out what the bridge writes), the engine's own names are compared without regard to case, and
a path is resolved against the names as the file system stores them, whether its folders compare
names by case or not. gdscript/safety/paths.gd applies the same rule to the paths in values.
"""

from __future__ import annotations

import contextlib
import functools
import os
import posixpath
import re
import stat
import string

from gdres.errors import InvalidPath, InvalidRequest, PathOutsideProject, ProjectNotFound
from gdres.scripts import path_rules
from gdres.settings import cache_dir

# Types only: pathlib costs a warm `run` (front/warm.py, which needs project_root()) ~4 ms. Type
# checkers take any TYPE_CHECKING as True.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

RESOURCE_SUFFIXES = (".tres",)
UPDATABLE_SUFFIXES = (".tres", ".res")
READABLE_SUFFIXES = (".tres", ".res", ".tscn", ".scn")
SHADER_SUFFIXES = (".gdshader",)
SCENE_SUFFIXES = (".tscn",)
ANY_SUFFIX = ("",)
"""A member that may name any file, or a folder (resource_move)."""
INSTANCE_SUFFIXES = (".tscn", ".scn", ".glb", ".gltf", ".blend", ".fbx", ".dae", ".obj")

_RULES = path_rules()
"""How a path must be written (gdscript/safety/path_rules.json: the engine side checks values by it too)."""
_PATH_RULES: list[tuple[re.Pattern[str], str]] = [(re.compile(rule["pattern"]), rule["why"]) for rule in _RULES["path"]]
_NAME_RULES: list[tuple[re.Pattern[str], str, bool]] = [
    (re.compile(rule["pattern"]), rule["why"], bool(rule.get("folded"))) for rule in _RULES["name"]
]
_MAYBE_WRONG_NAME = re.compile(_RULES["maybe_wrong_name"])
_PATH_MAX: int = _RULES["longest_path"]
_NAME_MAX: int = _RULES["longest_name"]
_ENGINE_FOLDERS: tuple[str, ...] = tuple(_RULES["engine_folders"])
_ENGINE_FILES: tuple[str, ...] = tuple(_RULES["engine_files"])
_GIT_FOLDER: str = _RULES["git_folder"]
SETTINGS_FILES: tuple[str, ...] = tuple(_RULES["settings_files"])
"""The engine's files that resource_move may rewrite, and a journal put back."""

_TO_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
_TO_UPPER = str.maketrans(string.ascii_lowercase, string.ascii_uppercase)


def project_root(project_path: str, relative_to: str | None = None) -> str:
    """Return the real path of a Godot project directory, or raise ProjectNotFound.

    A relative `project_path` is taken against the folder `relative_to`, by default the current one
    (as a shell would take it, in the Python API as on the command line).
    """
    field = "project_path"
    if "\0" in project_path:
        raise ProjectNotFound("project_path contains a NUL byte", field=field)
    if not project_path.isascii():
        try:
            project_path.encode("utf-8")
        except UnicodeEncodeError:
            # No file system call takes it (Python raises, not an OSError): said here, for every caller.
            raise ProjectNotFound("project_path holds text that is not valid Unicode (an unpaired surrogate)",
                                  field=field) from None
    if project_path and not os.path.isabs(project_path):
        project_path = os.path.join(relative_to if relative_to is not None else os.getcwd(), project_path)
    if not os.path.isabs(project_path):
        raise ProjectNotFound(
            f"project_path must be absolute, got {project_path!r}", field=field
        )
    if len(project_path) > _PATH_MAX:
        raise ProjectNotFound("project_path is longer than the system allows", field=field)
    root = stored_path(os.path.realpath(project_path))
    if not os.path.isdir(root):
        raise ProjectNotFound(f"project_path {project_path!r} is not a directory", field=field)
    if not os.path.isfile(os.path.join(root, "project.godot")):
        raise ProjectNotFound(
            f"{project_path!r} is not a Godot project: it has no project.godot", field=field
        )
    return root


def resolve(root: str | Path, value: str, *, field: str, suffixes: tuple[str, ...],
            folders: Folders | None = None) -> tuple[str, str]:
    """Return `value` as a normalised `res://` path inside `root`, each name spelled as the file system
    stores it (what the engine writes into files that refer to it), and the real path it names (the
    file's identity: two paths through links, or spelled in two cases on a file system that ignores
    case, to one file have one real path); or raise why not. `folders` keeps the folders met (see
    Folders)."""
    relative = normalise(value, field=field)
    if not relative.lower().endswith(suffixes):
        raise InvalidPath(
            f"{field} {value!r} must end in {' or '.join(suffixes)}", field=field
        )
    try:
        real, spelled = _real_below(str(root), relative, folders)
    except _LinkLoop:
        raise PathOutsideProject(f"{field} {value!r} leads into a loop of links", field=field) from None
    except OSError as exc:
        raise InvalidPath(f"{field} {value!r} changed while it was being checked ({exc.strerror})",
                          field=field) from None
    prefix = str(root).rstrip("/") + "/"
    if not real.startswith(prefix):
        raise PathOutsideProject(
            f"{field} {value!r} resolves outside the project (to {real})", field=field
        )
    if is_engine_file(relative) or is_engine_file(real[len(prefix) :]):
        raise InvalidPath(
            f"{field} {value!r} points at files that are not the project's to change "
            "(project.godot, .godot/, Godot 3's .import/, .git/)",
            field=field,
        )
    return "res://" + spelled, real


def is_engine_file(relative: str) -> bool:
    """Whether a normalised path relative to the project is the engine's own or git's: project.godot,
    .godot/ or Godot 3's .import/ or anything in them, or anything in a .git folder at any depth (a
    submodule has one), in any case (on a file system that ignores case, `.GIT` is `.git`)."""
    whole = folded(relative)  # once: folding maps letters to letters, so each name folds as in the whole
    names = whole.split("/")
    return names[0] in _ENGINE_FOLDERS or _GIT_FOLDER in names or whole in _ENGINE_FILES


def loosely_folded(name: str) -> str:
    """`name` in the Unicode form macOS keeps (NFC) and in lower case by Unicode's folding: two names
    any file system might take for one file fold alike (two it keeps apart may too: for matching
    where a false match costs nothing, never for a check)."""
    import unicodedata  # here: a warm run's client imports this module, and needs this nowhere

    return unicodedata.normalize("NFC", name).casefold()


def folded(name: str) -> str:
    """`name` with the letters A to Z in lower case: the case folding every file system that ignores
    case agrees on (the engine's names and Windows' device names are made of these letters alone)."""
    return name.translate(_TO_LOWER)


class Folders(dict[tuple[str, str], str]):
    """The folders a batch's paths went through, kept for the batch: (real root, folder below it as
    a request wrote it) -> the folder as the file system stores it. Only a folder that was a folder
    with no link on the way is kept, and only the file's own name is looked at again: the checks
    of a path that hold are the engine's, where it writes (gdscript/files/saving.gd checks the real
    path again, and again before its rename), so a folder swapped for a link during a batch is
    refused there. What the front end does with a real path itself (a lock's name, a file put back
    after its engine was killed) sees the folders as the batch first found them: a process changing
    the project's folders during a batch is outside the threat model (docs/security.md, "A file that
    changes while it is read"). Looking each folder up again cost two file checks a name:
    `prepare()` of the bench's mixed batch (scripts/bench.py, folders two deep) took 42-45 us a
    request, 35 with them kept."""

    MOST = 4096
    """Folders kept at most: all are dropped when this many are kept."""

    def keep(self, key: tuple[str, str], spelled: str) -> None:
        if len(self) >= self.MOST:
            self.clear()
        self[key] = spelled


def _real_below(root: str, relative: str, folders: Folders | None = None) -> tuple[str, str]:
    """Return the real path of root / relative for a real `root` and a normalised `relative` (links
    followed as os.path.realpath follows them, each name as the file system stores it), and
    `relative` with each name as the file system stores it, links kept.

    Only the components below the root are looked at, as the root is real already; with `folders`,
    only those below the folders it kept.
    """
    current = root
    parts = relative.split("/")
    start = 0
    folder = relative.rpartition("/")[0]
    if folders is not None and folder:
        kept = folders.get((root, folder))
        if kept is not None:
            current, start = root + "/" + kept, len(parts) - 1
    for at in range(start, len(parts)):
        part = parts[at]
        candidate = current + "/" + part
        try:
            mode = os.lstat(candidate).st_mode
        except OSError:
            # Missing (or not a folder): realpath takes the rest of the path as written.
            return os.path.join(candidate, *parts[at + 1 :]), "/".join([*_names(root, current), *parts[at:]])
        if stat.S_ISLNK(mode):
            # realpath() lets an OSError through when a link vanishes between its lstat and its
            # readlink; the caller reports that as a path that changed while it was checked.
            real = os.path.realpath(os.path.join(current, *parts[at:]))
            if os.path.islink(real):
                # realpath stops where links loop; such a path leads nowhere inside (as the engine says).
                raise _LinkLoop(real)
            spelled = _names(root, current)
            for rest in parts[at:]:
                spelled.append(stored_name(os.path.join(root, *spelled), rest))
            return stored_path(real), "/".join(spelled)
        current = current + "/" + stored_name(current, part)
        if folders is not None and at == len(parts) - 2 and stat.S_ISDIR(mode):
            folders.keep((root, folder), current[len(root) + 1 :])
    return current, current[len(root) + 1 :]


def _names(root: str, below: str) -> list[str]:
    """The names of the path `below` under `root`."""
    return below[len(root) + 1 :].split("/") if below != root else []


class _LinkLoop(Exception):
    """A path whose links lead back into each other."""


def stored_path(real: str) -> str:
    """An absolute path without links (a realpath), each of its names as the file system stores it."""
    current = ""
    parts = real.strip("/").split("/") if real != "/" else []
    for at, part in enumerate(parts):
        folder = current or "/"
        if not os.path.lexists(os.path.join(folder, part)):
            return os.path.join(folder, *parts[at:])
        current = current + "/" + stored_name(folder, part)
    return current or "/"


def stored_name(folder: str, name: str) -> str:
    """The name under which `folder` stores the entry that `name` opens: `name` itself, unless the
    folder ignores case and holds it spelled otherwise (there `Mats` opens `mats`).

    One stat of the name in the other case tells a folder that tells case apart (the common case:
    nothing more is done) from one that may not; only then is the folder listed. The listing must
    lack `name`, `name` must open something, and exactly one entry must fold to it; otherwise
    `name` is kept as written (gdscript/safety/paths.gd `_stored()` decides alike).
    """
    other = name.translate(_TO_UPPER)
    if other == name:
        other = folded(name)
        if other == name:
            return name
    try:
        os.stat(folder.rstrip("/") + "/" + other)
    except OSError:
        return name
    try:
        entries = os.listdir(folder)
    except OSError:
        return name
    if name in entries or not os.path.exists(os.path.join(folder, name)):
        return name
    key = folded(name)
    matches = [entry for entry in entries if folded(entry) == key]
    return matches[0] if len(matches) == 1 else name


def normalise(value: str, *, field: str) -> str:
    """Return `value` (relative to the project, or starting with res://) normalised, or raise
    InvalidPath for a path that some system Godot runs on would read as another file or could not
    hold, PathOutsideProject for one that leads out by '..'. Pure: the file system is not looked at."""
    text = value[len("res://"):] if value.startswith("res://") else value
    for pattern, why in _PATH_RULES:
        bad = pattern.search(text)
        if bad is not None:
            code_point = f"U+{ord(bad.group()[0]):04X}" if bad.group() else ""
            raise InvalidPath(f"{field} {value[:80]!r} {why.format(found=repr(bad.group()), code_point=code_point)}",
                              field=field)
    parts = text.split("/")
    if len(text) > _PATH_MAX or any(len(part.encode()) > _NAME_MAX for part in parts):
        raise InvalidPath(f"{field} {value[:60]!r}... is longer than the system allows", field=field)
    if _MAYBE_WRONG_NAME.search(text):
        for part in parts:
            wrong = _name_wrong(part)
            if wrong:
                raise InvalidPath(f"{field} {value!r}: the name {part!r} {wrong}", field=field)
    normal = posixpath.normpath(text)
    if normal == ".." or normal.startswith("../"):
        raise PathOutsideProject(f"{field} {value!r} leads outside the project", field=field)
    if normal == ".":
        raise InvalidPath(f"{field} {value!r} names the project folder, not a file", field=field)
    return normal


def _name_wrong(part: str) -> str:
    """Why Windows would not hold the name `part` as written, or "" (also for "", "." and "..")."""
    if part in ("", ".", ".."):
        return ""
    for pattern, why, fold in _NAME_RULES:
        if pattern.search(folded(part) if fold else part):
            return why
    return ""


def cache_outside(root: str) -> None:
    """Raise InvalidRequest where the project folder `root` holds the bridge's cache folder: the
    settings packs and scripts its engines start with and the journals that undo atomic batches would
    then be files the project's author could have written (red-team reads planted scripts, a pack and
    a journal there, which the bridge used)."""
    folder_outside(cache_dir(real=False), root, "the bridge's cache folder", "XDG_CACHE_HOME")


def folder_outside(folder: str, root: str, what: str, setting: str) -> None:
    """Raise InvalidRequest where the project folder `root` holds `folder`, by any way there: each
    folder and link a lookup of its path passes (a link the project ships, at the end or part-way,
    leads out of it), compared by device and inode (another spelling, as another case where the file
    system ignores it, is the same folder), and on Linux what mounts show of either elsewhere."""
    if _holds(folder, os.path.realpath(folder), os.path.realpath(root)):
        _held(folder, root, what, setting)


@functools.lru_cache(maxsize=64)
def _holds(folder: str, real_folder: str, root: str) -> bool:
    """folder_outside()'s judgement, kept per process: each request of a Bridge asks it (~0.3 ms), and
    what the project can change cannot turn it (a link of the project on the way is held already;
    mounts and the links outside it are not the project's)."""
    del real_folder  # a part of the key: a link outside the project changed since is judged anew
    try:
        project = os.stat(root)
    except OSError:
        return False  # no such folder: the request says so itself
    mounts = _mounts()
    for step in _looked_up(folder):
        real = os.path.realpath(step)
        probe = real
        while True:
            with contextlib.suppress(OSError):
                if os.path.samestat(os.stat(probe), project):
                    return True
            parent = os.path.dirname(probe)
            if parent == probe:
                break
            probe = parent
        if _mounted_inside(real, root, mounts):
            return True
    return False


def _looked_up(path: str) -> list[str]:
    """Each folder and link a lookup of the absolute `path` passes, links followed a name at a time as
    the system does (at most 40), ending with `path`'s own place."""
    passed: list[str] = []
    names = [name for name in path.split(os.sep) if name]
    at = os.path.abspath(os.sep)
    links = 0
    while names:
        name = names.pop(0)
        if name == ".":
            continue
        if name == "..":
            at = os.path.dirname(at)
            continue
        step = os.path.join(at, name)
        passed.append(step)
        if links < 40 and os.path.islink(step):
            links += 1
            target = os.readlink(step)
            names = [name for name in target.split(os.sep) if name] + names
            if os.path.isabs(target):
                at = os.path.abspath(os.sep)
            continue
        at = step
    return passed or [path]


def _held(folder: str, root: str, what: str, setting: str) -> None:
    raise InvalidRequest(f"{what} {folder} is inside the project {root}, which could then choose what its "
                         f"engines run: set {setting} to a folder outside it", field="project_path")


def _mounts() -> list[tuple[str, str, str]]:
    """Linux's mounts of this process (see _parsed()); none where /proc/self/mountinfo cannot be
    read (another system)."""
    try:
        with open("/proc/self/mountinfo", "rb") as table:
            return _parsed(table.read())
    except OSError:
        return []


def _parsed(table: bytes) -> list[tuple[str, str, str]]:
    """The mounts a mountinfo `table` lists: (device, the folder of its file system shown, mount
    point) each, paths as os.fsdecode() gives them (as realpath() does). Lines end at a newline only:
    the kernel escapes that in a name, not a carriage return."""
    mounts = []
    for line in table.split(b"\n"):
        fields = line.split(b" ")
        if len(fields) > 4:
            mounts.append((fields[2].decode("ascii", "replace"), _unescaped(fields[3]), _unescaped(fields[4])))
    return mounts


def _mounted_inside(folder: str, root: str, mounts: list[tuple[str, str, str]]) -> bool:
    """Whether `mounts` let the project `root` write into `folder` (both real paths), judged
    conservatively by every mount that shows either, also one hidden by a later mount: a part of
    root's file system shown at or below the folder (a bind mount of the project's .cache at
    ~/.cache), or a part of the folder's shown inside root (code the project may run, allowed,
    writes where the project is)."""

    def through(path: str) -> list[tuple[str, str]]:
        """(device, place on its file system) of `path` through each mount that covers it."""
        return [(device, (part.rstrip("/") + path[len(point.rstrip("/")):]) or "/")
                for device, part, point in mounts if _under(path, point)]

    def below(path: str) -> list[tuple[str, str]]:
        """(device, part of its file system) each mount at or below `path` shows."""
        return [(device, part) for device, part, point in mounts if _under(point, path)]

    writable = through(root) + below(root)
    kept = through(folder) + below(folder)
    if any(device == other and _under(part, place) for device, part in kept for other, place in writable):
        return True
    return any(device == other and _under(place, part) for device, part in kept for other, place in below(root))


def _under(path: str, folder: str) -> bool:
    """Whether `path` is `folder` or below it (both absolute, without . or ..)."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _unescaped(field: bytes) -> str:
    """A path of /proc/self/mountinfo, its octal escapes (space, tab, newline, backslash) read."""
    return os.fsdecode(re.sub(rb"\\([0-7]{3})", lambda found: bytes([int(found.group(1), 8)]), field))
