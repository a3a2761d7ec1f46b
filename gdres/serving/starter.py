"""The engines of a pool: the Godot binary, found and checked once; its settings packs; workers
launched behind the wall; and the imports of the projects they serve (gdres/serving/imports.py)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from gdres.engine import godot as engines
from gdres.engine import wall
from gdres.engine.worker import Inbox, Worker
from gdres.requests.paths import cache_outside
from gdres.serving import imports
from gdres.serving.imports import EVERY_ASSET
from gdres.serving.journal import Journal
from gdres.settings import DEFAULT_TIMEOUT, MAX_REQUESTS, MAX_RSS, START_TIMEOUT

IMPORT_PROGRESS_EVERY = 2.0
"""Seconds between two progress lines of an import (and one when the last asset is imported)."""

IMPORTS_BEFORE_ALL = 2
"""Imports of the assets single requests need, after which a pool imports every asset of the project
not imported yet (each import starts an editor: ~2 s before its first asset)."""

ArgvFor = Callable[[Path, str], Sequence[str]]
"""Build the command line of a worker for a project root and a reply token."""

log = logging.getLogger("gdres")


@dataclass(frozen=True)
class Settings:
    """How engines are found, started, given deadlines and retired: the one copy of these settings."""

    godot: str | None = None
    """The Godot binary (None: found as gdres/engine/godot.py find_godot says)."""
    timeout: float = DEFAULT_TIMEOUT
    """Seconds one request may take before its engine is killed and replaced."""
    verbose: bool = False
    """Echo engine output to stderr."""
    auto_import: bool = True
    """Import a project whose request needs an asset not imported yet (else: not_imported)."""
    start_timeout: float = START_TIMEOUT
    """Seconds an engine may take to become ready."""
    max_requests: int | None = MAX_REQUESTS
    """Requests after which a worker is replaced."""
    max_rss: int | None = MAX_RSS
    """Resident bytes past which a worker is replaced."""
    relative_to: str | None = None
    """Folder a relative project_path is taken against (None: the current folder, when it is resolved)."""
    import_shown: Callable[[Path], ImportShown] | None = None
    """How an import of a project's assets is shown (None: as log lines, LoggedImport)."""


class Starter:
    """Start the workers of a pool, all reporting to one inbox, and import projects for them."""

    def __init__(self, settings: Settings, inbox: Inbox, argv_for: ArgvFor | None = None) -> None:
        self.settings = settings
        self._inbox = inbox
        self._argv_for = argv_for
        self._engine: engines.Engine | None = None
        self._packs: dict[str, Path] = {}
        self._options: Path | None = None
        self._imports: dict[Path, int] = {}
        self._import_tried: dict[tuple[Path, frozenset[str]], int | None] = {}
        """The import stamp of a project right after the pool last imported a set of its assets."""
        self._trusted_imports: set[Path] = set()
        """Projects the pool has imported (or tried to) as the editor does, scripts allowed."""
        self._tried_asset: dict[tuple[Path, str], tuple[int, int] | None] = {}
        """Each asset (res:// path) the pool imported or was refused, with its source's stamp then."""
        self.journals: dict[Path, Journal] = {}
        """The journal of the atomic batch being served on a project (gdres/serving/journal.py)."""
        self.import_time = 0.0
        """Seconds the pool's thread has spent in imports, reading no reply meanwhile: a deadline in
        flight is pushed back by what of it passed since that deadline's clock started."""

    def found_engine(self) -> engines.Engine:
        """Return the Godot binary in use, found and version-checked once."""
        if self._engine is None:
            self._engine = engines.probe(engines.find_godot(self.settings.godot))
        return self._engine

    def importer_options(self) -> Path:
        """Return the folder of the options each importer of the engine declares (built on first use)."""
        if self._options is None:
            self._options = imports.importer_options(self.found_engine())
        return self._options

    def pack(self, flavour: str = "safe") -> Path:
        """Return the settings pack workers start with (built on first use, see godot.settings_pack):
        "trusted" for the engines that serve allow_scripts requests, "safe" for all others."""
        if flavour not in self._packs:
            self._packs[flavour] = engines.settings_pack(self.found_engine(), flavour)
        return self._packs[flavour]

    def new_worker(self, root: Path, *, trusted: bool = False) -> Worker:
        """Return a launched worker for `root` (`trusted`: for an allow_scripts request)."""
        if self._argv_for is not None:
            argv_for = self._argv_for

            def argv(token: str) -> Sequence[str]:
                return argv_for(root, token)
        else:
            engine, pack = self.found_engine(), self.pack("trusted" if trusted else "safe")
            # The importers' options (import_read, import_update): made by the bridge's own editor run.
            options = imports.importers_root()
            options.mkdir(parents=True, exist_ok=True)
            # Decided once: the wall lets the worker read the folder of the scripts it is told to run.
            scripts = engines.worker_scripts(engine)
            reads = [*map(Path, wall.SYSTEM_READ), *wall.engine_reads(engine.path), scripts, pack, options]

            # The engines of an atomic batch note each change in its journal before they make it:
            # they may write that one file (not its folder: no link or file can be made there).
            writes = [root, *([self.journals[root].path] if root in self.journals else [])]

            def argv(token: str) -> Sequence[str]:
                return wall.argv(engines.worker_argv(engine, root, token, pack=pack, scripts=scripts,
                                                     trusted=trusted), read=reads, write=writes)
        settings = self.settings
        worker = Worker(argv, verbose=settings.verbose, start_timeout=settings.start_timeout,
                        max_requests=settings.max_requests, max_rss=settings.max_rss, inbox=self._inbox)
        worker.launch()
        if root in self.journals and worker.pid is not None:
            self.journals[root].engine_started(worker.pid)
        return worker

    def imports(self, root: Path) -> int:
        """Return how many times the pool has imported `root` (workers started before are stale)."""
        return self._imports.get(root, 0)

    def trusted_import(self, root: Path) -> None:
        """Before an allow_scripts request is served on `root`, import it as the editor does, its
        scripts allowed, when no editor has opened it (gdres/serving/imports.py trusted_import):
        its script classes are unknown until then, and a resource whose script names another's class
        would read as if it had no script. Only for a project that has named classes or GDExtensions
        (else the editor would make nothing a script needs); once per pool; a failure is logged, and
        the request is served with what the project has."""
        if not self.settings.auto_import or root in self._trusted_imports or (root / imports.CLASS_CACHE).exists():
            return
        self._trusted_imports.add(root)
        if not imports.needs_editor_tables(root):
            return
        started = time.monotonic()
        log.warning("gdres: importing %s as the Godot editor does, its scripts allowed (allow_scripts; once): "
                    "no editor has opened it, so its script classes are not known yet", root)
        self._inbox.flush()
        failure = imports.trusted_import(self.found_engine(), root, max(self.settings.timeout, imports.IMPORT_TIMEOUT),
                                         lambda done, total: None)
        self.import_time += time.monotonic() - started
        if failure is not None:
            log.warning("gdres: the import of %s with its scripts failed: %s", root, failure)
            return
        self._imports[root] = self.imports(root) + 1
        log.warning("gdres: imported %s with its scripts in %.1f s", root, time.monotonic() - started)

    def import_for(self, root: Path, seen: int, stamp: int | None,
                   assets: Sequence[str] = EVERY_ASSET) -> tuple[bool, str | None]:
        """Import `assets` of `root` (res:// paths the engine named, or all of them) for a worker that
        answered not_imported, started after `seen` imports of the pool's and at import stamp `stamp`
        (gdres/serving/imports.py); not again when the pool's own last import of the same assets
        left the stamp as it is (it did not help, and would not again).

        Return whether to serve the request again, and why the assets were not all imported (None
        if they were).
        """
        if self.imports(root) > seen:
            return True, None
        if not self.settings.auto_import:
            return False, ("the project's assets are not imported and --no-import (auto_import=False) keeps the "
                           "bridge from importing them: run without it, or run `gdres import` once")
        if assets != EVERY_ASSET and all(self._tried_asset.get((root, path)) == _source_stamp(root, path)
                                         for path in assets):
            # Each was imported (or refused) by this pool and has not changed since: the engine still
            # finds it stale (a .import without dest_files, say), and another import would not help.
            return False, None
        if self.imports(root) >= IMPORTS_BEFORE_ALL:
            # Requests keep meeting assets that are not imported (a batch over a fresh clone): each
            # import starts an editor (~2 s), so the rest of the project's are imported at once.
            assets = EVERY_ASSET
        tried = (root, frozenset(assets))
        if self._import_tried.get(tried, -1) == imports.stamp(root):
            return False, None
        started = time.monotonic()
        shown = (self.settings.import_shown or LoggedImport)(root)
        which = "" if assets == EVERY_ASSET else " that the request needs"
        # The import blocks the pool's thread, which hands requests to the engines and reads their
        # replies: the engines get what was sent first, and serve it meanwhile.
        self._inbox.flush()
        imported = False
        try:
            journal = self.journals.get(root)
            outcome = imports.import_project(self.found_engine(), root, self.pack(),
                                             max(self.settings.timeout, imports.IMPORT_TIMEOUT), stamp,
                                             lambda named: shown.start(named, which), shown.update, assets,
                                             journal.note_rewrite if journal is not None else None)
            imported = bool(outcome.imported)
        finally:
            self.import_time += time.monotonic() - started
            shown.close(imported=imported)
        self._import_tried[tried] = imports.stamp(root)
        for path in [*outcome.imported, *outcome.refused]:
            self._tried_asset[(root, path)] = _source_stamp(root, path)
        if outcome.imported:
            self._imports[root] = self.imports(root) + 1
        why = outcome.why_not()
        return why is None, why


def check_engine(godot: str | None) -> None:
    """Raise the BridgeError every request would get for want of a usable Godot (`godot` or found)."""
    engines.probe(engines.find_godot(godot))


def wall_status() -> tuple[bool, str]:
    """Whether the wall engines run behind is up on this system, and what it is."""
    return wall.status()


def import_everything(godot: str | None, root: Path, timeout: float, shown: ImportShown) -> imports.Outcome:
    """Import every asset of project `root` (a real path) not imported yet, behind the wall, as a
    request's import does; raise the BridgeError of a Godot that is missing or unusable."""
    cache_outside(str(root))
    engine = engines.probe(engines.find_godot(godot))
    outcome = imports.import_project(engine, root, engines.settings_pack(engine), max(timeout, imports.IMPORT_TIMEOUT),
                                     imports.stamp(root), lambda assets: shown.start(assets, ""), shown.update)
    shown.close(imported=bool(outcome.imported))
    return outcome


class ImportShown(Protocol):
    """How an import of a project's assets is shown as it runs."""

    def start(self, assets: Sequence[str], why: str) -> None:
        """The import of `assets` (res:// paths) begins; `why`: "" (every asset not imported yet) or
        " that the request needs"."""

    def update(self, done: int, total: int) -> None:
        """`done` of the `total` assets are imported (the same total start() was told)."""

    def close(self, *, imported: bool) -> None:
        """The import ended, once; `imported`: it imported assets (else it failed, or had none to import)."""


class LoggedImport:
    """An import shown as log lines (a CI log, the Python API): what is imported and why, at once; a
    progress line (`importing: 120 of 204 assets, 6 s`) every IMPORT_PROGRESS_EVERY seconds and when
    the last asset is imported; and the time it took."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.started = self.shown = time.monotonic()

    def start(self, assets: Sequence[str], why: str) -> None:
        listed = ", ".join(path.removeprefix("res://") for path in assets[:3])
        more = f" and {len(assets) - 3} more" if len(assets) > 3 else ""
        log.warning("gdres: importing the assets of %s%s (%d, once): %s%s", self.root, why, len(assets), listed, more)

    def update(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self.shown >= IMPORT_PROGRESS_EVERY or done == total:
            self.shown = now
            log.warning("gdres: importing: %d of %d assets, %.0f s", done, total, now - self.started)

    def close(self, *, imported: bool) -> None:
        if imported:
            log.warning("gdres: imported the assets of %s in %.1f s", self.root, time.monotonic() - self.started)


def _source_stamp(root: Path, asset: str) -> tuple[int, int] | None:
    """When the source of `asset` (a res:// path) and its .import last changed, or None."""
    try:
        source, settings = (root / asset.removeprefix("res://")), (root / f"{asset.removeprefix('res://')}.import")
        return source.stat().st_mtime_ns, settings.stat().st_mtime_ns if settings.exists() else 0
    except OSError:
        return None
