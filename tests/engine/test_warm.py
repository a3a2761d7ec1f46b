"""`run --warm` and warm_run(): one host process per project keeps its engine up across commands.

Each test has a cache folder of its own (XDG_CACHE_HOME, in /tmp), so its hosts are its own; every host a
test started is stopped when it ends."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from conftest import REPO, cmdline, run_cli, running, snapshot
from engine.test_imports import IMPORTING, png

MATERIAL = {"op": "material_create", "material_type": "StandardMaterial3D",
            "properties": {"roughness": 0.25, "albedo_color": "#336699"}}


def material(project: Path | str, path: str = "materials/warm.tres") -> str:
    return json.dumps({**MATERIAL, "project_path": str(project), "resource_path": path})


def is_host(argv: list[str]) -> bool:
    """Whether `argv` is a warm host's (started by front/warm.py: `python -c "...warm_host..."`)."""
    return any("gdres.front.warm_host" in part for part in argv)


def hosts(cache: Path) -> list[psutil.Process]:
    """The warm hosts whose sockets are in `cache` (this test's): each runs from its sockets' folder."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        try:
            if is_host(process.info["cmdline"] or []) and str(cache) in process.cwd():
                found.append(process)
        except psutil.Error:
            pass  # gone meanwhile
    return found


def engines_of(host: psutil.Process) -> list[int]:
    """The pids of the engines a host serves with (whatever the wall puts in between)."""
    return sorted(p.pid for p in host.children(recursive=True) if "main.gd" in " ".join(cmdline(p)))


@pytest.fixture
def cache(monkeypatch: pytest.MonkeyPatch, godot_bin: str) -> Iterator[Path]:
    # Short: a Unix socket's address is at most ~100 bytes, and tmp_path is longer.
    folder = Path(tempfile.mkdtemp(prefix="gbw"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("GODOT_BIN", godot_bin)
    yield folder
    for host in hosts(folder):
        for process in [*host.children(recursive=True), host]:
            with contextlib.suppress(psutil.Error):
                process.kill()
    shutil.rmtree(folder, ignore_errors=True)


def warm(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    if cwd == REPO:
        return run_cli("run", "--warm", *args)
    done = subprocess.run([sys.executable, "-m", "gdres", "run", "--warm", *args], capture_output=True,
                          text=True, timeout=120, cwd=cwd, env={**os.environ, "PYTHONPATH": str(REPO)})
    return done


def test_a_warm_run_loads_only_the_command_line_and_a_socket(project: Path, cache: Path) -> None:
    """A warm run's own process loads none of the request models, the serving machinery or the
    engine's modules, nor typing and pathlib (~10 ms of a warm run's ~60): the host has them."""
    assert warm(material(project)).returncode == 0  # the host is up
    code = ("import sys; from gdres.front.cli import main; status = main(['run', '--warm', sys.argv[1]]); "
            "sys.stderr.write(' '.join(sys.modules)); sys.exit(status)")
    done = subprocess.run([sys.executable, "-c", code, material(project, "materials/second.tres")],
                          capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "ok"
    assert (project / "materials" / "second.tres").is_file()
    loaded = set(done.stderr.split())
    assert loaded.isdisjoint({"typing", "pathlib", "subprocess", "pydantic", "filelock", "gdres.front.api",
                              "gdres.requests.models", "gdres.serving.pool",
                              "gdres.engine.worker"}), loaded


def test_second_run_is_served_by_the_first_runs_engine(project: Path, cache: Path) -> None:
    first = warm(material(project))
    assert first.returncode == 0, first.stderr
    (host,) = hosts(cache)
    engines = engines_of(host)
    assert len(engines) == 1
    second = warm(material(project, "materials/warm2.tres"))
    assert second.returncode == 0, second.stderr
    assert hosts(cache) == [host] and engines_of(host) == engines
    reply = json.loads(second.stdout)
    assert reply["result"] == "ok" and reply["resource_path"] == "materials/warm2.tres"
    text = (project / "materials/warm2.tres").read_text()
    assert "roughness = 0.25" in text and reply["uid"] in text


def test_a_warm_reply_is_the_cold_reply(project: Path, cache: Path, tmp_path: Path) -> None:
    """The host serves a request as `run` does: the same reply, the same error replies, the same exit status."""
    requests = [
        material(project),
        json.dumps({"op": "resource_read", "project_path": str(project), "resource_path": "materials/warm.tres"}),
        json.dumps({"op": "resource_read", "project_path": str(project), "resource_path": "missing.tres"}),
        json.dumps({**MATERIAL, "project_path": str(project), "resource_path": "m.tres",
                    "properties": {"no_such_property": 1}}),
    ]
    for request in requests:
        cold, hot = run_cli("run", request), warm(request)
        assert (hot.returncode, json.loads(hot.stdout)) == (cold.returncode, json.loads(cold.stdout)), request
    # Not a request, and a project that is not one: served cold, with the cold error reply.
    for request in ["{not json", json.dumps({**MATERIAL, "project_path": str(tmp_path), "resource_path": "m.tres"})]:
        cold, hot = run_cli("run", request), warm(request)
        assert hot.returncode == cold.returncode == 1
        assert json.loads(hot.stdout) == json.loads(cold.stdout)
    assert len(hosts(cache)) == 1


def test_a_relative_project_path_is_taken_from_the_callers_folder(project: Path, cache: Path) -> None:
    (project / "sub").mkdir()
    done = warm(material("..", "materials/from_sub.tres"), cwd=project / "sub")
    assert done.returncode == 0, done.stderr
    done = warm(material(".", "materials/from_root.tres"), cwd=project)
    assert done.returncode == 0, done.stderr
    assert (project / "materials/from_sub.tres").is_file() and (project / "materials/from_root.tres").is_file()
    assert len(hosts(cache)) == 1


def test_each_project_and_each_setting_has_its_own_host(project: Path, cache: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "project.godot").write_text("config_version=5\n")
    assert warm(material(project)).returncode == 0
    assert warm(material(other)).returncode == 0
    assert run_cli("--timeout", "30", "run", "--warm", material(project)).returncode == 0
    monkeypatch.setenv("GDRES_WALL", "off")
    assert warm(material(project)).returncode == 0
    assert len(hosts(cache)) == 4
    assert (other / "materials/warm.tres").is_file()


def test_the_host_ends_once_idle_and_leaves_nothing(project: Path, cache: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GDRES_WARM_IDLE", "1")
    assert warm(material(project)).returncode == 0
    (host,) = hosts(cache)
    engines = engines_of(host)
    host.wait(timeout=20)
    assert not any(running(pid) for pid in engines)
    assert not list((cache / "gdres" / "hosts").glob("*.sock"))
    assert not list((cache / "gdres" / "hosts").glob("*.log"))


def test_a_killed_host_is_replaced(project: Path, cache: Path) -> None:
    assert warm(material(project)).returncode == 0
    (host,) = hosts(cache)
    for process in [*host.children(recursive=True), host]:
        process.send_signal(signal.SIGKILL)
    host.wait(timeout=10)
    assert list((cache / "gdres" / "hosts").glob("*.sock")), "the dead host's socket stays behind"
    done = warm(material(project, "materials/again.tres"))
    assert done.returncode == 0, done.stderr
    assert (project / "materials/again.tres").is_file()
    (new,) = hosts(cache)
    assert new.pid != host.pid


def test_no_host_in_a_folder_others_may_open_or_change(project: Path, cache: Path) -> None:
    folder = cache / "gdres" / "hosts"
    folder.mkdir(parents=True)
    folder.chmod(0o755)
    done = warm(material(project))
    assert done.returncode == 0 and json.loads(done.stdout)["result"] == "ok"
    assert "not a folder only you can open" in done.stderr
    assert hosts(cache) == [] and list(folder.iterdir()) == []
    # A folder above it that others may write in: they could put another folder in its place.
    folder.chmod(0o700)
    (cache / "gdres").chmod(0o777)
    done = warm(material(project))
    assert done.returncode == 0 and json.loads(done.stdout)["result"] == "ok"
    assert "is a folder another user may change" in done.stderr
    assert hosts(cache) == [] and list(folder.iterdir()) == []


def test_the_socket_is_only_its_users(project: Path, cache: Path) -> None:
    assert warm(material(project)).returncode == 0
    folder = cache / "gdres" / "hosts"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    (address,) = folder.glob("*.sock")
    assert stat.S_IMODE(address.stat().st_mode) & 0o077 == 0
    if os.getuid() == 0:
        # Another user cannot reach it: nobody (65534) is refused at the folder.
        child = os.fork()
        if child == 0:
            os.setuid(65534)
            try:
                socket.socket(socket.AF_UNIX).connect(str(address))
            except PermissionError:
                os._exit(3)
            os._exit(0)
        assert os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]) == 3


def test_a_host_answers_only_requests_with_its_settings(project: Path, cache: Path) -> None:
    assert warm(material(project)).returncode == 0
    (address,) = (cache / "gdres" / "hosts").glob("*.sock")
    before = snapshot(project)
    assert ask(address, {"key": "another", "cwd": str(project), "request": material(project, "sneaked.tres")}) \
        == {"host": "other"}
    assert snapshot(project) == before


def test_a_host_serves_its_own_project_only(project: Path, cache: Path, tmp_path: Path) -> None:
    """A message with the host's key (so from this user, with its settings) naming another project is
    not served there; the same message naming the host's project is."""
    from gdres.front import warm as warm_module

    assert warm(material(project)).returncode == 0
    (address,) = (cache / "gdres" / "hosts").glob("*.sock")
    (host,) = hosts(cache)
    assert not any(str(cache) in part or "PATH" in part for part in host.cmdline())  # no settings in `ps`
    key = json.dumps(warm_module._settings(str(project.resolve()), None, 60.0, True, str(REPO)), sort_keys=True)
    token = address.with_suffix(".token").read_text()
    other = tmp_path / "other"
    other.mkdir()
    (other / "project.godot").write_text("config_version=5\n")
    mine = material(project, "materials/by_key.tres")
    assert ask(address, {"key": key, "token": token, "cwd": str(REPO), "request": material(other)}) == {"host": "other"}
    assert not (other / "materials").exists()
    # Without the secret beside the socket (which an engine behind the wall cannot read), nothing either.
    for wrong in ({}, {"token": "0" * 64}):
        assert ask(address, {"key": key, **wrong, "cwd": str(REPO), "request": mine}) == {"host": "other"}
    assert not (project / "materials/by_key.tres").exists()
    served = ask(address, {"key": key, "token": token, "cwd": str(REPO), "request": mine})
    assert served["result"] == "ok" and (project / "materials/by_key.tres").is_file()
    assert stat.S_IMODE(address.with_suffix(".token").stat().st_mode) == 0o600


def ask(address: Path, message: dict[str, object]) -> dict[str, object]:
    """The host's answer to `message`: its last line (a line saying it took the request may come first)."""
    with socket.socket(socket.AF_UNIX) as connection:
        connection.connect(str(address))
        connection.sendall(json.dumps(message).encode())
        connection.shutdown(socket.SHUT_WR)
        with connection.makefile("rb") as lines:
            answer: dict[str, object] = json.loads(lines.read().splitlines()[-1])
    return answer


def test_no_python_file_of_the_project_runs_in_the_host(project: Path, cache: Path) -> None:
    """The host is a Python process: a module in the project named like one it imports must not be
    imported in its place (`python -m` puts the folder it starts in first on sys.path)."""
    for module in ("socket", "json", "zlib", "pydantic", "filelock", "logging", "gdres"):
        marker = project / f"ran_{module}"
        code = f"open({str(marker)!r}, 'w').close()\n"
        if module == "gdres":
            (project / module).mkdir()
            (project / module / "__init__.py").write_text(code)
        else:
            (project / f"{module}.py").write_text(code)
    done = warm(material(project))
    assert done.returncode == 0, done.stderr
    done = warm(json.dumps({"op": "resource_read", "project_path": str(project),
                            "resource_path": "materials/warm.tres"}))
    assert done.returncode == 0, done.stderr
    assert not list(project.glob("ran_*"))


def test_new_files_get_the_same_permissions_as_a_cold_run(project: Path, cache: Path) -> None:
    assert run_cli("run", material(project, "cold/made.tres")).returncode == 0
    assert warm(material(project, "warm/made.tres")).returncode == 0
    assert warm(material(project, "warm/again.tres")).returncode == 0
    mode = stat.S_IMODE
    assert mode((project / "warm").stat().st_mode) == mode((project / "cold").stat().st_mode)
    assert mode((project / "warm/again.tres").stat().st_mode) == mode((project / "cold/made.tres").stat().st_mode)


def test_with_no_godot_the_reply_is_the_cold_one(project: Path, cache: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GODOT_BIN", str(tmp_path / "no" / "godot"))
    cold, hot = run_cli("run", material(project)), warm(material(project))
    assert json.loads(cold.stdout)["error"]["code"] == "engine_not_found"
    assert (hot.returncode, json.loads(hot.stdout)) == (cold.returncode, json.loads(cold.stdout))
    again = warm(material(project))
    assert json.loads(again.stdout) == json.loads(cold.stdout)


def test_the_runtime_folder_holds_the_sockets_where_there_is_one(project: Path, cache: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    runtime = cache / "runtime"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    assert warm(material(project)).returncode == 0
    assert list((runtime / "gdres").glob("*.sock"))
    assert not (cache / "gdres" / "hosts").exists()


def test_warm_run_in_python_shares_the_clis_host(project: Path, cache: Path) -> None:
    from gdres import warm_run

    assert warm(material(project)).returncode == 0
    (host,) = hosts(cache)
    reply = warm_run(json.loads(material(project, "materials/api.tres")))
    assert reply["result"] == "ok" and (project / "materials/api.tres").is_file()
    assert hosts(cache) == [host]
    # A host this process starts is not its child: no zombie is left here when it ends.
    (project / "sub").mkdir()
    reply = warm_run(material("..", "materials/api2.tres"), relative_to=str(project / "sub"), timeout=30)
    assert reply["result"] == "ok" and (project / "materials/api2.tres").is_file()
    assert not [child for child in psutil.Process().children() if is_host(cmdline(child))]
    reply = warm_run({"op": "resource_read", "project_path": str(project), "resource_path": "materials/api.tres"})
    assert reply["result"] == "ok" and "0.25" in json.dumps(reply)


def test_a_relative_cache_folder_is_ignored_as_xdg_asks(project: Path, cache: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """XDG_CACHE_HOME must be absolute; a relative one is ignored (~/.cache is used), so that what the
    bridge keeps there (hosts, locks, journals, settings packs) is neither written into the folder a
    command runs from nor lost when it runs from another, or from one since removed."""
    home = cache / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", "relative-cache")
    here = tmp_path / "here"
    here.mkdir()
    assert warm(material(project), cwd=here).returncode == 0
    assert list(here.iterdir()) == []
    assert list((home / ".cache" / "gdres" / "hosts").glob("*.sock"))
    gone = tmp_path / "gone"
    gone.mkdir()
    code = ("import os, sys; from gdres import warm_run; os.chdir(sys.argv[2]); os.rmdir(sys.argv[2]); "
            "print(warm_run(sys.argv[1], relative_to=sys.argv[3])['result'])")
    done = subprocess.run([sys.executable, "-c", code, material(project, "materials/gone.tres"), str(gone),
                           str(project)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr
    assert (project / "materials" / "gone.tres").is_file()
    assert len(hosts(cache)) == 1


def test_an_empty_path_entry_does_not_make_the_project_a_place_to_find_godot(
        project: Path, cache: Path, godot_bin: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty PATH entry (a trailing colon) means the current folder to a shell; discovery looks in
    no such folder, so a project's own `godot4` never runs (not even asked its version)."""
    marker = project / "ran_godot4"
    fake = project / "godot4"
    fake.write_text(f"#!/bin/sh\ntouch {marker}\necho 4.6.3.stable\n")
    fake.chmod(0o755)
    monkeypatch.delenv("GODOT_BIN")
    monkeypatch.setenv("PATH", f"{Path(godot_bin).parent}:{os.path.dirname(sys.executable)}:/usr/bin:/bin:")
    done = warm(material(".", "materials/path.tres"), cwd=project)
    assert done.returncode == 0, done.stderr
    assert hosts(cache) and not marker.exists()


def test_a_shared_umask_still_makes_private_folders(project: Path, cache: Path) -> None:
    old = os.umask(0o002)
    try:
        done = warm(material(project))
    finally:
        os.umask(old)
    assert done.returncode == 0 and "served without a warm host" not in done.stderr, done.stderr
    assert stat.S_IMODE((cache / "gdres").stat().st_mode) == 0o700
    assert hosts(cache)


def test_sigterm_ends_the_host_and_its_engine(project: Path, cache: Path) -> None:
    assert warm(material(project)).returncode == 0
    (host,) = hosts(cache)
    engines = engines_of(host)
    host.terminate()
    host.wait(timeout=20)
    assert not list((cache / "gdres" / "hosts").glob("*.sock"))
    assert not list((cache / "gdres" / "hosts").glob("*.token"))
    assert not any(running(pid) for pid in engines)


def textured(project: Path, path: str = "ui/panel.tres") -> str:
    """A request that needs the project's icons/red.png imported (written here, never imported)."""
    (project / "icons").mkdir(exist_ok=True)
    (project / "icons" / "red.png").write_bytes(png())
    return json.dumps({"op": "style_box_create", "project_path": str(project), "style_type": "StyleBoxTexture",
                       "resource_path": path, "properties": {"texture": "icons/red.png"}})


@pytest.mark.timeout(180)
def test_what_the_bridge_says_while_serving_a_warm_run_reaches_that_runs_stderr(project: Path, cache: Path) -> None:
    """The import a request needs is announced and timed on the run's stderr, as a cold run does it,
    not only in the host's log; nothing of it reaches stdout, which holds the reply alone."""
    assert warm(material(project)).returncode == 0  # the host is up; the project is not imported
    done = warm(textured(project))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "ok"
    assert done.stderr.count(f"{IMPORTING} {project}") == 1, done.stderr
    assert f"gdres: imported the assets of {project} in " in done.stderr
    again = warm(json.dumps({**json.loads(textured(project)), "resource_path": "ui/again.tres"}))
    assert again.returncode == 0 and IMPORTING not in again.stderr


@pytest.mark.timeout(180)
def test_warm_run_in_python_logs_what_the_bridge_says_while_serving_it(
    project: Path, cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from gdres import warm_run

    assert warm_run(json.loads(material(project)))["result"] == "ok"
    caplog.clear()
    assert warm_run(textured(project))["result"] == "ok"
    messages = [record.getMessage() for record in caplog.records if record.name == "gdres"]
    announced = f"{IMPORTING} {project} that the request needs (1, once): icons/red.png"
    assert [m for m in messages if m.startswith(IMPORTING)] == [announced]


@pytest.mark.timeout(180)
def test_warm_run_says_nothing_where_its_user_configured_no_logging(project: Path, cache: Path) -> None:
    """A library stays quiet unless its user configures logging: warm_run() as a cold Bridge is."""
    assert warm(material(project)).returncode == 0
    code = f"from gdres import warm_run; print(warm_run({textured(project)!r})['result'])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert (done.returncode, done.stdout, done.stderr) == (0, "ok\n", "")


@pytest.mark.timeout(240)
def test_a_run_the_host_never_took_is_served_cold_when_the_host_ends(project: Path, cache: Path) -> None:
    """A run waiting behind another when its host is ended was never taken: it is served as a plain
    run, not answered engine_crashed. The run the host was serving may have been served: it is."""
    assert warm(material(project)).returncode == 0
    (host,) = hosts(cache)
    for i in range(30):  # an import long enough to stop the host in the middle of
        (project / "icons").mkdir(exist_ok=True)
        (project / "icons" / f"tile_{i}.png").write_bytes(png(64, 64))
    argv = [sys.executable, "-m", "gdres", "run", "--warm"]  # as warm() runs it: the same host
    busy = subprocess.Popen([*argv, textured(project)], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    assert busy.stderr is not None
    assert busy.stderr.readline().startswith(IMPORTING)  # the host is serving it
    waiting = subprocess.Popen([*argv, material(project, "materials/queued.tres")], cwd=REPO,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not [c for c in psutil.net_connections("unix") if c.pid == waiting.pid] and time.monotonic() < deadline:
        time.sleep(0.05)  # until the waiting run has connected
    host.terminate()
    out, err = waiting.communicate(timeout=180)
    assert waiting.returncode == 0, (out, err)
    assert json.loads(out)["result"] == "ok" and (project / "materials/queued.tres").is_file()
    busy_out, _ = busy.communicate(timeout=60)
    assert json.loads(busy_out)["error"]["code"] == "engine_crashed"


def test_a_request_that_is_not_utf8_is_served_cold_and_starts_no_host(project: Path, cache: Path) -> None:
    """Text the host could not be sent (a name from the system in another encoding) is served by the run
    itself, with the cold reply, and without starting a host it will not use."""
    # The byte 0xE9 on the command line, as the run reads it (not a JSON escape, which is UTF-8).
    request = json.dumps({**MATERIAL, "project_path": str(project), "resource_path": "materials/caf\udce9.tres"},
                         ensure_ascii=False)
    cold, hot = run_cli("run", request), warm(request)
    assert hot.returncode == cold.returncode and json.loads(hot.stdout) == json.loads(cold.stdout)
    assert hosts(cache) == [] and "warm host" not in hot.stderr
