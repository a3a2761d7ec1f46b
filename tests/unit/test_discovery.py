"""Finding Godot the way people install it: every install layout of Linux, macOS and Windows, laid out
with stand-in executables under a fake home and fake system folders (the platform is a name the search
is given, so all three run here), and the choice among several. With the real binary among them:
tests/engine/test_discovery.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO
from gdres.engine.discovery import Roots
from gdres.engine.godot import find_godot, survey, version_order
from gdres.errors import EngineNotFound, EngineUnsupported

# Versions are cached per binary: each test asks its own stand-ins afresh.
pytestmark = pytest.mark.usefixtures("private_cache")

TOO_OLD = "passed over: older than Godot 4.4, which gdres needs"


def stand_in(path: Path, version: str) -> Path:
    """An executable that answers --version as a Godot of `version` does (banner on stderr)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho 'Godot Engine v{version} - https://godotengine.org' >&2\necho '{version}'\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def system(tmp_path: Path) -> Path:
    (tmp_path / "system").mkdir()
    return tmp_path / "system"


def machine(platform: str, home: Path, system: Path, bin_dir: Path, **environ: str) -> Roots:
    return Roots(platform, home, system, {"PATH": str(bin_dir), **environ})


STEAM_GODOT = "steamapps/common/Godot Engine"


WINGET = "~/AppData/Local/Microsoft/WinGet/Packages"


WINGET_SOURCE = "Microsoft.Winget.Source_8wekyb3d8bbwe"


WINDOWS_MONO = "Godot_v4.6.3-stable_mono_win64/Godot_v4.6.3-stable_mono_win64_console.exe"


LAYOUTS = [
    # (platform, where the executable lies: ~ is the home, / the system folder, bin/ the PATH folder, source)
    ("linux", "bin/godot", "PATH (godot)"),
    # CI scripts put the downloaded release on PATH under its release name.
    ("linux", "bin/Godot_v4.6.3-stable_linux.x86_64", "PATH (release name)"),
    ("linux", "bin/Godot_v4.6.3-stable_mono_linux_arm64", "PATH (release name)"),
    ("win32", "bin/Godot_v4.6.3-stable_win64_console.exe", "PATH (release name)"),
    ("linux", "bin/godot4", "PATH (godot4)"),
    ("linux", "bin/Godot", "PATH (Godot)"),
    ("linux", "~/.cache/gdres/bin/godot", "scripts/install-godot.sh"),
    ("linux", "~/Downloads/Godot_v4.6.3-stable_linux.x86_64", "download"),
    ("linux", "~/Downloads/Godot_v4.6.3-stable_linux.x86_64/Godot_v4.6.3-stable_linux.x86_64",
     "download"),
    ("linux", "~/Applications/Godot_v4.6.3-stable_linux.arm64", "download"),
    ("linux", "~/bin/Godot_v4.6.3-stable_linux.x86_64", "download"),
    ("linux", "~/.local/bin/Godot_v4.6.3-stable_linux.x86_64", "download"),
    ("linux", "/opt/godot/Godot_v4.6.3-stable_linux.x86_64", "download"),
    ("linux", "~/Downloads/Godot_v4.6.3-stable_mono_linux_x86_64/Godot_v4.6.3-stable_mono_linux.x86_64", "download"),
    ("linux", f"~/.local/share/Steam/{STEAM_GODOT}/godot.x11.opt.tools.64", "Steam"),
    ("linux", f"~/.steam/steam/{STEAM_GODOT}/godot.x11.opt.tools.64", "Steam"),
    ("linux", f"~/.var/app/com.valvesoftware.Steam/.local/share/Steam/{STEAM_GODOT}/godot.x11.opt.tools.64", "Steam"),
    ("linux", "/var/lib/flatpak/exports/bin/org.godotengine.Godot", "flatpak"),
    ("linux", "~/.local/share/flatpak/exports/bin/org.godotengine.Godot", "flatpak"),
    ("linux", "~/.local/share/flatpak/exports/bin/org.godotengine.GodotSharp", "flatpak"),
    ("darwin", "bin/godot", "PATH (godot)"),
    ("darwin", "/Applications/Godot.app/Contents/MacOS/Godot", "app"),
    ("darwin", "/Applications/Godot_mono.app/Contents/MacOS/Godot", "app"),
    ("darwin", "~/Applications/Godot.app/Contents/MacOS/Godot", "app"),
    ("darwin", "~/Library/Application Support/Steam/steamapps/common/Godot Engine/Godot.app/Contents/MacOS/Godot",
     "Steam"),
    ("win32", "bin/godot.exe", "PATH (godot)"),
    ("win32", "bin/Godot.exe", "PATH (Godot)"),
    ("win32", "~/Downloads/Godot_v4.6.3-stable_win64.exe", "download"),
    ("win32", "~/Downloads/Godot_v4.6.3-stable_win64_console.exe", "download"),
    # Windows' "Extract All" makes a folder named after the archive.
    ("win32", "~/Downloads/Godot_v4.6.3-stable_win64.exe/Godot_v4.6.3-stable_win64_console.exe", "download"),
    ("win32", "~/Desktop/Godot_v4.6.3-stable_windows_arm64_console.exe", "download"),
    ("win32", "~/AppData/Local/Programs/Godot/Godot_v4.6.3-stable_win64.exe", "download"),
    ("win32", "/Program Files/Godot/Godot_v4.6.3-stable_win64.exe", "download"),
    ("win32", f"~/Downloads/{WINDOWS_MONO}", "download"),
    ("win32", "/Program Files (x86)/Steam/steamapps/common/Godot Engine/godot.windows.opt.tools.64.exe", "Steam"),
    ("win32", "~/scoop/apps/godot/current/godot.console.exe", "scoop"),
    ("win32", "~/scoop/apps/godot-mono/current/godot-mono.exe", "scoop"),
    ("win32", "~/scoop/shims/godot.exe", "scoop shim"),
    ("win32", f"{WINGET}/GodotEngine.GodotEngine_{WINGET_SOURCE}/Godot_v4.6.3-stable_win64_console.exe", "winget"),
    ("win32", f"{WINGET}/GodotEngine.GodotEngine.Mono_{WINGET_SOURCE}/{WINDOWS_MONO}", "winget"),
    ("win32", "~/AppData/Local/Microsoft/WinGet/Links/godot.exe", "winget link"),
    ("win32", "~/AppData/Local/Microsoft/WinGet/Links/godot_console.exe", "winget link"),
]


def lay_out(where: str, home: Path, system: Path, bin_dir: Path) -> Path:
    if where.startswith("~/"):
        return home / where[2:]
    if where.startswith("/"):
        return system / where[1:]
    return bin_dir / where.removeprefix("bin/")


@pytest.mark.parametrize(("platform", "where", "source"), LAYOUTS, ids=[f"{p}:{w}" for p, w, _ in LAYOUTS])
def test_each_install_layout_is_found(platform: str, where: str, source: str, home: Path, system: Path,
                                      bin_dir: Path) -> None:
    godot = stand_in(lay_out(where, home, system, bin_dir), "4.6.3.stable.official.abc123")
    roots = machine(platform, home, system, bin_dir)
    assert find_godot(roots=roots) == str(godot)
    [finding] = survey(roots=roots).findings
    assert (finding.source, finding.path, finding.version, finding.chosen) == (
        source, str(godot), "4.6.3.stable.official.abc123", True)
    assert finding.reason == "chosen: the newest supported Godot found"


def test_a_layout_of_another_platform_is_not_searched(home: Path, system: Path, bin_dir: Path) -> None:
    stand_in(home / "Downloads" / "Godot_v4.6.3-stable_win64.exe", "4.6.3.stable")
    stand_in(system / "Applications" / "Godot.app" / "Contents" / "MacOS" / "Godot", "4.6.3.stable")
    with pytest.raises(EngineNotFound, match="no Godot binary found"):
        find_godot(roots=machine("linux", home, system, bin_dir))


def test_folders_moved_by_environment_variables_are_followed(tmp_path: Path, home: Path, system: Path,
                                                             bin_dir: Path) -> None:
    scoop = stand_in(tmp_path / "D" / "scoop" / "apps" / "godot" / "current" / "godot.console.exe", "4.6.3.stable")
    roots = machine("win32", home, system, bin_dir, SCOOP=str(tmp_path / "D" / "scoop"))
    assert find_godot(roots=roots) == str(scoop)
    steam = stand_in(tmp_path / "x86" / "Steam" / "steamapps" / "common" / "Godot Engine" /
                     "godot.windows.opt.tools.64.exe", "4.7.stable")
    roots = machine("win32", home, system, bin_dir, **{"ProgramFiles(x86)": str(tmp_path / "x86")})
    assert find_godot(roots=roots) == str(steam)
    ours = stand_in(tmp_path / "cache" / "gdres" / "bin" / "godot", "4.6.3.stable")
    roots = machine("linux", home, system, bin_dir, XDG_CACHE_HOME=str(tmp_path / "cache"))
    assert find_godot(roots=roots) == str(ours)
    flatpak = stand_in(tmp_path / "data" / "flatpak" / "exports" / "bin" / "org.godotengine.Godot", "4.6.3.stable")
    roots = machine("linux", home, system, bin_dir, XDG_DATA_HOME=str(tmp_path / "data"))
    assert find_godot(roots=roots) == str(flatpak)


def test_a_steam_library_on_another_drive_is_found(tmp_path: Path, home: Path, system: Path, bin_dir: Path) -> None:
    library = tmp_path / "D" / "Steam Library"
    godot = stand_in(library / STEAM_GODOT / "godot.windows.opt.tools.64.exe", "4.6.3.stable")
    steam = system / "Program Files (x86)" / "Steam"
    (steam / "steamapps").mkdir(parents=True)
    # Steam's own format: quoted keys and values, backslashes doubled.
    quoted = str(library).replace("\\", "\\\\")
    (steam / "steamapps" / "libraryfolders.vdf").write_text(
        '"libraryfolders"\n{\n\t"0"\n\t{\n\t\t"path"\t\t"' + str(steam) + '"\n\t}\n'
        '\t"1"\n\t{\n\t\t"path"\t\t"' + quoted + '"\n\t\t"apps"\n\t\t{\n\t\t\t"404790"\t\t"1"\n\t\t}\n\t}\n}\n')
    assert find_godot(roots=machine("win32", home, system, bin_dir)) == str(godot)


def test_path_takes_windows_extensions_from_pathext(home: Path, system: Path, bin_dir: Path) -> None:
    batch = stand_in(bin_dir / "godot4.cmd", "4.6.3.stable")
    assert find_godot(roots=machine("win32", home, system, bin_dir, PATHEXT=".COM;.EXE;.BAT;.CMD")) == str(batch)
    with pytest.raises(EngineNotFound):
        find_godot(roots=machine("win32", home, system, bin_dir, PATHEXT=".EXE"))


def test_the_current_folder_is_not_searched(tmp_path: Path, home: Path, system: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # A game folder (or a cloned repository) holding something named like Godot must not get to run it.
    here = tmp_path / "game"
    for name in ("godot", "godot.exe", "Godot_v4.6.3-stable_linux.x86_64", "Godot_v4.6.3-stable_win64_console.exe"):
        stand_in(here / name, "4.6.3.stable")
    monkeypatch.chdir(here)
    for platform in ("linux", "darwin", "win32"):
        # An empty PATH entry means the current folder to a shell; it is skipped.
        roots = Roots(platform, home, system, {"PATH": os.pathsep + str(tmp_path / "nothing")})
        with pytest.raises(EngineNotFound):
            find_godot(roots=roots)


def test_a_folder_variable_that_is_relative_is_not_followed(tmp_path: Path, home: Path, system: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # Taken against the current folder, it would let a project's folder hold the Godot that runs.
    here = tmp_path / "game"
    ran = tmp_path / "ran"
    planted = [here / "rel" / "gdres" / "bin" / "godot",
               here / "rel" / "flatpak" / "exports" / "bin" / "org.godotengine.Godot",
               here / "rel" / "apps" / "godot" / "current" / "godot.console.exe",
               here / "\\rel" / "gdres" / "bin" / "godot"]  # on Linux, "\\rel" is a name
    for path in planted:
        stand_in(path, "4.6.3.stable")
        # Each says so when anything runs it (discovery asks a candidate its version).
        path.write_text(path.read_text().replace("#!/bin/sh\n", f"#!/bin/sh\necho \"$0\" >> '{ran}'\n"))
    monkeypatch.chdir(here)
    cases = [("linux", "XDG_CACHE_HOME", "rel"), ("linux", "XDG_DATA_HOME", "rel"), ("win32", "SCOOP", "rel"),
             ("linux", "XDG_CACHE_HOME", "\\rel")]
    for platform, variable, value in cases:
        roots = Roots(platform, home, system, {"PATH": str(tmp_path / "nothing"), variable: value})
        with pytest.raises(EngineNotFound):
            find_godot(roots=roots)
    assert not ran.exists()
    # The check above can fail: named by an absolute path, the same folder is followed and run.
    roots = Roots("linux", home, system, {"PATH": str(tmp_path / "nothing"), "XDG_CACHE_HOME": str(here / "rel")})
    assert find_godot(roots=roots) == str(planted[0])
    assert ran.read_text().splitlines() == [str(planted[0])]


def test_the_newest_supported_one_wins(home: Path, system: Path, bin_dir: Path) -> None:
    stand_in(bin_dir / "godot", "4.4.1.stable.official.49a5bc7b6")
    stand_in(home / "Downloads" / "Godot_v4.5-stable_linux.x86_64", "4.5.stable.official.876b29033")
    steam = stand_in(home / ".local/share/Steam/steamapps/common/Godot Engine/godot.x11.opt.tools.64",
                     "4.6.3.stable.official.abc123")
    stand_in(home / "Downloads" / "Godot_v4.6.3-rc1_linux.x86_64", "4.6.3.rc1.official.def456")
    roots = machine("linux", home, system, bin_dir)
    assert find_godot(roots=roots) == str(steam)
    reasons = {finding.version: finding.reason for finding in survey(roots=roots).findings}
    assert reasons == {
        "4.4.1.stable.official.49a5bc7b6": "passed over: older than the chosen 4.6.3.stable.official.abc123",
        "4.5.stable.official.876b29033": "passed over: older than the chosen 4.6.3.stable.official.abc123",
        "4.6.3.rc1.official.def456": "passed over: older than the chosen 4.6.3.stable.official.abc123",
        "4.6.3.stable.official.abc123": "chosen: the newest supported Godot found",
    }


def test_versions_order_by_number_then_release_stage() -> None:
    answers = ["4.3.stable.mono.official.77dcf97d8", "4.5.dev3.official.x", "4.5.beta2.official.x",
               "4.5.rc1.official.x", "4.5.stable.official.x", "4.5.1.stable.flathub.x", "4.6.3.stable.official.abc123",
               "4.10.stable.official.x"]
    assert all(version_order(older) < version_order(newer) for older, newer in pairwise(answers))


def test_a_tie_goes_to_the_earlier_source(home: Path, system: Path, bin_dir: Path) -> None:
    on_path = stand_in(bin_dir / "godot", "4.6.3.stable.official.abc123")
    stand_in(home / "Downloads" / "Godot_v4.6.3-stable_linux.x86_64", "4.6.3.stable.official.abc123")
    roots = machine("linux", home, system, bin_dir)
    assert find_godot(roots=roots) == str(on_path)
    assert survey(roots=roots).findings[1].reason == (
        "passed over: the same version as the chosen one, which was found first")


def test_the_console_build_is_preferred_on_windows(home: Path, system: Path, bin_dir: Path) -> None:
    folder = home / "Downloads" / "Godot_v4.6.3-stable_win64.exe"
    stand_in(folder / "Godot_v4.6.3-stable_win64.exe", "4.6.3.stable.official.abc123")
    console = stand_in(folder / "Godot_v4.6.3-stable_win64_console.exe", "4.6.3.stable.official.abc123")
    assert find_godot(roots=machine("win32", home, system, bin_dir)) == str(console)


def test_one_binary_reached_twice_is_listed_once(home: Path, system: Path, bin_dir: Path) -> None:
    release = stand_in(home / "Downloads" / "Godot_v4.6.3-stable_linux.x86_64", "4.6.3.stable")
    (bin_dir / "godot").symlink_to(release)
    [finding] = survey(roots=machine("linux", home, system, bin_dir)).findings
    assert (finding.source, finding.path) == ("PATH (godot)", str(bin_dir / "godot"))


@pytest.mark.parametrize(("variable", "later"), [("GODOT_BIN", "GODOT"), ("GODOT", "GODOT4"), ("GODOT4", None)])
def test_a_named_godot_wins_over_a_newer_one_found(variable: str, later: str | None, tmp_path: Path, home: Path,
                                                   system: Path, bin_dir: Path) -> None:
    named = stand_in(tmp_path / "pinned" / "godot-4.4", "4.4.stable.official.4c311cbee")
    stand_in(home / "Downloads" / "Godot_v4.6.3-stable_linux.x86_64", "4.6.3.stable")
    environ = {variable: str(named), **({later: str(stand_in(tmp_path / "later", "4.7.stable"))} if later else {})}
    roots = machine("linux", home, system, bin_dir, **environ)
    assert find_godot(roots=roots) == str(named)
    findings = survey(roots=roots).findings
    assert [(f.source, f.chosen, f.reason) for f in findings] == [
        (variable, True, f"chosen: {variable} names it"),
        *([(later, False, f"not used: {variable} comes first")] if later else []),
        ("download", False, f"not considered: {variable} names the Godot to use"),
    ]


def test_godot_option_comes_before_every_variable(tmp_path: Path, home: Path, system: Path, bin_dir: Path) -> None:
    option = stand_in(tmp_path / "option" / "godot", "4.4.stable")
    roots = machine("linux", home, system, bin_dir, GODOT_BIN=str(stand_in(tmp_path / "env", "4.5.stable")))
    assert find_godot(str(option), roots=roots) == str(option)
    assert find_godot(roots=roots) == str(tmp_path / "env")


def test_a_named_godot_may_be_a_bare_name_on_path(home: Path, system: Path, bin_dir: Path) -> None:
    godot4 = stand_in(bin_dir / "godot4", "4.5.stable")
    stand_in(bin_dir / "godot", "4.6.3.stable")
    assert find_godot(roots=machine("linux", home, system, bin_dir, GODOT4="godot4")) == str(godot4)


def test_a_named_mac_app_bundle_means_the_godot_inside(system: Path, home: Path, bin_dir: Path) -> None:
    app = system / "Applications" / "Godot_mono.app"
    inner = stand_in(app / "Contents" / "MacOS" / "Godot", "4.6.3.stable.mono.official.abc123")
    assert find_godot(roots=machine("darwin", home, system, bin_dir, GODOT=str(app))) == str(inner)


def test_a_named_godot_that_is_unusable_is_an_error_naming_its_source(tmp_path: Path, home: Path, system: Path,
                                                                      bin_dir: Path) -> None:
    stand_in(home / "Downloads" / "Godot_v4.6.3-stable_linux.x86_64", "4.6.3.stable")
    with pytest.raises(EngineNotFound, match=r"^GODOT names '.*missing', which is not an executable file$"):
        find_godot(roots=machine("linux", home, system, bin_dir, GODOT=str(tmp_path / "missing")))
    old = stand_in(tmp_path / "old", "4.2.2.stable.official.x")
    roots = machine("linux", home, system, bin_dir, GODOT_BIN=str(old))
    with pytest.raises(EngineUnsupported, match=f"^GODOT_BIN names {old}, which is Godot 4.2.2.stable.official.x; "
                                                r"gdres needs Godot 4\.4 or newer$"):
        find_godot(roots=roots)
    assert survey(roots=roots).findings[0].reason == "not usable: older than Godot 4.4, which gdres needs"
    broken = tmp_path / "broken"
    broken.write_text("#!/nonexistent/interpreter\n")
    broken.chmod(0o755)
    with pytest.raises(EngineNotFound, match=f"^--godot names {broken}: could not be run"):
        find_godot(str(broken), roots=machine("linux", home, system, bin_dir))


def test_too_old_and_broken_ones_are_passed_over(home: Path, system: Path, bin_dir: Path) -> None:
    stand_in(bin_dir / "godot", "3.5.3.stable.official.6c814135b")
    (bin_dir / "godot4").write_text("#!/nonexistent/interpreter\n")
    (bin_dir / "godot4").chmod(0o755)
    stand_in(bin_dir / "Godot", "not a version")
    release = stand_in(home / "Downloads" / "Godot_v4.4-stable_linux.x86_64", "4.4.stable.official.4c311cbee")
    roots = machine("linux", home, system, bin_dir)
    assert find_godot(roots=roots) == str(release)
    assert [(f.source, f.version, f.reason) for f in survey(roots=roots).findings] == [
        ("PATH (godot)", "3.5.3.stable.official.6c814135b", TOO_OLD),
        ("PATH (godot4)", None, "passed over: could not be run (No such file or directory)"),
        ("PATH (Godot)", "not a version", "passed over: its --version answer 'not a version' is not a Godot version"),
        ("download", "4.4.stable.official.4c311cbee", "chosen: the newest supported Godot found"),
    ]


def test_only_old_ones_found_is_unsupported_naming_one(home: Path, system: Path, bin_dir: Path) -> None:
    old = stand_in(bin_dir / "godot", "3.5.3.stable")
    stand_in(home / "Downloads" / "Godot_v4.2-stable_linux.x86_64", "4.2.stable")
    with pytest.raises(EngineUnsupported, match=f"no supported Godot found: {old} is Godot 3.5.3.stable; "
                                                r"gdres needs Godot 4\.4 or newer \(gdres doctor"):
        find_godot(roots=machine("linux", home, system, bin_dir))


def test_nothing_found_says_where_to_look(home: Path, system: Path, bin_dir: Path) -> None:
    with pytest.raises(EngineNotFound, match="pass --godot PATH, set GODOT_BIN, or install Godot"):
        find_godot(roots=machine("linux", home, system, bin_dir))


def test_a_launcher_that_fails_says_how(home: Path, system: Path, bin_dir: Path) -> None:
    (bin_dir / "godot").write_text("#!/bin/sh\necho 'env: bash: No such file or directory' >&2\nexit 127\n")
    (bin_dir / "godot").chmod(0o755)
    [finding] = survey(roots=machine("linux", home, system, bin_dir)).findings
    assert finding.reason == "passed over: --version failed with exit status 127 (env: bash: No such file or directory)"


def doctor(home: Path, path: Path | str, *args: str, **environ: str) -> subprocess.CompletedProcess[str]:
    """Run `python -m gdres doctor ARGS` as a user whose home is `home` and whose PATH is `path`."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("GODOT_BIN", "GODOT", "GODOT4") and not key.startswith("XDG_")}
    env.update(HOME=str(home), PATH=str(path), XDG_CACHE_HOME=str(home.parent / "cache"), **environ)
    return subprocess.run([sys.executable, "-m", "gdres", "doctor", *args], capture_output=True, text=True,
                          env=env, timeout=120, cwd=REPO)


def ours(report: dict[str, Any], tmp_path: Path) -> list[dict[str, Any]]:
    """The candidates under this test's folders (the machine's own /opt and flatpak are searched too)."""
    return [c for c in report["godot"]["candidates"] if Path(c["path"]).is_relative_to(tmp_path)]


def test_doctor_lists_every_candidate_in_json(tmp_path: Path, home: Path, bin_dir: Path) -> None:
    old = stand_in(bin_dir / "godot", "3.5.3.stable.official.6c814135b")
    # Versions no real Godot has yet, so that none installed on the machine running the tests outranks them.
    newest = stand_in(home / "Downloads" / "Godot_v4.99-stable_linux.x86_64", "4.99.stable.official.aaaaaaa")
    steam = stand_in(home / ".local/share/Steam/steamapps/common/Godot Engine/godot.x11.opt.tools.64",
                     "4.98.stable.official.bbbbbbb")
    done = doctor(home, bin_dir, "--json")
    report = json.loads(done.stdout)
    assert done.returncode == 0, done.stderr
    assert {key: report["godot"][key] for key in ("path", "version", "supported", "source")} == {
        "path": str(newest), "version": "4.99.stable.official.aaaaaaa", "supported": True, "source": "download"}
    assert ours(report, tmp_path) == [
        {"source": "PATH (godot)", "path": str(old), "version": "3.5.3.stable.official.6c814135b", "chosen": False,
         "reason": TOO_OLD},
        {"source": "download", "path": str(newest), "version": "4.99.stable.official.aaaaaaa", "chosen": True,
         "reason": "chosen: the newest supported Godot found"},
        {"source": "Steam", "path": str(steam), "version": "4.98.stable.official.bbbbbbb", "chosen": False,
         "reason": "passed over: older than the chosen 4.99.stable.official.aaaaaaa"},
    ]


def test_doctor_lists_every_candidate_for_people(home: Path, bin_dir: Path) -> None:
    old = stand_in(bin_dir / "godot", "3.5.3.stable.official.6c814135b")
    newest = stand_in(home / "Downloads" / "Godot_v4.99-stable_linux.x86_64", "4.99.stable.official.aaaaaaa")
    done = doctor(home, bin_dir)
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stderr
    assert lines[0] == f"Godot:   {newest} (version 4.99.stable.official.aaaaaaa): supported, found by download"
    assert lines[1] == "Found:   in search order; * marks the one used"
    assert lines[2:4] == [f"    PATH (godot): {old}", f"      3.5.3.stable.official.6c814135b: {TOO_OLD}"]
    assert f"  * download: {newest}" in lines
    assert lines[-1] == "Ready."


def test_doctor_with_nothing_usable_shows_what_it_passed_over(home: Path, bin_dir: Path, tmp_path: Path) -> None:
    stand_in(bin_dir / "godot", "3.5.3.stable.official.6c814135b")
    done = doctor(home, bin_dir, "--json", GODOT4=str(tmp_path / "missing"))
    report = json.loads(done.stdout)
    assert done.returncode == 1
    text = doctor(home, bin_dir, GODOT4=str(tmp_path / "missing")).stdout.splitlines()
    assert text[:2] == [f"Godot:   not usable: GODOT4 names '{tmp_path / 'missing'}', which is not an executable file",
                        "Found:   in search order; none is used"]
    assert report["godot"]["supported"] is False
    missing = f"GODOT4 names '{tmp_path / 'missing'}', which is not an executable file"
    assert report["godot"]["error"] == {"code": "engine_not_found", "message": missing}
    assert [(c["source"], c["version"], c["reason"]) for c in ours(report, tmp_path)] == [
        ("GODOT4", None, "not usable: not an executable file"),
        ("PATH (godot)", "3.5.3.stable.official.6c814135b", "not considered: GODOT4 names the Godot to use"),
    ]
