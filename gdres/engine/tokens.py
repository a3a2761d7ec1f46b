"""The bridge's scripts as the engine's binary tokens: a worker that loads them compiles in ~170 ms
what takes it ~250 ms from the sources (the scripts of main.gd and the five operations of the
benchmark, 4.6.3, 2-core VM), as an exported game's scripts load.

Godot makes binary tokens only when it exports a project (`--export-pack` with the preset's
script_export_mode=1), ~3.5 s of an editor's start, so they are made on request (`gdres doctor`,
through engine/godot.py compile_scripts()), never behind a request's back: a CI job that runs once
would pay for them and not gain. Made once per engine binary and per text of the scripts, in the cache folder;
until then, and for scripts other than the installed ones (a test's changed copy), workers run the
sources. A copy counts once every script in it compiles (gdscript/tools/tokens.gd checks) and it
is marked complete, so a worker never meets half of one; one process at a time builds it.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import filelock

from gdres.errors import EngineUnsupported
from gdres.settings import cache_dir

_EXPORT_TIMEOUT = 120.0
_COMPLETE = ".complete"
"""Made last in a copy: a folder without it is one a build did not finish, and is never used."""
_PROJECT = 'config_version=5\n\n[application]\n\nconfig/name="gdres scripts"\n'
_PRESET = """[preset.0]

name="tokens"
platform="Linux"
runnable=false
export_filter="all_resources"
include_filter="*.json"
exclude_filter=""
export_path=""
script_export_mode=1
"""
"""An export of every script as binary tokens, and the data files they preload."""


def folder(godot: str, version: str, sources: Path) -> Path | None:
    """Return the binary-token copy of the scripts in `sources` for the Godot binary `godot` (which
    reports `version`), where one was made."""
    made = _place(godot, version, sources)
    return made if (made / _COMPLETE).is_file() else None


def build(godot: str, version: str, sources: Path) -> Path:
    """Make the binary-token copy of the scripts in `sources` for the Godot binary `godot` (which
    reports `version`), unless it is made; return it.

    Raises EngineUnsupported with the engine's words when it cannot export (a build without the
    editor) or a script does not compile from its tokens.
    """
    final = _place(godot, version, sources)
    final.parent.mkdir(parents=True, exist_ok=True)
    with filelock.FileLock(f"{final}.lock"):
        if (final / _COMPLETE).is_file():
            return final
        # What a build cut short left (no mark of completion: never used) goes first, and so does
        # its scratch folder (the lock says no build of this copy is running).
        shutil.rmtree(final, ignore_errors=True)
        for left in final.parent.glob(f".{final.name}-*"):
            shutil.rmtree(left, ignore_errors=True)
        try:
            with tempfile.TemporaryDirectory(prefix=f".{final.name}-", dir=final.parent) as scratch:
                _export(godot, sources, Path(scratch), final)
        except BaseException:
            shutil.rmtree(final, ignore_errors=True)
            raise
        (final / _COMPLETE).touch()
    return final


def _export(godot: str, sources: Path, work: Path, final: Path) -> None:
    """Export the scripts of `sources` as binary tokens and lay them out in `final`, in the folder `work`."""
    project, home, pack = work / "project", work / "home", work / "scripts.pck"
    shutil.copytree(sources, project / "gdscript", ignore=shutil.ignore_patterns("__pycache__"))
    (project / "project.godot").write_text(_PROJECT, "utf-8")
    (project / "export_presets.cfg").write_text(_PRESET, "utf-8")
    home.mkdir()
    _engine([godot, "--headless", "--path", str(project), "--export-pack", "tokens", str(pack)], home,
            "export its scripts as binary tokens")
    tool = sources / "tools" / "tokens.gd"
    _engine([godot, "--headless", "--path", str(home), "-s", str(tool), "--", str(pack), final.as_posix()], home,
            "lay out its scripts' binary tokens")
    # An engine that answers every command line with success (no export at all) made nothing: each
    # script must be there as tokens, remapped, and each data file as it is.
    for source in sources.rglob("*"):
        relative = source.relative_to(sources)
        expected = {".gd": [relative.with_suffix(".gdc"), relative.with_suffix(".gd.remap")],
                    ".json": [relative]}.get(source.suffix, [])
        missing = [str(path) for path in expected if not (final / path).is_file()]
        if missing:
            raise EngineUnsupported(f"{godot} could not lay out its scripts' binary tokens: "
                                    f"{', '.join(missing)} not made")


def _engine(argv: list[str], home: Path, what: str) -> None:
    """Run the engine for one build step, its user folders (editor settings, logs) in `home`."""
    environ = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home), "XDG_DATA_HOME": str(home),
               "XDG_CACHE_HOME": str(home), "APPDATA": str(home), "LOCALAPPDATA": str(home)}
    try:
        done = subprocess.run(argv, capture_output=True, timeout=_EXPORT_TIMEOUT, stdin=subprocess.DEVNULL,
                              env=environ, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EngineUnsupported(f"{argv[0]} could not {what}: {exc}") from None
    if done.returncode != 0:
        tail = " / ".join(done.stderr.decode("utf-8", "replace").strip().splitlines()[-3:])
        raise EngineUnsupported(f"{argv[0]} could not {what}: {tail or f'exit status {done.returncode}'}")


def _place(godot: str, version: str, sources: Path) -> Path:
    """Where the copy of `sources` for `godot` is: named by the engine and every byte of the scripts,
    in the cache folder, a real path (the folder is the gate's own: safety/gate.gd compares it with
    real paths)."""
    key = _key(os.path.realpath(godot), version, str(sources), _stamp(sources))
    return Path(cache_dir(), "scripts", key)


@functools.cache
def _key(engine: str, version: str, sources: str, stamp: tuple[tuple[str, int, int], ...]) -> str:
    digest = hashlib.sha256(f"{engine}|{version}|".encode())
    for relative, _, _ in stamp:
        digest.update(f"{relative}\0".encode())
        digest.update(Path(sources, relative).read_bytes())
    return digest.hexdigest()[:16]


def _stamp(sources: Path) -> tuple[tuple[str, int, int], ...]:
    """Each file of `sources` with its size and time: the scripts are hashed again only when they change."""
    files = []
    for root, folders, names in os.walk(sources):
        folders[:] = sorted(name for name in folders if name != "__pycache__")
        for name in sorted(names):
            info = os.stat(os.path.join(root, name))
            files.append((os.path.relpath(os.path.join(root, name), sources), info.st_size, info.st_mtime_ns))
    return tuple(files)
