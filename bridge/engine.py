"""Find the Godot binary, check its version, and build the worker's command line."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .errors import EngineNotFound, EngineUnsupported

MIN_VERSION = (4, 3)
DEFAULT_TIMEOUT = 60.0
"""Seconds one request may take before its engine is killed and replaced."""
_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?")
_PROBE_TIMEOUT = 30.0


@dataclass(frozen=True)
class Engine:
    """A Godot binary known to be usable."""

    path: str
    version: str

    @property
    def version_tuple(self) -> tuple[int, int, int]:
        """Return (major, minor, patch) of the engine."""
        return parse_version(self.version)


def parse_version(text: str) -> tuple[int, int, int]:
    """Return (major, minor, patch) from `godot --version` output, or (0, 0, 0) if unreadable."""
    match = _VERSION.match(text.strip())
    if not match:
        return (0, 0, 0)
    major, minor, patch = match.groups()
    return (int(major), int(minor), int(patch or 0))


def find_godot(explicit: str | None = None, environ: dict[str, str] | None = None) -> str:
    """Return the Godot binary named by --godot, else GODOT_BIN, else the first Godot 4.3+ among
    godot and godot4 on PATH and the one scripts/install-godot.sh installs (a Godot 3 named `godot`
    beside a `godot4` is common: it is passed over, not an error)."""
    env = os.environ if environ is None else environ
    for source, candidate in (("--godot", explicit), ("GODOT_BIN", env.get("GODOT_BIN"))):
        if candidate:
            found = shutil.which(candidate)
            if found is None:
                raise EngineNotFound(f"{source} names {candidate!r}, which is not an executable file")
            return found
    candidates = [shutil.which(name, path=env.get("PATH")) for name in ("godot", "godot4")]
    candidates.append(shutil.which(str(cache_dir() / "bin" / "godot")))
    too_old: EngineUnsupported | None = None
    for found in dict.fromkeys(candidate for candidate in candidates if candidate):
        try:
            probe(found)
        except EngineUnsupported as exc:
            too_old = too_old or exc
            continue
        except EngineNotFound:
            continue
        return found
    if too_old is not None:
        raise too_old
    raise EngineNotFound(
        "no Godot binary found: pass --godot PATH, set GODOT_BIN, or put godot on PATH "
        "(scripts/install-godot.sh installs one)"
    )


def probe(path: str) -> Engine:
    """Return the engine at `path` after checking it is Godot 4.3 or newer (cached per binary)."""
    stat = os.stat(path)
    key = f"{os.path.realpath(path)}|{stat.st_size}|{stat.st_mtime_ns}"
    cache = _cache_file()
    known = _read_cache(cache)
    version = known.get(key)
    if version is None:
        version = _run_version(path)
        known[key] = version
        _write_cache(cache, known)
    engine = Engine(path=path, version=version)
    if engine.version_tuple < (*MIN_VERSION, 0):
        raise EngineUnsupported(
            f"{path} is Godot {version or 'of unknown version'}; godot-bridge needs Godot "
            f"{MIN_VERSION[0]}.{MIN_VERSION[1]} or newer"
        )
    return engine


def _run_version(path: str) -> str:
    try:
        done = subprocess.run(
            [path, "--version"],
            capture_output=True,
            timeout=_PROBE_TIMEOUT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EngineNotFound(f"{path} could not be run to ask its version: {exc}") from None
    lines = done.stdout.decode("utf-8", "replace").strip().splitlines()
    return lines[-1].strip() if lines else ""


def cache_dir() -> Path:
    """Return the bridge's own cache folder: $XDG_CACHE_HOME (or ~/.cache)/godot-bridge."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "godot-bridge"


def _cache_file() -> Path:
    return cache_dir() / "engines.json"


def _read_cache(cache: Path) -> dict[str, str]:
    try:
        data = json.loads(cache.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _write_cache(cache: Path, known: dict[str, str]) -> None:
    # A cache that cannot be written only costs a version probe next time.
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=cache.parent, delete=False, suffix=".tmp") as f:
            json.dump(known, f)
        os.replace(f.name, cache)
    except OSError:
        pass


def gdscript_dir() -> Path:
    """Return the folder of the engine-side scripts: inside the installed package, or the repo's."""
    here = Path(__file__).resolve().parent
    installed = here / "gdscript"
    return installed if installed.is_dir() else here.parent / "gdscript"


_QUIET_PROJECT = (
    "config_version=5\n\n[debug]\n\nfile_logging/enable_file_logging=false\n"
    "file_logging/enable_file_logging.pc=false\n"
)
"""A throwaway project that leaves no log file in the user's data folder."""

PACK_FLAVOURS = ("safe", "trusted")
"""Settings packs: "safe" also shadows the project's GDExtension list and script class cache;
"trusted" (for allow_scripts) leaves those to the project (gdscript/tools/make_pack.gd)."""


def settings_pack(engine: Engine, flavour: str = "safe") -> Path:
    """Return the settings pack a worker of `engine` starts with, building it on first use.

    A worker runs with `--main-pack` set to this pack, which holds the bridge's own project settings,
    so nothing that the project's settings name (autoloads, a theme, fonts, GDExtensions) is loaded
    when the engine starts. Built by the engine itself (pack formats differ between versions) and
    cached per binary; a build is written beside its final name and renamed, so processes that
    build at once do not disturb each other.
    """
    builder = gdscript_dir() / "tools" / "make_pack.gd"
    # Keyed by the builder's text too: a bridge that changes what goes in the pack gets a new one.
    key = hashlib.sha256(f"{os.path.realpath(engine.path)}|{engine.version}|".encode()
                         + builder.read_bytes()).hexdigest()[:16]
    pack = cache_dir() / "packs" / f"{key}-{flavour}.pck"
    if pack.is_file():
        return pack
    pack.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="godot-bridge-pack-") as scratch:
        (Path(scratch) / "project.godot").write_text(_QUIET_PROJECT, "utf-8")
        building = pack.with_name(f".{pack.name}.{os.getpid()}.tmp")
        argv = [engine.path, "--headless", "--path", scratch, "-s", str(builder), "--", str(building), flavour]
        try:
            done = subprocess.run(argv, capture_output=True, timeout=_PROBE_TIMEOUT,
                                  stdin=subprocess.DEVNULL, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise EngineUnsupported(f"{engine.path} could not build the worker settings pack: {exc}") from None
        if done.returncode != 0 or not building.is_file():
            tail = " / ".join(done.stderr.decode("utf-8", "replace").strip().splitlines()[-3:])
            building.unlink(missing_ok=True)
            raise EngineUnsupported(f"{engine.path} could not build the worker settings pack: {tail}")
        os.replace(building, pack)
    return pack


def worker_argv(engine: Engine, project: Path, token: str, *, pack: Path) -> list[str]:
    """Return the command line of one headless worker serving `project` (a real path).

    `--path` makes the project the working folder, which `res://` resolves against once a main
    pack is given; the worker is told the project's real path for its confinement checks.
    """
    entry = gdscript_dir() / "main.gd"
    return [engine.path, "--headless", "--path", str(project), "--main-pack", str(pack),
            "-s", str(entry), "--", token, str(project)]
