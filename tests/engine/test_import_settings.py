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


def crlf(path: Path) -> None:
    path.write_bytes(path.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))


def test_import_files_with_windows_line_ends_stay_as_they_are(bridge: Bridge, demo: Path) -> None:
    # A Windows checkout (autocrlf) has them so: a read imports what it needs and rewrites none of them.
    for path in demo.rglob("*.import"):
        crlf(path)
    git(demo, "add", "-A")
    git(demo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "crlf")
    assert bridge.run({"op": "scene_read", "project_path": str(demo), "scene_path": "player.tscn"})["result"] == "ok"
    assert git(demo, "status", "--porcelain") == ""
    reply = update(bridge, demo, TEXTURE, {"compress/mode": "VRAM Compressed"})
    assert reply["result"] == "ok", reply
    data = (demo / f"{TEXTURE}.import").read_bytes()
    assert b"path.s3tc=" in data and data.count(b"\n") == data.count(b"\r\n")  # no line end mixed in


def test_an_atomic_batch_undoes_an_import_update_whole(bridge: Bridge, demo: Path) -> None:
    before = snapshot(demo)
    lines: list[dict[str, Any]] = [{"op": "import_update", "project_path": str(demo), "source_path": TEXTURE,
              "params": {"compress/mode": "VRAM Compressed"}},
             {"op": "import_read", "project_path": str(demo), "source_path": "missing.png"}]
    replies = list(bridge.batch(lines, atomic=True))
    assert replies[0]["error"]["code"] == "rolled_back", replies
    after = snapshot(demo)
    assert {path: sha for path, sha in after.items() if not path.startswith(".godot/")} == before


def test_settings_whose_import_fails_are_put_back(bridge: Bridge, demo: Path) -> None:
    model = demo / "model.glb"
    model.write_bytes(b"glTF not really")
    (demo / "model.glb.import").write_text('[remap]\n\nimporter="scene"\ntype="PackedScene"\n\n[params]\n\n')
    before = snapshot(demo)
    reply = update(bridge, demo, "model.glb", {"nodes/root_type": "Node2D"})
    assert reply["error"]["code"] == "not_imported", reply
    assert "put back as it was" in reply["error"]["message"]
    with Bridge(bridge.settings.godot, auto_import=False) as no_import:
        reply = update(no_import, demo, TEXTURE, {"mipmaps/generate": True})
    assert reply["error"]["code"] == "not_imported" and "put back as it was" in reply["error"]["message"], reply
    after = snapshot(demo)
    assert {path: sha for path, sha in after.items() if not path.startswith(".godot/")} == before


@pytest.mark.parametrize(("text", "words"), [
    (b'[remap]\n\nimporter="oggvorbisstr"\n\n[params]\n\nloop=true\nnote="caf\xe9"\n', "not UTF-8"),
    (b'[remap]\n\nimporter="oggvorbisstr"\n\n[params]\n\nloop=true\n\n[params]\n\nloop=false\n', "two [params]"),
    (b'[remap]\n\nimporter="oggvorbisstr"\n\n[params]\n\nzz="\nbpm=3\n"\nbpm=0\n', "spans lines"),
    (b'[remap]\r\rimporter="oggvorbisstr"\r\r[params]\r\rloop=true\r', "bare CR"),
])
def test_an_import_file_that_cannot_be_edited_line_by_line_is_refused(
        bridge: Bridge, demo: Path, text: bytes, words: str) -> None:
    (demo / f"{SOUND}.import").write_bytes(text)
    before = snapshot(demo)
    reply = update(bridge, demo, SOUND, {"bpm": 100})
    assert reply["error"]["code"] == "load_failed" and words in reply["error"]["message"], reply
    assert snapshot(demo) == before


def test_an_import_file_that_is_a_link_is_refused(bridge: Bridge, demo: Path) -> None:
    own = demo / f"{TEXTURE}.import"
    own.unlink()
    own.symlink_to("enemyFlyingAlt_2.png.import")
    reply = update(bridge, demo, TEXTURE, {"mipmaps/generate": True})
    assert reply["error"]["code"] == "invalid_path" and "link" in reply["error"]["message"], reply
    assert "mipmaps/generate=false" in (demo / "art" / "enemyFlyingAlt_2.png.import").read_text()


def test_a_normal_map_must_be_an_image_of_the_project(bridge: Bridge, demo: Path) -> None:
    reply = update(bridge, demo, TEXTURE, {"roughness/src_normal": "main.gd"})
    assert reply["error"]["code"] == "invalid_value" and "no image" in reply["error"]["message"], reply


def test_an_import_file_that_makes_objects_is_refused_to_read_and_to_change(bridge: Bridge, demo: Path) -> None:
    path = demo / f"{SOUND}.import"
    path.write_text(path.read_text().replace("bar_beats=4", 'bar_beats=4\nextra=Resource("res://hud.tscn")'))
    before = snapshot(demo)
    for reply in (bridge.run({"op": "import_read", "project_path": str(demo), "source_path": SOUND}),
                  update(bridge, demo, SOUND, {"bpm": 100})):
        assert reply["error"]["code"] == "unsafe_resource", reply
    assert snapshot(demo) == before
