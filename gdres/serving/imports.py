"""Import what a request needs of a project the way the editor does, running none of its code.

A project checked out from git has its `.import` files but no `.godot/imported/`, so the engine
cannot load its textures, fonts or sounds until the editor has imported them. `godot --import`
starts the editor, and the editor loads what the project names as it does so: its settings (a
custom theme, a bus layout: resources, which can carry scripts), its `.godot/` folder, editor
plugins and GDExtensions, the values of each `.import` file (a `Resource("…")` is loaded as the
file is read) and the scripts an importer runs. So the import runs on a shadow that is built, not
copied:

1. The assets to import are those a request met unimported (the engine names them all in its
   not_imported reply), or every asset of the project (`gdres import`).
2. gdscript/tools/shadow.gd, run like a worker behind the wall (it reads the project, writes only
   the shadow), puts in a scratch folder the source bytes of each asset and of what it names (a
   glTF's images, a roughness texture's normal map), each `.import` written anew from the options
   its importer declares, each of the type declared (this engine's own editor says which:
   importer_options()), and a `project.godot` holding only the settings that change imports. A
   value that names a script, a file outside the project or an object refuses its asset, saying why.
   Nothing of the project's `.godot/` goes in.
3. The editor imports the shadow (`--headless --import`, in recovery mode where the engine has it)
   behind the wall too: it reads only the shadow, its own files and a private home folder, writes
   only those two, and (Landlock ABI 4, Linux 6.7) opens no TCP connection.
4. What the import made for those assets comes back into the project: their artefacts in
   `.godot/imported/` (files named for the asset, as the editor names them), a translation's files
   beside its table, and a `.import` only for an asset that had none. Each is a regular file written
   beside its target and renamed over it (a link there is replaced, never written through), every
   folder of the way opened without following a link, for reading and writing alike (nofollow.py);
   a `.godot` or `.godot/imported` that is a link is refused before anything is built.

Two bridge processes that meet one unimported project take turns through a lock; the second finds
the import done (the stamp of `.godot/imported/` has moved) and does not import again.
"""

from __future__ import annotations

import collections
import contextlib
import fnmatch
import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TypeVar

from gdres.engine import godot as engines
from gdres.engine import wall
from gdres.errors import BridgeError, EngineUnsupported
from gdres.scripts import gdscript_dir
from gdres.serving import locks, nofollow
from gdres.settings import cache_dir

log = logging.getLogger("gdres")

EVERY_ASSET: tuple[str, ...] = ("*",)
"""The assets to import when all of the project's are (`gdres import`): shadow.gd reads a
lone `*` so."""

IMPORT_TIMEOUT = 900.0
"""Seconds an import may take (a large project's first import takes minutes), whatever --timeout is."""

_RECOVERY_MODE = (4, 5, 0)
"""The first Godot with --recovery-mode (editor plugins, tool scripts and GDExtensions off)."""

_STAND_INS: Mapping[str, str] = {
    "texture": "png", "image": "png", "bitmap": "png", "texture_atlas": "png", "2d_array_texture": "png",
    "cubemap_texture": "png", "cubemap_array_texture": "png", "3d_texture": "png", "font_data_image": "png",
    "svg": "svg", "font_data_dynamic": "ttf", "font_data_bmfont": "fnt", "csv_translation": "csv", "wav": "wav",
    "oggvorbisstr": "ogg", "mp3": "mp3", "scene": "glb", "animation_library": "glb", "wavefront_obj": "obj",
    "glsl": "glsl",
}
"""The editor's importers (Godot 4.4-4.6: editor/editor_node.cpp registers them), each with an
extension it takes: importer_options() asks the engine's editor what each declares. An importer an
engine lacks is left out of what it says (shadow.gd refuses its assets)."""

_STEP = re.compile(r"^\[\s*\d+% \] reimport \| (.*)$")
"""A step of the editor's import on its stdout (colours taken out): `[ 41% ] reimport | c13.png`.
Godot 4 prints its progress tasks on stdout headless too, a terminal or not (EditorNode's
ProgressDialog, headless branch): first `Started (Re)Importing Assets (N steps)`, then one line
per asset, between lines of its own phases, which end in an ellipsis."""
_TOTAL = re.compile(r"^Started \(Re\)Importing Assets \((\d+) steps\)$")
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")
_PROGRESS = re.compile(r"^\[\s*(\d+%|DONE)\s*\]")
"""Any progress line of the editor's (other tasks, `[ DONE ]`): kept out of a failure's message."""
_ARTEFACT = re.compile(r"^(.+-[0-9a-f]{32})\.")
"""The name of an artefact in .godot/imported/: its asset's file name, the md5 of its res:// path,
then its kind (`red.png-<md5>.s3tc.ctex`, `red.png-<md5>.md5`: EditorFileSystem::_reimport_file)."""
_PASSED_ON = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "SYSTEMROOT", "WINDIR", "TEMP", "TMP", "TMPDIR")
"""What an import's engines get of the user's environment (a launcher script needs PATH)."""

Announce = Callable[[Sequence[str]], None]
"""Told the assets (res:// paths) about to be imported, the shadow built."""
Progress = Callable[[int, int], None]
"""Told (assets imported so far, assets to import) as the editor imports each one."""
Rewrites = Callable[[Path, bytes, bytes], None]
"""Told (a project file, its bytes now, the bytes it is about to hold) before the import rewrites it."""


@dataclass
class Outcome:
    """What an import did: the assets imported, and those refused with why."""

    imported: list[str] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)
    failure: str | None = None
    """Why nothing was imported (the lock, the engine, the project), or None."""

    def why_not(self) -> str | None:
        """One sentence for a request whose assets were not all imported, or None."""
        if self.failure is not None:
            return self.failure
        if not self.refused:
            return None
        shown = "; ".join(f"{path} is not imported: {why}" for path, why in list(self.refused.items())[:3])
        more = len(self.refused) - 3
        return shown + (f"; and {more} more" if more > 0 else "")


def stamp(root: Path) -> int | None:
    """Return when the project's import folder last changed (None when there is none): an import
    done by anyone since a request failed shows as a newer stamp."""
    try:
        return (root / ".godot" / "imported").stat().st_mtime_ns
    except OSError:
        return None


def import_project(engine: engines.Engine, root: Path, pack: Path, timeout: float, seen: int | None,
                   announce: Announce, progress: Progress, assets: Sequence[str] = EVERY_ASSET,
                   rewrites: Rewrites | None = None) -> Outcome:
    """Import `assets` of `root` (a real path; res:// paths, or EVERY_ASSET) unless someone imported
    since `seen` (a stamp() taken when the need was found). `announce` is called once the shadow
    is built, `progress` as each asset is imported; `rewrites` is told before a .import of the
    project is rewritten (an atomic batch's journal notes it)."""

    def build_and_import(deadline: float) -> Outcome:
        if stamp(root) != seen:
            return Outcome()
        try:
            options = importer_options(engine)
        except BridgeError as exc:
            return Outcome(failure=exc.message)
        with tempfile.TemporaryDirectory(prefix="gdres-import-") as scratch:
            shadow, home = Path(scratch) / "project", Path(scratch) / "home"
            shadow.mkdir()
            home.mkdir()
            built = _build_shadow(engine, root, pack, options, shadow, Path(scratch) / "needed.txt", assets, deadline)
            if built.failure is not None or not built.imported:
                return built
            announce(built.imported)
            failure = _run_import(engine, shadow, deadline, progress, home=home)
            if failure is not None:
                return Outcome(refused=built.refused, failure=failure)
            _bring_back(shadow, root, built.imported, rewrites)
        return built

    done = _under_lock(root, timeout, build_and_import)
    return Outcome(failure=done) if isinstance(done, str) else done


CLASS_CACHE = Path(".godot", "global_script_class_cache.cfg")
"""The editor's table of the project's named script classes (`class_name`): without it a script that
names another's class does not compile, and a resource carrying it loads without its script."""
_TRUSTED_MADE = ("global_script_class_cache.cfg", "extension_list.cfg", "uid_cache.bin")
"""What the editor makes in .godot/ when it opens a project, besides its import artefacts, that an
engine serving allow_scripts requests reads at start."""


_CLASS_NAME = re.compile(rb"^[ \t]*(?:@\w+(?:\([^)\n]*\))?[ \t]+)*class_name[ \t]+\w", re.MULTILINE)
"""A GDScript's declaration of a named class (`class_name Stats`, `@icon("s.svg") class_name Stats`)."""


def needs_editor_tables(root: Path) -> bool:
    """Whether scripts of `root` load as in the editor only with what the editor makes when it opens a
    project: a script that declares a named class (the class cache), or a GDExtension (the extension
    list). The folders the editor skips are skipped: hidden ones, and those holding `.gdignore`."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = [name for name in dirs if not name.startswith(".")]
        if ".gdignore" in files:
            dirs[:] = []
            continue
        for name in files:
            if name.endswith(".gdextension"):
                return True
            if name.endswith(".gd"):
                with contextlib.suppress(OSError):
                    if _CLASS_NAME.search(Path(folder, name).read_bytes()):
                        return True
    return False


def trusted_import(engine: engines.Engine, root: Path, timeout: float, progress: Progress) -> str | None:
    """Import `root` as the editor does when it opens it, scripts and plugins allowed: for a request
    that allows scripts on a project no editor has opened (a fresh clone has no CLASS_CACHE). It runs
    on a copy of the project behind the wall (writing only the copy and a private home), so that the
    project's own files stay as they are (the editor rewrites `.import` files and adds `.uid` files);
    what it made in `.godot/` comes back: the artefacts, and the class cache, extension list and uid
    cache where the project has none. Return why it failed, or None."""

    def copy_and_import(deadline: float) -> str | None:
        if (root / CLASS_CACHE).exists():
            return None
        with tempfile.TemporaryDirectory(prefix="gdres-trusted-") as scratch:
            copy, home = Path(scratch) / "project", Path(scratch) / "home"
            home.mkdir()
            # The editor skips hidden folders (.git, .godot among them): the copy does too.
            shutil.copytree(root, copy, symlinks=True, ignore=lambda folder, names: [
                name for name in names if name.startswith(".") and os.path.isdir(os.path.join(folder, name))])
            failure = _run_import(engine, copy, deadline, progress, home=home, recovery=False)
            if failure is not None:
                return failure
            # The project's code ran in the copy and may still run (a process it started in a
            # session of its own): what comes back is read without following a link (nofollow.py).
            missing = {name for name in _TRUSTED_MADE if not (root / ".godot" / name).exists()}
            for name, data in nofollow.regular_files(copy, (".godot",), missing.__contains__):
                nofollow.write(root, (".godot", name), data)
            for name, data in nofollow.regular_files(copy, (".godot", "imported")):
                nofollow.write(root, (".godot", "imported", name), data)
        return None

    return _under_lock(root, timeout, copy_and_import)


_Done = TypeVar("_Done")


def _under_lock(root: Path, timeout: float, work: Callable[[float], _Done]) -> _Done | str:
    """Run `work(deadline)` holding `root`'s import lock, its .godot/ found to be no link; return what
    it returns, or why it could not run or failed (a lock not had, a file system error)."""
    deadline = time.monotonic() + timeout
    try:
        held = locks.hold_import(root, deadline)
    except BridgeError as exc:
        return exc.message
    except OSError as exc:
        return f"the import of {root} could not take its lock: {exc.strerror or exc}"
    try:
        linked = _linked_import_folder(root)
        return linked if linked is not None else work(deadline)
    except OSError as exc:
        return f"the import of {root} failed: {exc.strerror or exc}"
    finally:
        held.release()


def _linked_import_folder(root: Path) -> str | None:
    """Why the project's import folder cannot take artefacts (a link: git stores those), or None."""
    for folder in (root / ".godot", root / ".godot" / "imported"):
        if folder.is_symlink():
            return (f"{folder} is a symbolic link (to {os.readlink(folder)}); the bridge writes no import "
                    "artefacts through it: remove the link, and the next request imports into a real folder")
    return None


def importers_root() -> Path:
    """The folder of importer_options()' folders (one per engine version): the workers read it."""
    return Path(cache_dir(), "importers")


def importer_options(engine: engines.Engine) -> Path:
    """Return a folder of the `.import` files that `engine`'s own editor wrote for one stand-in asset
    per importer: every option each importer declares, with its default (shadow.gd reads them).
    Built on first use behind the wall, in a folder of the bridge's making, and cached per version
    (its full text names the build: a launcher or a copy of the same binary asks again for nothing)."""
    key = hashlib.sha256(f"{engine.version}|{sorted(_STAND_INS.items())}".encode())
    folder = importers_root() / key.hexdigest()[:16]
    if folder.is_dir():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gdres-importers-", dir=folder.parent) as scratch:
        probe, home, made = Path(scratch) / "project", Path(scratch) / "home", Path(scratch) / "made"
        for path in (probe, home, made):
            path.mkdir()
        (probe / "project.godot").write_text("config_version=5\n", "utf-8")
        for importer, extension in _STAND_INS.items():
            (probe / f"{importer}.{extension}").write_text("keys,en\n" if extension == "csv" else "x", "utf-8")
            (probe / f"{importer}.{extension}.import").write_text(f'[remap]\n\nimporter="{importer}"\n', "utf-8")
        failure = _run_import(engine, probe, time.monotonic() + IMPORT_TIMEOUT, lambda done, total: None, home=home)
        if failure is not None:
            raise EngineUnsupported(f"{engine.path} could not say what its importers take: {failure}")
        for written in probe.glob("*.import"):
            shutil.copyfile(written, made / written.name)
        try:
            os.replace(made, folder)
        except OSError:
            if not folder.is_dir():  # another process built it meanwhile: theirs is as good
                raise
    return folder


def _build_shadow(engine: engines.Engine, root: Path, pack: Path, options: Path, shadow: Path, needed: Path,
                  assets: Sequence[str], deadline: float) -> Outcome:
    """Build the shadow of `root` holding `assets` (gdscript/tools/shadow.gd), behind the wall."""
    needed.write_text("".join(f"{asset}\n" for asset in assets), "utf-8")
    tool = gdscript_dir() / "tools" / "shadow.gd"
    argv = [engine.path, "--headless", "--path", str(root), "--main-pack", str(pack), "-s", str(tool),
            "--", str(root), str(shadow), str(options), str(needed)]
    reads = [*map(Path, wall.SYSTEM_READ), *wall.engine_reads(engine.path), gdscript_dir(), pack, root, options,
             needed]
    try:
        done = subprocess.run(wall.argv(argv, read=reads, write=[shadow], die_with_parent=True), capture_output=True,
                              timeout=max(1.0, deadline - time.monotonic()), stdin=subprocess.DEVNULL,
                              check=False, cwd=shadow, env=_private_environment(shadow.parent / "home"))
    except subprocess.TimeoutExpired:
        return Outcome(failure=f"building the shadow of {root} to import it ran past the deadline")
    except OSError as exc:
        return Outcome(failure=f"the engine could not be started to build the shadow of {root}: {exc}")
    for line in done.stdout.decode("utf-8", "replace").splitlines():
        if line.startswith("SHADOW "):
            said = json.loads(line.removeprefix("SHADOW "))
            return Outcome(imported=list(said["imported"]), refused=dict(said["refused"]))
    tail = " / ".join(done.stderr.decode("utf-8", "replace").strip().splitlines()[-3:])
    return Outcome(failure=f"building the shadow of {root} to import it failed: {tail}")


def _private_environment(home: Path) -> dict[str, str]:
    """The environment of an engine run on a shadow: only what a process needs of the user's (where
    programs are, the language, the time zone, Windows' system folders), and its settings, data and
    cache folders (the editor's own files) in `home`, a folder of the import's own. Nothing else of
    the user's (tokens, keys) is handed to an editor that imports a stranger's files."""
    env = {name: os.environ[name] for name in _PASSED_ON if name in os.environ}
    for name, below in (("HOME", ""), ("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"),
                        ("XDG_CACHE_HOME", "cache"), ("APPDATA", "appdata"), ("LOCALAPPDATA", "localappdata")):
        env[name] = str(home / below) if below else str(home)
    return env


def _run_import(engine: engines.Engine, shadow: Path, deadline: float, progress: Progress, *,
                home: Path | None = None, recovery: bool = True) -> str | None:
    """Run the editor's import on `shadow` behind the wall: it reads the shadow, its own files and
    `home` (its settings and caches), and writes only the shadow and `home`. `recovery`: with editor
    plugins, tool scripts and GDExtensions off, where the engine can."""
    argv = [engine.path, "--headless", "--path", str(shadow), "--import"]
    if recovery and engine.version_tuple >= _RECOVERY_MODE:
        argv.insert(2, "--recovery-mode")
    env = None
    if home is not None:
        reads = [*map(Path, wall.SYSTEM_READ), *wall.engine_reads(engine.path), shadow, home]
        argv = wall.argv(argv, read=reads, write=[shadow, home], die_with_parent=True)
        env = _private_environment(home)
    try:
        process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   cwd=shadow, env=env)
    except OSError as exc:
        return f"the engine's import could not be started: {exc}"
    # The output is read as it comes, for progress; a timer ends an import that runs past the deadline.
    # It is a daemon, started inside the block that cancels it: a Ctrl-C landing as it starts must
    # leave no thread that the interpreter's exit would wait for until the deadline.
    timer = threading.Timer(max(1.0, deadline - time.monotonic()), process.kill)
    timer.daemon = True
    tail: collections.deque[str] = collections.deque(maxlen=3)
    total = done = 0
    last = ""
    try:
        timer.start()
        assert process.stdout is not None
        for raw in process.stdout:
            line = _COLOUR.sub("", raw.decode("utf-8", "replace")).strip()
            step = _STEP.match(line)
            if step is None:
                if line and not _PROGRESS.match(line):
                    tail.append(line)
                continue
            started = _TOTAL.match(step[1])
            if started is not None:
                total = total or int(started[1])
            elif total and not step[1].endswith("...") and step[1] != last and done < total:
                # The editor prints a step again when it lasts over a second: one asset, one count.
                done += 1
                progress(done, total)
            last = step[1]
        status = process.wait()
        if status == 0 and total and done < total:
            # The editor names only some assets as it imports them on several threads: all are done.
            progress(total, total)
    finally:
        timer.cancel()
        process.kill()
        process.wait()
    if status != 0 and time.monotonic() >= deadline:
        return "the engine's import ran past the deadline"
    if status != 0:
        return f"the engine's import exited with status {status}: {' / '.join(tail)}"
    return None


_DEST_FILES = re.compile(r"^dest_files=[^\r\n]*", re.M)


def _artefacts(line: str) -> list[str]:
    """The artefacts a dest_files line names, however it is spaced."""
    return re.findall(r'"([^"]*)"', line)
_REMAP = re.compile(r"^\[remap\]\r?\n(?:(?!\[).*\n)*", re.M)
"""A .import's [remap] section: its header, and every line up to the next section's."""


def _follow_artefacts(shadow: Path, root: Path, source: PurePosixPath, rewrites: Rewrites | None) -> None:
    """Where the editor's import of `source` made other artefacts than its .import names (the settings
    changed: VRAM compression makes `<file>-<md5>.s3tc.ctex` instead of `.ctex`), give the project's
    .import the [remap] section and the dest_files line the editor wrote in the shadow, and change no
    other line: without them the engine would look for artefacts that are not there."""
    folder = source.parent.parts
    name = f"{source.name}.import"
    written = dict(nofollow.regular_files(shadow, folder, {name}.__contains__)).get(name)
    own = dict(nofollow.regular_files(root, folder, {name}.__contains__)).get(name)
    if written is None or own is None:
        return
    try:
        new, old = written.decode("utf-8"), own.decode("utf-8")
    except UnicodeDecodeError:
        return  # not the editor's text: left as it is
    crlf = "\r\n" in old
    new = new.replace("\r\n", "\n")
    new_dests, old_dests = _DEST_FILES.search(new), _DEST_FILES.search(old)
    new_remap, old_remap = _REMAP.search(new), _REMAP.search(old)
    if new_dests is None or old_dests is None or new_remap is None or old_remap is None \
            or _artefacts(new_dests[0]) == _artefacts(old_dests[0]):
        return
    remap, dests = new_remap[0], new_dests[0]
    if crlf:  # a checkout with Windows line ends keeps them
        remap = remap.replace("\n", "\r\n")  # (the dest_files line's own CR stays where it is)
    text = old[:old_remap.start()] + remap + old[old_remap.end():]
    text = _DEST_FILES.sub(lambda _: dests, text, count=1)
    if rewrites is not None:
        rewrites(root.joinpath(*folder, name), own, text.encode("utf-8"))
    nofollow.write(root, (*folder, name), text.encode("utf-8"))
    log.warning("gdres: %s names the artefacts its new import settings made, as the editor writes it", source)


def _bring_back(shadow: Path, root: Path, imported: Sequence[str], rewrites: Rewrites | None = None) -> None:
    """Copy into the project what the import made for the `imported` assets (res:// paths), and
    nothing else of the shadow: in .godot/imported/ the files the editor names for them
    (`<file>-<md5 of its res:// path>.<kind>`, and its `.md5` record), a translation table's own
    files beside it (not a file a locale named `../x` sent elsewhere), and a .import file for an
    asset that has none (without it the engine cannot load the asset; the editor writes the same
    when it opens the project), said in the log.

    The user's own .import files stay as they are: the editor rewrites them with the parameters it
    adds since the file was written (a clone of tps-demo got 135 modified files from one read), but
    the shadow's were written from their values, so the artefacts match them as they are. Nor are
    .uid files added beside shaders and scripts.
    """
    names = {f"{Path(res).name}-{hashlib.md5(res.encode()).hexdigest()}" for res in imported}

    def artefact(name: str) -> bool:
        named = _ARTEFACT.match(name)
        return named is not None and named[1] in names

    for name, data in nofollow.regular_files(shadow, (".godot", "imported"), artefact):
        nofollow.write(root, (".godot", "imported", name), data)
    # Beside the sources, folder by folder, only the files wanted are read (not the sources again):
    # a translation table's files, one per language (`<table>.<locale>.translation`), and the
    # .import the editor wrote for an asset that had none.
    beside: dict[tuple[str, ...], set[str]] = collections.defaultdict(set)
    tables: dict[tuple[str, ...], list[str]] = collections.defaultdict(list)
    for res in imported:
        source = PurePosixPath(res.removeprefix("res://"))
        if not (root / f"{source}.import").exists():
            beside[source.parent.parts].add(f"{source.name}.import")
        else:
            _follow_artefacts(shadow, root, source, rewrites)
        if source.suffix.lower() == ".csv":
            tables[source.parent.parts].append(f"{source.stem}.*.translation")
    written: list[str] = []
    for folder in sorted({*beside, *tables}):

        def wanted(name: str, folder: tuple[str, ...] = folder) -> bool:
            return name in beside[folder] or any(fnmatch.fnmatchcase(name, table) for table in tables[folder])

        for name, data in nofollow.regular_files(shadow, folder, wanted):
            nofollow.write(root, (*folder, name), data)
            if name in beside[folder]:
                written.append("/".join((*folder, name)))
    if not (root / ".godot" / ".gdignore").exists():
        for name, data in nofollow.regular_files(shadow, (".godot",), {".gdignore"}.__contains__):
            nofollow.write(root, (".godot", name), data)
    if written:
        shown = ", ".join(written[:5]) + (f" and {len(written) - 5} more" if len(written) > 5 else "")
        log.warning("gdres: wrote %d .import file(s) beside assets that had none, as the Godot editor "
                    "does: %s", len(written), shown)
