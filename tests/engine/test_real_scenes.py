"""The scene operations on a real project as it comes from git: the official demo "Dodge the Creeps"
(godotengine/godot-demo-projects 2d/dodge_the_creeps at cae8dc56, MIT, vendored whole but for its
screenshots in tests/fixtures/demos/dodge_the_creeps): Godot 4.6 scenes with unique_ids, scripts on
nodes, instanced scenes, signal connections, sub-resources of sub-resources, textures, a font and
sounds with their *.import files, and no .godot/.

Each edit is held against git (`git diff` shows only the lines the edit must change) and against the
engine's own view: a separate engine instantiates the scene before and after and dumps every node's
stored properties; the two dumps differ in exactly the asked change.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, fresh_clone
from gdres import Bridge

pytestmark = [pytest.mark.engine, pytest.mark.timeout(300)]

DEMO = FIXTURES / "demos" / "dodge_the_creeps"

# Run by a separate engine: every node of the instantiated scene with each stored property's value.
DUMP = """extends SceneTree
func _initialize() -> void:
	var root: Node = (load(OS.get_cmdline_user_args()[0]) as PackedScene).instantiate()
	var out: Array = []
	for node: Node in [root] + root.find_children("*", "", true, false):
		var values: Dictionary = {"class": node.get_class()}
		for info: Dictionary in node.get_property_list():
			if info["usage"] & PROPERTY_USAGE_STORAGE == 0:
				continue
			var value: Variant = node.get(info["name"])
			if value is Resource:
				values[info["name"]] = "%s %s" % [value.get_class(), value.resource_path.get_slice("::", 0)]
			elif not (value is Object):
				values[info["name"]] = var_to_str(value)
		out.append([str(root.get_path_to(node)), values])
	print("DUMP " + JSON.stringify(out))
	quit()
"""


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    """A fresh clone of the demo, committed, so that `git diff` shows what a request changed (its
    assets are imported by the first request that needs them, as on a user's fresh clone)."""
    project = fresh_clone(DEMO, tmp_path)
    (project / ".gitignore").write_text(".godot/\n")  # the demo repository's root .gitignore says so
    for command in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"]):
        subprocess.run(["git", *command], cwd=project, check=True)
    return project


def git_diff(project: Path) -> tuple[list[str], list[str]]:
    """The lines git shows removed and added (untracked files and .godot/ aside)."""
    diff = subprocess.run(["git", "diff", "--unified=0"], cwd=project, capture_output=True, text=True,
                          check=True).stdout
    removed = [line[1:] for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    added = [line[1:] for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    return removed, added


def dump(godot_bin: str, project: Path, tmp_path: Path, scene: str) -> dict[str, dict[str, Any]]:
    script = tmp_path / "dump.gd"
    script.write_text(DUMP)
    done = subprocess.run([godot_bin, "--headless", "--path", str(project), "-s", str(script), "--",
                           f"res://{scene}"], capture_output=True, text=True, timeout=120)
    line = next(line for line in done.stdout.splitlines() if line.startswith("DUMP "))
    result: dict[str, dict[str, Any]] = dict(json.loads(line.removeprefix("DUMP ")))
    return result


def differences(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """node -> {property: [before, after]} for each value that differs; a node only in one: its class."""
    out: dict[str, Any] = {}
    for node in before.keys() | after.keys():
        if node not in before or node not in after:
            out[node] = "added" if node in after else "removed"
            continue
        changed = {name: [before[node].get(name), after[node].get(name)]
                   for name in before[node].keys() | after[node].keys()
                   if before[node].get(name) != after[node].get(name)}
        if changed:
            out[node] = changed
    return out


def test_a_real_scene_reads_as_its_file_stores_it(demo: Path, bridge: Bridge) -> None:
    reply = bridge.run({"op": "scene_read", "project_path": str(demo), "scene_path": "main.tscn"})
    assert reply["result"] == "ok", reply
    assert reply["uid"] == "uid://bggkaprn62fwm"
    nodes = {node["path"]: node for node in reply["nodes"]}
    assert list(nodes) == [".", "ColorRect", "Player", "MobTimer", "ScoreTimer", "StartTimer", "StartPosition",
                           "MobPath", "MobPath/MobSpawnLocation", "HUD", "Music", "DeathSound"]
    assert nodes["."]["script"] == "res://main.gd"
    assert nodes["."]["properties"]["mob_scene"]["path"] == "res://mob.tscn"
    assert nodes["Player"]["type"] == "Area2D" and nodes["Player"]["instance"] == "res://player.tscn"
    assert nodes["HUD"]["type"] == "CanvasLayer"
    assert nodes["Music"]["properties"]["stream"]["path"] == "res://art/House In a Forest Loop.ogg"
    assert nodes["MobPath"]["properties"]["curve"]["properties"]["point_count"] == 5
    assert [c["method"] for c in reply["connections"]] == ["game_over", "_on_MobTimer_timeout",
                                                          "_on_ScoreTimer_timeout", "_on_StartTimer_timeout",
                                                          "new_game"]
    assert git_diff(demo) == ([], [])
    assert subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=demo, capture_output=True,
                          text=True, check=True).stdout.strip() == ""


def imported_view(bridge: Bridge, demo: Path, godot_bin: str, tmp_path: Path) -> dict[str, dict[str, Any]]:
    """The engine's view of main.tscn, once the bridge has imported what the scene needs."""
    assert bridge.run({"op": "scene_read", "project_path": str(demo), "scene_path": "main.tscn"})["result"] == "ok"
    return dump(godot_bin, demo, tmp_path, "main.tscn")


def test_a_real_scene_edit_changes_one_line_and_the_engine_sees_only_it(
    demo: Path, bridge: Bridge, godot_bin: str, tmp_path: Path
) -> None:
    before = imported_view(bridge, demo, godot_bin, tmp_path)
    reply = bridge.run({"op": "node_set_properties", "project_path": str(demo), "scene_path": "main.tscn",
                        "node_path": "MobTimer", "properties": {"wait_time": 0.25}})
    assert reply["changed"] == ["wait_time"], reply
    assert git_diff(demo) == (["wait_time = 0.5"], ["wait_time = 0.25"])
    assert differences(before, dump(godot_bin, demo, tmp_path, "main.tscn")) == {
        "MobTimer": {"wait_time": ["0.5", "0.25"]}}


def test_a_node_of_a_real_instance_is_overridden(demo: Path, bridge: Bridge, godot_bin: str, tmp_path: Path) -> None:
    before = imported_view(bridge, demo, godot_bin, tmp_path)
    reply = bridge.run({"op": "node_set_properties", "project_path": str(demo), "scene_path": "main.tscn",
                        "node_path": "Player/Trail", "properties": {"amount": 24}})
    assert reply["made_editable"] == ["Player"], reply
    removed, added = git_diff(demo)
    assert removed == []
    assert [line for line in added if line] == ['[node name="Trail" parent="Player"]', "amount = 24",
                                                '[editable path="Player"]']
    after = dump(godot_bin, demo, tmp_path, "main.tscn")
    assert differences(before, after) == {"Player/Trail": {"amount": ["10", "24"]}}


def test_nodes_added_and_removed_in_a_real_scene(demo: Path, bridge: Bridge, godot_bin: str, tmp_path: Path) -> None:
    before = imported_view(bridge, demo, godot_bin, tmp_path)
    added_reply = bridge.run({"op": "node_add", "project_path": str(demo), "scene_path": "main.tscn",
                              "parent_path": ".", "name": "BonusTimer", "type": "Timer", "index": 4,
                              "properties": {"wait_time": 3, "one_shot": True}})
    assert added_reply["node_path"] == "BonusTimer", added_reply
    removed_reply = bridge.run({"op": "node_remove", "project_path": str(demo), "scene_path": "main.tscn",
                                "node_path": "ScoreTimer"})
    assert removed_reply["removed"] == ["ScoreTimer"], removed_reply
    removed, added = git_diff(demo)
    assert [line for line in removed if line] == [
        '[node name="ScoreTimer" type="Timer" parent="." unique_id=451982858]',
        '[connection signal="timeout" from="ScoreTimer" to="." method="_on_ScoreTimer_timeout"]']
    assert added[0].startswith('[node name="BonusTimer" type="Timer" parent="." unique_id=')
    assert [line for line in added[1:] if line] == ["wait_time = 3.0", "one_shot = true"]
    after = dump(godot_bin, demo, tmp_path, "main.tscn")
    assert differences(before, after) == {"BonusTimer": "added", "ScoreTimer": "removed"}
    assert list(after).index("BonusTimer") == list(after).index("StartTimer") - 1
