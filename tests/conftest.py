"""Shared fixtures: the real Godot binary, a fresh copy of the fixture project, a Bridge, the CLI."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from gdres import Bridge
from gdres.engine.godot import find_godot
from gdres.errors import EngineNotFound
from opened import Watched

pytest_plugins = ["fake_windows"]

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).parent.parent
FAKE = Path(__file__).parent / "fake_engine.py"


ENGINE_FIXTURES = {"godot_bin"}
"""Asking for one of these (directly or through another fixture) puts a test in the engine tier."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put every test in one tier: `engine` when it runs the real Godot (it asks for godot_bin, or
    says so), else `unit`. A test marked unit that asks for Godot, one in both tiers, and one in the
    folder of the other tier (tests/unit, tests/engine) are errors, not quiet moves."""
    for item in items:
        needs_godot = bool(ENGINE_FIXTURES & set(getattr(item, "fixturenames", ())))
        if item.get_closest_marker("unit") is not None and needs_godot:
            raise pytest.UsageError(f"{item.nodeid} is marked unit but asks for Godot")
        if item.get_closest_marker("unit") is not None and item.get_closest_marker("engine") is not None:
            raise pytest.UsageError(f"{item.nodeid} is in both tiers (marked unit, and engine by its module)")
        if item.get_closest_marker("engine") is None and item.get_closest_marker("unit") is None:
            item.add_marker(pytest.mark.engine if needs_godot else pytest.mark.unit)
        tier = "engine" if item.get_closest_marker("engine") is not None else "unit"
        if item.path.parent.name != tier:
            raise pytest.UsageError(f"{item.nodeid} is in the {tier} tier: its place is tests/{tier}/")


@pytest.fixture(scope="session", autouse=True)
def _own_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The run's own cache folder (settings packs, version probes, warm hosts), not the user's: a test
    that starts Godot through a path of its own (a copy, a link) would leave a settings pack for that
    path in ~/.cache/gdres on every run. A test that needs a cache of its own sets its own."""
    with pytest.MonkeyPatch.context() as session:
        session.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
        yield


@pytest.fixture(scope="session")
def godot_bin() -> str:
    """The Godot binary under test. Missing Godot fails the run: engine tests are never skipped.
    Its binary tokens of the bridge's scripts are made in the run's cache, as `gdres doctor` makes
    them: workers run those (a test with a cache of its own runs the sources)."""
    try:
        found = find_godot()
    except EngineNotFound as exc:
        pytest.fail(f"engine tests need Godot (run scripts/test.sh, or set GODOT_BIN): {exc}")
    from gdres.engine import godot as engines

    engines.compile_scripts(engines.probe(found))
    return found


def fresh_clone(template: Path, tmp_path: Path) -> Path:
    """A copy of a project kept the way git keeps it (no .godot/), for one test."""
    target = tmp_path / "clone"
    shutil.copytree(template, target)
    assert not (target / ".godot").exists()
    return target


def git(project: Path, *args: str) -> str:
    """Run git in `project`; its output."""
    return subprocess.run(["git", *args], cwd=project, check=True, capture_output=True, text=True).stdout


def in_git(project: Path) -> Path:
    """The project as a user keeps it: committed, .godot/ ignored."""
    (project / ".gitignore").write_text(".godot/\n")
    git(project, "init", "-q")
    git(project, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
    return project


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    """A fresh clone of the official demo (dodge_the_creeps), in git."""
    return in_git(fresh_clone(FIXTURES / "demos" / "dodge_the_creeps", tmp_path))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A fresh copy of tests/fixtures/project."""
    target = tmp_path / "project"
    shutil.copytree(FIXTURES / "project", target)
    return target


@pytest.fixture
def bridge(godot_bin: str) -> Iterator[Bridge]:
    with Bridge(godot_bin, timeout=60) as b:
        yield b


@pytest.fixture
def fake_godot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """An executable that the bridge takes for Godot: the fake engine."""
    wrapper = tmp_path / "bin" / "godot"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    # The fake engine runs from the test's virtual environment and writes its records in tmp_path:
    # outside what the wall lets an engine open (gdres/engine/wall.py).
    monkeypatch.setenv("GDRES_WALL", "off")
    monkeypatch.setenv("FAKE_ENGINE_LOG", str(tmp_path / "received.jsonl"))
    monkeypatch.delenv("FAKE_ENGINE_START", raising=False)
    return str(wrapper)


@pytest.fixture(scope="module")
def module_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of tests/fixtures/project shared by one test module (for many cheap cases)."""
    target = tmp_path_factory.mktemp("module") / "project"
    shutil.copytree(FIXTURES / "project", target)
    return target


@pytest.fixture(scope="module")
def module_bridge(godot_bin: str) -> Iterator[Bridge]:
    """One Bridge, so one warm engine, for a whole test module."""
    with Bridge(godot_bin, timeout=60) as b:
        yield b


def file_uid(path: Path) -> str:
    """The uid:// a text resource's header gives it (what the editor reads), or "" when it has none."""
    header = path.read_text(encoding="utf-8").split("\n", 1)[0]
    found = re.search(r' uid="(uid://[a-z0-9]+)"', header)
    return found.group(1) if found else ""


def file_etag(path: Path) -> str:
    """The etag a reply gives of the file at `path`: the sha256 of its bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def mask_drawn(text: str) -> str:
    """`text` with each uid:// left bare, and each etag: a new file's uid is drawn at random, as the
    editor draws it, and an etag is the hash of a file that may hold one, so that two runs of one batch
    differ there only."""
    return re.sub(r'"etag":"[0-9a-f]{64}"', '"etag":""', re.sub(r"uid://[a-z0-9]+", "uid://", text))


def snapshot(root: Path) -> dict[str, str]:
    """Every file under `root` (relative path -> sha256), to show a request changed nothing."""
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() or p.is_symlink()
    }


def engine_processes() -> list[psutil.Process]:
    """The engine workers this test process has started and not yet reaped."""
    found = []
    for child in psutil.Process().children():
        try:
            if "main.gd" in " ".join(child.cmdline()):
                found.append(child)
        except psutil.Error:
            pass  # dead already (a zombie until its bridge reaps it)
    return found


def cmdline(process: psutil.Process) -> list[str]:
    """A process's command line, or [] for one that has ended (a zombie's is unreadable too): a
    process seen a moment ago may be gone by now, on a busy machine above all."""
    try:
        return process.cmdline()
    except psutil.Error:
        return []


def running(pid: int) -> bool:
    """Whether process `pid` runs: exists and is no zombie (one that ended between two looks is not)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def wait_for(condition: Callable[[], bool], timeout: float, what: str) -> None:
    """Wait until `condition()` holds (polling every 20 ms), or fail saying `what` did not happen."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not happen within {timeout} s")
        time.sleep(0.02)


def changed_scripts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, relative: str,
                    change: Callable[[str], str]) -> Path:
    """Engines started from now on run a copy of the bridge's GDScript in which `relative`'s text is
    `change`d; return the copy's folder."""
    from gdres.engine import godot as engines
    from gdres.scripts import gdscript_dir
    from gdres.serving import imports

    copy = tmp_path / "changed-gdscript"
    shutil.copytree(gdscript_dir(), copy)
    changed = change((copy / relative).read_text())
    assert changed != (copy / relative).read_text(), f"the change left {relative} as it was"
    (copy / relative).write_text(changed)
    for user in (engines, imports):  # the engine's command line and wall, the import's
        monkeypatch.setattr(user, "gdscript_dir", lambda: copy)
    return copy


def broken_scripts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, relative: str) -> Path:
    """Engines started from now on run a copy of the bridge's GDScript in which `relative` does not
    compile (a broken or half-upgraded install); return the copy's folder."""
    return changed_scripts(tmp_path, monkeypatch, relative, lambda _: "extends RefCounted\nthis is not GDScript\n")


def run_cli(*args: str, input: bytes | str | None = None, godot: str | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run `python -m gdres ARGS` and capture its output as text."""
    env = dict(os.environ)
    if godot is not None:
        env["GODOT_BIN"] = godot
    data = input.encode() if isinstance(input, str) else input
    done = subprocess.run([sys.executable, "-m", "gdres", *args], input=data, capture_output=True,
                          env=env, timeout=timeout, cwd=REPO)
    return subprocess.CompletedProcess(done.args, done.returncode,
                                       done.stdout.decode("utf-8", "replace"),
                                       done.stderr.decode("utf-8", "replace"))


def engine_confine(godot_bin: str, root: Path, texts: list[str], work: Path) -> list[dict[str, str]]:
    """What the engine's confine() answers for each of `texts` in the project at `root` (as a property value
    naming a file): {"code", "message", "res", "real"} each (tests/gdscript/paths_check.gd)."""
    script = REPO / "tests" / "gdscript" / "paths_check.gd"
    request = work / "paths.json"
    request.write_text(json.dumps({"root": str(root), "paths": texts}))
    done = subprocess.run([godot_bin, "--headless", "-s", str(script), "--", str(REPO), str(request)],
                          capture_output=True, timeout=120, cwd=work)
    output = done.stdout.decode("utf-8", "replace") + done.stderr.decode("utf-8", "replace")
    assert "SCRIPT ERROR" not in output, output[output.find("SCRIPT ERROR"):][:2000]
    lines = done.stdout.decode().splitlines()
    assert lines and lines[-1] == "DONE", output[-2000:]
    # strict=False: the engine's JSON.stringify leaves control characters in a message unescaped.
    answers = [json.loads(line, strict=False) for line in lines if line.startswith("{")]
    assert len(answers) == len(texts)
    return answers


@pytest.fixture
def watched(tmp_path: Path, godot_bin: str) -> Iterator[Watched]:
    """A project, bait beside it, and a Bridge whose engines run under strace (tests/opened.py)."""
    w = Watched(tmp_path, godot_bin)
    try:
        yield w
    finally:
        w.bridge.close()


@pytest.fixture
def ctrl_c() -> Iterator[None]:
    """SIGINT raising KeyboardInterrupt here and taking its default action in the commands started
    meanwhile, as in a terminal, whatever this process inherited: a shell starts what it runs in its
    background with SIGINT ignored, and an ignored signal stays ignored across exec."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.fixture
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache of the test's own: versions are cached per binary, and each test asks its stand-ins afresh."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home folder for a test that looks for Godot where its installers put it."""
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


@pytest.fixture
def bin_dir(tmp_path: Path) -> Path:
    """A folder to put on PATH."""
    (tmp_path / "bin").mkdir()
    return tmp_path / "bin"


PATH_TABLE_MATERIAL = '[gd_resource type="StandardMaterial3D" format=3]\n\n[resource]\nresource_name = "%s"\n'
"""A material named by its %s (tests/unit and tests/engine test_path_table.py)."""


@pytest.fixture(scope="module")
def walled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project holding mat.tres and the links the rows name, with a secret beside it."""
    base = tmp_path_factory.mktemp("table")
    outside = base / "outside"
    outside.mkdir()
    (outside / "secret.tres").write_text(PATH_TABLE_MATERIAL % "SECRET-OUTSIDE")
    project = base / "project"
    (project / ".godot").mkdir(parents=True)
    (project / "project.godot").write_text("config_version=5\n")
    (project / ".godot" / "x.tres").write_text(PATH_TABLE_MATERIAL % "SECRET-IN-DOT-GODOT")
    (project / "mat.tres").write_text(PATH_TABLE_MATERIAL % "mat")
    (project / "other.tres").write_text(PATH_TABLE_MATERIAL % "other")
    links = {
        "in_link.tres": "mat.tres", "self": ".", "out_link.tres": str(outside / "secret.tres"),
        "out_dir": str(outside), "loop.tres": "loop.tres", "godot_link.tres": ".godot/x.tres",
        "godot_dir": ".godot", "godot_abs": str(project / ".godot"), "project_link.tres": "project.godot",
    }
    for name, target in links.items():
        (project / name).symlink_to(target)
    return project
