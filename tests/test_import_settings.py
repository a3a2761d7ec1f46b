"""import_read and import_update on a fresh clone of a real project: settings read as the editor
declares them, changed in their .import lines only, imported again, and seen by the engine."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, file_etag, git, snapshot
from gdres import Bridge

pytestmark = [pytest.mark.engine, pytest.mark.timeout(300)]

TEXTURE = "art/enemyFlyingAlt_1.png"
SOUND = "art/House In a Forest Loop.ogg"
WAV = "art/gameover.wav"
ORACLE = """extends SceneTree
# How the engine itself (no editor, no bridge) loads each asset given: what its import settings make.
func _init() -> void:
	var seen: Dictionary = {}
	for path: String in OS.get_cmdline_user_args():
		var loaded: Resource = load(path)
		if loaded is Texture2D:
			var image: Image = loaded.get_image()
			seen[path] = {"mipmaps": image.has_mipmaps(), "compressed": image.is_compressed()}
		elif loaded is AudioStreamWAV:
			seen[path] = {"loop_mode": loaded.loop_mode, "format": loaded.format}
		elif loaded != null:
			seen[path] = {"loop": loaded.loop, "bpm": loaded.bpm}
	print("ORACLE " + JSON.stringify(seen))
	quit()
"""


def engine_view(godot_bin: str, project: Path, *assets: str) -> dict[str, Any]:
    script = project.parent / "import_oracle.gd"
    script.write_text(ORACLE)
    done = subprocess.run([godot_bin, "--headless", "--path", str(project), "-s", str(script), "--",
                           *[f"res://{asset}" for asset in assets]], capture_output=True, text=True, timeout=120,
                          check=False)
    line = next(line for line in done.stdout.splitlines() if line.startswith("ORACLE "))
    view: dict[str, Any] = json.loads(line.removeprefix("ORACLE "))
    return {path.removeprefix("res://"): value for path, value in view.items()}


def update(bridge: Bridge, project: Path, source: str, params: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return bridge.run({"op": "import_update", "project_path": str(project), "source_path": source,
                       "params": params, **extra})


def test_import_read_gives_the_settings_and_every_option_the_importer_has(bridge: Bridge, demo: Path) -> None:
    reply = bridge.run({"op": "import_read", "project_path": str(demo), "source_path": TEXTURE})
    assert reply["result"] == "ok", reply
    assert (reply["importer"], reply["type"]) == ("texture", "CompressedTexture2D")
    assert reply["params"]["mipmaps/generate"] is False and reply["params"]["compress/mode"] == 0
    options = {option["name"]: option for option in reply["options"]}
    assert set(reply["params"]) <= set(options)
    assert options["compress/mode"] == {"name": "compress/mode", "type": "int", "default": 0, "values": [
        "Lossless", "Lossy", "VRAM Compressed", "VRAM Uncompressed", "Basis Universal"]}
    assert options["mipmaps/generate"] == {"name": "mipmaps/generate", "type": "bool", "default": False}
    assert reply["etag"] == file_etag(demo / f"{TEXTURE}.import")
    sound = bridge.run({"op": "import_read", "project_path": str(demo), "source_path": SOUND})
    assert sound["importer"] == "oggvorbisstr" and sound["params"]["loop"] is True


def test_import_update_reimports_a_texture_and_the_engine_sees_the_new_settings(
        bridge: Bridge, demo: Path, godot_bin: str) -> None:
    reply = update(bridge, demo, TEXTURE, {"mipmaps/generate": True, "compress/mode": "VRAM Compressed"})
    assert reply["result"] == "ok", reply
    assert reply["changed"] == ["mipmaps/generate", "compress/mode"]
    assert reply["etag"] == file_etag(demo / f"{TEXTURE}.import")
    assert engine_view(godot_bin, demo, TEXTURE) == {TEXTURE: {"mipmaps": True, "compressed": True}}
    # git sees the .import alone (and .godot/, which git keeps out): the two settings, and where the
    # artefacts now are, as the editor writes them (its own import afterwards changes nothing).
    assert git(demo, "status", "--porcelain") == f" M {TEXTURE}.import\n"
    diff = git(demo, "diff", "-U0")
    assert "-mipmaps/generate=false\n+mipmaps/generate=true\n" in diff and "+compress/mode=2\n" in diff
    changed = {line[1:].split("=")[0] for line in diff.splitlines()
               if line[:1] in "+-" and line[:3] not in ("+++", "---")}
    assert changed == {"mipmaps/generate", "compress/mode", "path", "path.s3tc", "dest_files",
                       '"vram_texture": false', '"vram_texture": true', '"imported_formats": ["s3tc_bptc"],'}
    subprocess.run([godot_bin, "--headless", "--path", str(demo), "--import"], capture_output=True, timeout=240,
                   check=False)
    assert git(demo, "status", "--porcelain") == f" M {TEXTURE}.import\n"


def test_import_update_reimports_sounds(bridge: Bridge, demo: Path, godot_bin: str) -> None:
    assert update(bridge, demo, SOUND, {"loop": False, "bpm": 120})["changed"] == ["loop", "bpm"]
    assert update(bridge, demo, WAV, {"edit/loop_mode": "Forward"})["changed"] == ["edit/loop_mode"]
    view = engine_view(godot_bin, demo, SOUND, WAV)
    assert view[SOUND] == {"loop": False, "bpm": 120.0}
    assert view[WAV]["loop_mode"] == 1  # AudioStreamWAV.LOOP_FORWARD


def test_settings_already_in_place_change_nothing(bridge: Bridge, demo: Path) -> None:
    first = update(bridge, demo, SOUND, {"loop": True})
    assert first["result"] == "ok" and first["changed"] == [], first
    kept = FIXTURES / "demos" / "dodge_the_creeps" / f"{SOUND}.import"
    assert (demo / f"{SOUND}.import").read_bytes() == kept.read_bytes()


@pytest.mark.parametrize(("params", "code", "words"), [
    ({"mipmap/generate": True}, "unknown_property", "did you mean mipmaps/generate"),
    ({"mipmaps/generate": "yes"}, "invalid_value", "is not a bool"),
    ({"compress/mode": 9}, "invalid_value", 'one of ["Lossless"'),
    ({"compress/mode": "Fast"}, "invalid_value", "its number from 0 to 4"),
    ({"compress/lossy_quality": "high"}, "invalid_value", "is not a float"),
    ({"roughness/src_normal": "../outside.png"}, "path_outside_project", "outside"),
])
def test_a_setting_that_cannot_be_set_is_refused_and_nothing_changes(
        bridge: Bridge, demo: Path, params: dict[str, Any], code: str, words: str) -> None:
    before = snapshot(demo)
    reply = update(bridge, demo, TEXTURE, params)
    assert reply["result"] == "error" and reply["error"]["code"] == code, reply
    assert words in reply["error"]["message"]
    assert snapshot(demo) == before


def test_an_import_script_is_never_set(bridge: Bridge, demo: Path) -> None:
    model = demo / "model.glb"
    model.write_bytes(b"glTF")
    (demo / "model.glb.import").write_text('[remap]\n\nimporter="scene"\ntype="PackedScene"\n\n[params]\n\n')
    reply = update(bridge, demo, "model.glb", {"import_script/path": "res://player.gd"})
    assert reply["error"]["code"] == "forbidden_property", reply


def test_a_file_with_no_import_is_no_asset(bridge: Bridge, demo: Path) -> None:
    reply = bridge.run({"op": "import_read", "project_path": str(demo), "source_path": "main.tscn"})
    assert reply["error"]["code"] == "not_found" and "no .import" in reply["error"]["message"]


def test_a_dry_run_shows_the_lines_and_imports_nothing(bridge: Bridge, demo: Path) -> None:
    before = snapshot(demo)
    reply = update(bridge, demo, TEXTURE, {"process/size_limit": 32}, dry_run=True)
    assert reply["result"] == "ok" and reply["dry_run"] is True, reply
    assert reply["changes"][0]["path"] == f"{TEXTURE}.import"
    assert "-process/size_limit=0\n+process/size_limit=32\n" in reply["changes"][0]["diff"]
    assert snapshot(demo) == before and not (demo / ".godot").exists()


def test_if_match_guards_the_import_file(bridge: Bridge, demo: Path) -> None:
    etag = bridge.run({"op": "import_read", "project_path": str(demo), "source_path": SOUND})["etag"]
    path = demo / f"{SOUND}.import"
    path.write_text(path.read_text().replace("bar_beats=4", "bar_beats=3"))
    before = snapshot(demo)
    stale = update(bridge, demo, SOUND, {"bpm": 90}, if_match=etag)
    assert stale["error"]["code"] == "conflict" and snapshot(demo) == before, stale
    fresh = update(bridge, demo, SOUND, {"bpm": 90}, if_match=file_etag(path))
    assert fresh["result"] == "ok" and "bar_beats=3" in path.read_text(), fresh
