"""Find the Godot binary, check its version, and build the worker's command line."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gdres.engine import discovery, tokens
from gdres.errors import EngineNotFound, EngineUnsupported
from gdres.scripts import gdscript_dir
from gdres.settings import cache_dir

# The oldest Godot whose API has everything gdscript/ uses: tests/unit/test_api_version.py holds it to that.
MIN_VERSION = (4, 4)
ENVIRONMENT = ("GODOT_BIN", "GODOT", "GODOT4")
"""Variables that name the Godot to use, after --godot and in this order."""
_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?(?:\.(dev|alpha|beta|rc|stable)(\d*))?")
_STATUS = ("dev", "alpha", "beta", "rc", "stable")
"""Release stages in order: 4.5.stable is newer than 4.5.rc2."""
_PROBE_TIMEOUT = 30.0


@dataclass(frozen=True)
class Engine:
    """A Godot binary and the version it reports."""

    path: str
    version: str

    @property
    def version_tuple(self) -> tuple[int, int, int]:
        """Return (major, minor, patch) of the engine."""
        return parse_version(self.version)

    @property
    def supported(self) -> bool:
        """Return whether the bridge runs on this version."""
        return self.version_tuple >= (*MIN_VERSION, 0)


def parse_version(text: str) -> tuple[int, int, int]:
    """Return (major, minor, patch) from `godot --version` output, or (0, 0, 0) if unreadable."""
    match = _VERSION.match(text.strip())
    if not match:
        return (0, 0, 0)
    major, minor, patch = match.groups()[:3]
    return (int(major), int(minor), int(patch or 0))


def version_order(text: str) -> tuple[int, int, int, int, int]:
    """Return a key that sorts `godot --version` answers from oldest to newest, release stage included
    (4.6.dev1 < 4.6.beta2 < 4.6.rc1 < 4.6.stable); a build that names no stage counts as stable."""
    match = _VERSION.match(text.strip())
    stage, number = (match.group(4), match.group(5)) if match else (None, None)
    return (*parse_version(text), _STATUS.index(stage or "stable"), int(number or 0))


@dataclass(frozen=True)
class Finding:
    """One Godot that the search came upon, and what it made of it (doctor lists these)."""

    source: str
    """`--godot`, an environment variable, `PATH (godot)`, or the kind of install (discovery.PLACES)."""
    path: str
    version: str | None
    """What `--version` printed; None when the binary could not be run."""
    chosen: bool
    reason: str

    def to_json(self) -> dict[str, Any]:
        """Return the finding as doctor --json prints it."""
        return {"source": self.source, "path": self.path, "version": self.version, "chosen": self.chosen,
                "reason": self.reason}


@dataclass(frozen=True)
class Survey:
    """Every Godot found, in search order, and the one chosen (or why none was)."""

    findings: tuple[Finding, ...]
    engine: Engine | None
    error: EngineNotFound | EngineUnsupported | None


def find_godot(explicit: str | None = None, environ: Mapping[str, str] | None = None, *,
               roots: discovery.Roots | None = None) -> str:
    """Return the Godot to use: the one --godot (`explicit`), else GODOT_BIN, GODOT or GODOT4 names, else the
    newest Godot 4.4+ that PATH and the usual install places hold (see survey); raise when there is none."""
    found = survey(explicit, environ, roots=roots, complete=False)
    if found.error is not None:
        raise found.error
    assert found.engine is not None
    return found.engine.path


def survey(explicit: str | None = None, environ: Mapping[str, str] | None = None, *,
           roots: discovery.Roots | None = None, complete: bool = True) -> Survey:
    """Return what the search for Godot finds and which one it takes.

    The first of --godot, GODOT_BIN, GODOT and GODOT4 that is set decides, usable or not (an error then
    names it). Otherwise every candidate of discovery.candidates is asked its version and the newest
    supported one wins, the earlier one on a tie. `complete` also lists, with their versions, the
    candidates that an explicit choice made moot (doctor wants them; a request does not).
    """
    roots = roots or discovery.Roots.of_this_machine(environ)
    choices = [("--godot", explicit), *((name, roots.environ.get(name)) for name in ENVIRONMENT)]
    named = [(source, value) for source, value in choices if value]
    if named:
        return _named(named, roots, complete)
    looked = [(candidate, *_look(candidate.path)) for candidate in discovery.candidates(roots)]
    usable = [(order, engine) for order, (_, engine, _) in enumerate(looked) if engine and engine.supported]
    best = max(usable, key=lambda item: (version_order(item[1].version), -item[0]), default=None)
    chosen_at, chosen = best if best else (None, None)
    findings = tuple(
        Finding(candidate.source, candidate.path, _version(engine), order == chosen_at,
                _verdict(engine, failure, chosen, order == chosen_at))
        for order, (candidate, engine, failure) in enumerate(looked)
    )
    if chosen is not None:
        return Survey(findings, chosen, None)
    too_old = next((finding for finding in findings if finding.version is not None), None)
    if too_old is not None:
        return Survey(findings, None, EngineUnsupported(
            f"no supported Godot found: {too_old.path} is Godot {too_old.version or 'of unknown version'}; "
            f"gdres needs Godot {_minimum()} or newer ({_DOCTOR})"))
    return Survey(findings, None, EngineNotFound(
        "no Godot binary found: pass --godot PATH, set GODOT_BIN, or install Godot where its installers put it "
        f"(scripts/install-godot.sh installs one; {_DOCTOR})"))


_DOCTOR = "gdres doctor lists every Godot it looked at"


def _named(named: list[tuple[str, str]], roots: discovery.Roots, complete: bool) -> Survey:
    """The survey when --godot or a variable names the Godot: that one or an error, never another."""
    source, value = named[0]
    path = discovery.which(discovery.app_executable(value), roots)
    engine: Engine | None = None
    error: EngineNotFound | EngineUnsupported | None = None
    if path is None:
        error = EngineNotFound(f"{source} names {value!r}, which is not an executable file")
        first = Finding(source, value, None, False, "not usable: not an executable file")
    else:
        engine, failure = _look(path)
        if engine is None:
            error = EngineNotFound(f"{source} names {path}: {failure}")
        elif not engine.supported:
            error = EngineUnsupported(f"{source} names {path}, which is Godot "
                                      f"{engine.version or 'of unknown version'}; "
                                      f"gdres needs Godot {_minimum()} or newer")
        reason = (f"chosen: {source} names it" if error is None else
                  f"not usable: {failure or _unsupported(engine)}")
        first = Finding(source, path, _version(engine), error is None, reason)
    findings = [first]
    if complete:
        for later, value in named[1:]:
            found = discovery.which(discovery.app_executable(value), roots)
            other = _look(found)[0] if found else None
            findings.append(Finding(later, found or value, _version(other), False, f"not used: {source} comes first"))
        for candidate in discovery.candidates(roots):
            if path is not None and os.path.realpath(candidate.path) == os.path.realpath(path):
                continue
            other, failure = _look(candidate.path)
            findings.append(Finding(candidate.source, candidate.path, _version(other), False,
                                    f"passed over: {failure}" if failure else
                                    f"not considered: {source} names the Godot to use"))
    return Survey(tuple(findings), engine if error is None else None, error)


def _look(path: str) -> tuple[Engine | None, str]:
    """Return the engine at `path` with its version, or None and why its version could not be asked."""
    try:
        return Engine(path, _version_of(path)), ""
    except subprocess.TimeoutExpired:
        return None, f"did not answer --version within {_PROBE_TIMEOUT:g} s"
    except subprocess.CalledProcessError as exc:
        said = exc.stderr.decode("utf-8", "replace").strip().splitlines()
        return None, f"--version failed with exit status {exc.returncode}" + (f" ({said[-1].strip()})" if said else "")
    except OSError as exc:
        return None, f"could not be run ({exc.strerror or exc})"


def _version(engine: Engine | None) -> str | None:
    return engine.version if engine is not None else None


def _verdict(engine: Engine | None, failure: str, best: Engine | None, chosen: bool) -> str:
    """Why a candidate found (not named) was or was not chosen."""
    if engine is None:
        return f"passed over: {failure}"
    if chosen:
        return "chosen: the newest supported Godot found"
    if not engine.supported:
        return f"passed over: {_unsupported(engine)}"
    assert best is not None
    if version_order(engine.version) == version_order(best.version):
        return "passed over: the same version as the chosen one, which was found first"
    return f"passed over: older than the chosen {best.version}"


def _unsupported(engine: Engine | None) -> str:
    assert engine is not None
    if not engine.version:
        return "it printed no version for --version"
    if engine.version_tuple == (0, 0, 0):
        return f"its --version answer {engine.version[:60]!r} is not a Godot version"
    return f"older than Godot {_minimum()}, which gdres needs"


def _minimum() -> str:
    return f"{MIN_VERSION[0]}.{MIN_VERSION[1]}"


def probe(path: str) -> Engine:
    """Return the engine at `path` after checking it is Godot 4.4 or newer (cached per binary)."""
    try:
        engine = Engine(path=path, version=_version_of(path))
    except (OSError, subprocess.SubprocessError) as exc:
        raise EngineNotFound(f"{path} could not be run to ask its version: {exc}") from None
    if not engine.supported:
        raise EngineUnsupported(
            f"{path} is Godot {engine.version or 'of unknown version'}; gdres needs Godot "
            f"{_minimum()} or newer"
        )
    return engine


def _version_of(path: str) -> str:
    """Return what `path --version` prints, from the cache when this very file was asked before."""
    stat = os.stat(path)
    key = f"{os.path.realpath(path)}|{stat.st_size}|{stat.st_mtime_ns}"
    cache = _cache_file()
    known = _read_cache(cache)
    version = known.get(key)
    if version is None:
        version = _run_version(path)
        known[key] = version
        _write_cache(cache, known)
    return version


def _run_version(path: str) -> str:
    done = subprocess.run(
        [path, "--version"],
        capture_output=True,
        timeout=_PROBE_TIMEOUT,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    lines = done.stdout.decode("utf-8", "replace").strip().splitlines()
    if not lines and done.returncode != 0:
        # Silent and failing: a launcher that cannot start what it launches, not a Godot of no version.
        raise subprocess.CalledProcessError(done.returncode, done.args, done.stdout, done.stderr)
    return lines[-1].strip() if lines else ""


def _cache_file() -> Path:
    return Path(cache_dir(), "engines.json")


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
    pack = Path(cache_dir(), "packs", f"{key}-{flavour}.pck")
    if pack.is_file():
        return pack
    pack.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gdres-pack-") as scratch:
        (Path(scratch) / "project.godot").write_text(_QUIET_PROJECT, "utf-8")
        building = pack.with_name(f".{pack.name}.{os.getpid()}.tmp")
        argv = [engine.path, "--headless", "--path", scratch, "-s", str(builder), "--", str(building), flavour,
                pack.as_posix()]  # a real path: cache_dir() is
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


def compile_scripts(engine: Engine) -> Path:
    """Make the binary tokens of the bridge's scripts for `engine` (gdres/engine/tokens.py), unless
    they are made; return their folder. Raises EngineUnsupported where the engine cannot."""
    return tokens.build(engine.path, engine.version, gdscript_dir())


def worker_scripts(engine: Engine) -> Path:
    """Return the folder of the scripts a worker of `engine` runs: their binary tokens where they were
    made for it (gdres/engine/tokens.py: they compile faster), else the sources."""
    sources = gdscript_dir()
    return tokens.folder(engine.path, engine.version, sources) or sources


def worker_argv(engine: Engine, project: Path, token: str, *, pack: Path, scripts: Path | None = None,
                trusted: bool = False) -> list[str]:
    """Return the command line of one headless worker serving `project` (a real path).

    `--path` makes the project the working folder, which `res://` resolves against once a main
    pack is given; the worker is told the project's real path for its confinement checks, and
    whether it may serve allow_scripts requests (`trusted`): the permission comes from the command
    line the bridge chose, and a worker started without it refuses a request that asks for it.
    `scripts`: the folder of the bridge's scripts to run (default: worker_scripts()).
    """
    entry = (scripts or worker_scripts(engine)) / "main.gd"
    return [engine.path, "--headless", "--path", str(project), "--main-pack", str(pack),
            "-s", str(entry), "--", token, str(project), "trusted" if trusted else "safe"]
