"""Where people install Godot: the places per platform, as data, and the executables found there.

Nothing here runs a binary; godot.py probes what this module lists and picks one. Every root is taken
from a `Roots` (platform name, home, system folder, environment), so tests can lay out a Windows or a
macOS machine under a temporary folder and search it from Linux.

Sources for the names below, so that they can be checked again when an installer changes:
- Official downloads (github.com/godotengine/godot-builds releases): `Godot_v4.6.3-stable_linux.x86_64`
  (also `.arm64`, `.x86_32`, `.arm32`), `Godot_v4.6.3-stable_win64.exe` beside `..._win64_console.exe`
  (also `win32`, `windows_arm64`), `Godot.app` for macOS. The .NET builds unpack into a folder of their
  own: `Godot_v4.6.3-stable_mono_linux_x86_64/Godot_v4.6.3-stable_mono_linux.x86_64`,
  `Godot_v4.6.3-stable_mono_win64/Godot_v4.6.3-stable_mono_win64_console.exe`, `Godot_mono.app`.
  Windows' "Extract All" puts even the plain build in a folder named after the archive, so download
  folders are searched one level down too.
- Steam (app "Godot Engine"): `steamapps/common/Godot Engine/godot.x11.opt.tools.64` on Linux and
  `godot.windows.opt.tools.64.exe` on Windows, names kept from Godot 3 (seen in users' scripts for 4.6
  and 4.7), `Godot.app` on macOS; other Steam libraries are listed in `steamapps/libraryfolders.vdf`.
- Flathub: app ids `org.godotengine.Godot` and `org.godotengine.GodotSharp`, exported as launchers in
  `exports/bin` of the system and the user installation.
- Scoop (ScoopInstaller/Extras `godot.json`, `godot-mono.json`): renames the executables to
  `godot.exe` and `godot.console.exe` (older manifests: `godotconsole.exe`), `godot-mono.exe` and
  `godot-mono.console.exe`, under `apps/<name>/current`, with shims of the same names in `shims`.
- WinGet (`GodotEngine.GodotEngine`, `GodotEngine.GodotEngine.Mono`): the archive unpacks under
  `%LOCALAPPDATA%\\Microsoft\\WinGet\\Packages\\GodotEngine.GodotEngine_<source id>`, with links
  `godot.exe` and `godot_console.exe` in `WinGet\\Links`.
"""

from __future__ import annotations

import glob
import ntpath
import os
import posixpath
import re
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

PATH_NAMES = ("godot", "godot4", "Godot")
"""Names looked up on PATH (on Windows with each PATHEXT extension)."""
RELEASE_NAME = "Godot_v4*"
"""The official release binaries' names (`Godot_v4.6.3-stable_linux.x86_64`), which CI scripts put
on PATH as they are downloaded: matched in each PATH folder after the names above."""

_WINDOWS_PATHEXT = ".COM;.EXE;.BAT;.CMD"


@dataclass(frozen=True)
class Roots:
    """The folders a search starts from, so tests can stand in for any machine."""

    platform: str
    """`sys.platform` of the machine: "linux", "darwin", "win32" (other Unixes search as Linux)."""
    home: Path
    system: Path
    """Where the system's own folders hang: `/` (`/opt`, `/Applications`, `/var/lib/flatpak`), or
    the system drive on Windows (`Program Files (x86)` defaults below it)."""
    environ: Mapping[str, str]

    @classmethod
    def of_this_machine(cls, environ: Mapping[str, str] | None = None) -> Roots:
        """Return the roots of the running machine, its environment replaced by `environ` if given."""
        env = os.environ if environ is None else environ
        if sys.platform == "win32":
            home = env.get("USERPROFILE") or os.path.expanduser("~")
            system = Path(env.get("SystemDrive", "C:") + "\\")
        else:
            home = env.get("HOME") or os.path.expanduser("~")
            system = Path("/")
        return cls(sys.platform, Path(home), system, env)

    @property
    def family(self) -> str:
        """Return which table of places applies: "linux", "darwin" or "win32"."""
        return self.platform if self.platform in ("darwin", "win32") else "linux"

    def base(self, key: str) -> str:
        """Return the folder a `{key}` in a place stands for."""
        if key == "home":
            return str(self.home)
        if key == "system":
            return str(self.system)
        variable, default = _BASES[key]
        value = self.environ.get(variable, "")
        # A relative value is passed over, as the XDG specification asks of its variables: taken
        # against the current folder, it would make a project's folder a place to find Godot in.
        # (On Windows a path rooted at the current drive, `\\x` or `/x`, is not the current folder's.)
        if posixpath.isabs(value) or (self.family == "win32" and ntpath.isabs(value)):
            return value
        return default.format(home=self.home, system=self.system)


_BASES = {
    "cache": ("XDG_CACHE_HOME", "{home}/.cache"),
    "data": ("XDG_DATA_HOME", "{home}/.local/share"),
    "localappdata": ("LOCALAPPDATA", "{home}/AppData/Local"),
    "programfiles": ("ProgramFiles", "{system}/Program Files"),
    "programfiles_x86": ("ProgramFiles(x86)", "{system}/Program Files (x86)"),
    "scoop": ("SCOOP", "{home}/scoop"),
}
"""Folders that an environment variable moves: (variable, where it is when the variable is unset)."""


@dataclass(frozen=True)
class Place:
    """One way of installing Godot: the folders it uses and the executables' names there."""

    source: str
    """What doctor calls it."""
    folders: tuple[str, ...]
    """`{home}/Downloads`-style templates (see Roots.base); glob characters outside braces match."""
    names: tuple[str, ...]
    """Glob patterns of the executable below a folder, most wanted first (console builds first)."""
    depth: int = 0
    """Also look this many folders further down (an archive unpacked into a folder of its own)."""
    steam: bool = False
    """The folders are Steam's own; the libraries its libraryfolders.vdf lists are searched too."""


_LINUX_RELEASES = ("Godot_v*_linux.x86_64", "Godot_v*_linux.arm64", "Godot_v*_linux.x86_32", "Godot_v*_linux.arm32")
_WINDOWS_RELEASES = (
    "Godot_v*_win64_console.exe", "Godot_v*_windows_arm64_console.exe", "Godot_v*_win32_console.exe",
    "Godot_v*_win64.exe", "Godot_v*_windows_arm64.exe", "Godot_v*_win32.exe",
)
_MAC_APPS = ("Godot*.app/Contents/MacOS/Godot",)
_DOWNLOADS = ("{home}/Downloads", "{home}/Applications", "{home}/bin", "{home}/.local/bin")

PLACES: dict[str, tuple[Place, ...]] = {
    "linux": (
        Place("scripts/install-godot.sh", ("{cache}/gdres/bin",), ("godot",)),
        Place("download", (*_DOWNLOADS, "{system}/opt"), _LINUX_RELEASES, depth=1),
        Place("Steam", ("{data}/Steam", "{home}/.steam/steam",
                        "{home}/.var/app/com.valvesoftware.Steam/.local/share/Steam"),
              ("steamapps/common/Godot Engine/godot.x11.opt.tools.64",), steam=True),
        Place("flatpak", ("{system}/var/lib/flatpak/exports/bin", "{data}/flatpak/exports/bin"),
              ("org.godotengine.Godot", "org.godotengine.GodotSharp")),
    ),
    "darwin": (
        Place("app", ("{system}/Applications", "{home}/Applications", "{home}/Downloads"), _MAC_APPS),
        Place("Steam", ("{home}/Library/Application Support/Steam",),
              ("steamapps/common/Godot Engine/Godot.app/Contents/MacOS/Godot",), steam=True),
    ),
    "win32": (
        Place("download", (*_DOWNLOADS, "{home}/Desktop", "{localappdata}/Programs", "{programfiles}/Godot",
                           "{system}/Godot"), _WINDOWS_RELEASES, depth=1),
        Place("Steam", ("{programfiles_x86}/Steam",),
              ("steamapps/common/Godot Engine/godot.windows.opt.tools.64.exe",), steam=True),
        Place("scoop", ("{scoop}/apps/godot/current", "{scoop}/apps/godot-mono/current"),
              ("godot.console.exe", "godotconsole.exe", "godot-mono.console.exe", "godot.exe", "godot-mono.exe")),
        Place("scoop shim", ("{scoop}/shims",),
              ("godot.console.exe", "godotconsole.exe", "godot-mono.console.exe", "godot.exe", "godot-mono.exe")),
        Place("winget", ("{localappdata}/Microsoft/WinGet/Packages/GodotEngine.GodotEngine*",),
              _WINDOWS_RELEASES, depth=1),
        Place("winget link", ("{localappdata}/Microsoft/WinGet/Links",), ("godot_console.exe", "godot.exe")),
    ),
}
"""Every place searched after PATH, per platform, in the order that breaks a tie between equal versions.
A symlink or a second route to a binary already listed is left out (the first route found stays)."""


@dataclass(frozen=True)
class Candidate:
    """An executable that may be Godot, and how it was found."""

    source: str
    path: str


def which(name: str, roots: Roots) -> str | None:
    """Return the executable that `name` means: a path as it is, else a bare name looked up on PATH
    (with PATHEXT on Windows). Unlike shutil.which on Windows, the current folder is not searched
    first: a project folder holding a godot.exe must not get to run it."""
    if os.path.dirname(name):
        return name if _runnable(name) else None
    for folder in roots.environ.get("PATH", "").split(os.pathsep):
        for file in _with_extensions(name, roots):
            path = os.path.join(folder, file)
            if folder and _runnable(path):
                return path
    return None


def app_executable(path: str) -> str:
    """Return the executable inside a macOS app bundle that `path` names, or `path` itself."""
    inner = os.path.join(path, "Contents", "MacOS", "Godot")
    return inner if path.rstrip("/").endswith(".app") and os.path.isdir(path) else path


def candidates(roots: Roots) -> list[Candidate]:
    """Return every executable that PATH and the platform's usual places hold, in search order,
    each binary once."""
    found: list[Candidate] = []
    seen: set[str] = set()
    for candidate in _everywhere(roots):
        key = os.path.normcase(os.path.realpath(candidate.path))
        if key not in seen:
            seen.add(key)
            found.append(candidate)
    return found


def _everywhere(roots: Roots) -> Iterator[Candidate]:
    for name in PATH_NAMES:
        path = which(name, roots)
        if path is not None:
            yield Candidate(f"PATH ({name})", path)
    for folder in roots.environ.get("PATH", "").split(os.pathsep):
        if folder:
            pattern = os.path.join(glob.escape(folder), RELEASE_NAME)
            for path in sorted(glob.glob(pattern)):
                if _runnable(path) and not os.path.isdir(path):
                    yield Candidate("PATH (release name)", path)
    for place in PLACES[roots.family]:
        for path in _search(place, roots):
            yield Candidate(place.source, path)


def _search(place: Place, roots: Roots) -> Iterator[str]:
    folders = [folder for template in place.folders for folder in _expand(template, roots)]
    if place.steam:
        folders = [library for folder in folders for library in _steam_libraries(folder)]
    for name in place.names:
        for folder in dict.fromkeys(folders):
            for level in range(place.depth + 1):
                pattern = os.path.join(glob.escape(folder), *["*"] * level, name)
                yield from (os.path.normpath(path) for path in sorted(glob.glob(pattern)) if _runnable(path))


def _expand(template: str, roots: Roots) -> list[str]:
    """Return the folders a template names: its roots filled in (taken literally), its own glob
    characters matched."""
    pattern = re.sub(r"\{(\w+)\}", lambda key: glob.escape(roots.base(key[1])), template)
    return sorted(path for path in glob.glob(pattern) if os.path.isdir(path))


_VDF_PATH = re.compile(r'"path"\s+"((?:[^"\\]|\\.)*)"')


def _steam_libraries(steam: str) -> list[str]:
    """Return a Steam installation's folder and every library folder it lists."""
    try:
        text = Path(steam, "steamapps", "libraryfolders.vdf").read_text("utf-8", "replace")
    except OSError:
        return [steam]
    listed = [re.sub(r"\\(.)", r"\1", match) for match in _VDF_PATH.findall(text)]
    return [steam, *(path for path in listed if os.path.isdir(path))]


def _with_extensions(name: str, roots: Roots) -> list[str]:
    if roots.family != "win32":
        return [name]
    extensions = [ext.lower() for ext in (roots.environ.get("PATHEXT") or _WINDOWS_PATHEXT).split(";") if ext]
    if any(name.lower().endswith(ext) for ext in extensions):
        return [name]
    return [name + ext for ext in extensions]


def _runnable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)
