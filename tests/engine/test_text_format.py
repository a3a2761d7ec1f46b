"""The text reader (gdscript/formats/text_format.gd), the one port of the engine's parser that the load
gate, scene edits and import checks share, reads every file to an answer.

It runs on the hostile corpus, every .tres/.tscn in the repository, layout mutations of scripted
files, and random byte edits of all of those: each file gets a scan (never a GDScript error, which
would silently cut a check short), real files read clean, and every scripted layout is caught.
"""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path
from typing import Any

import hostile_corpus as corpus
from conftest import REPO

CHECK = REPO / "tests" / "gdscript" / "text_format_check.gd"


def sources() -> dict[str, bytes]:
    files = {f"{case.name}/{name}": data for case in corpus.text_cases()
             for name, data in case.files.items() if name.endswith((".tres", ".tscn"))}
    for path in sorted(REPO.glob("**/*.t[rs][ec][sn]")):
        if ".venv" not in path.parts and path.is_file():
            files[str(path.relative_to(REPO))] = path.read_bytes()
    for seed in range(60):
        files[f"mutation/{seed}.tres"] = corpus.mutated(f"m{seed}", seed)
    return files


def run_check(godot_bin: str, files: dict[str, bytes], folder: Path) -> list[dict[str, Any]]:
    paths = []
    for number, data in enumerate(files.values()):
        path = folder / f"{number:04d}.tres"
        path.write_bytes(data)
        paths.append(str(path))
    done = subprocess.run([godot_bin, "--headless", "-s", str(CHECK), "--", str(REPO), *paths],
                          capture_output=True, timeout=600, cwd=folder)
    output = done.stdout.decode("utf-8", "replace") + done.stderr.decode("utf-8", "replace")
    assert "SCRIPT ERROR" not in output, output[output.find("SCRIPT ERROR"):][:2000]
    lines = done.stdout.decode().splitlines()
    assert lines and lines[-1] == "DONE", output[-2000:]
    return [json.loads(line, strict=False) for line in lines if line.startswith("{")]


def test_every_file_is_read_to_an_answer_and_every_scripted_layout_is_caught(godot_bin: str, tmp_path: Path) -> None:
    files = sources()
    results = run_check(godot_bin, files, tmp_path)
    assert len(results) == len(files)
    scans = {name: result["scan"] for name, result in zip(files, results, strict=True)}
    clean = [name for name, scan in scans.items() if name.startswith("tests/fixtures") and scan["finished"]
             and not scan["script"]]
    assert clean, "no real file read as clean"
    missed = [name for name, scan in scans.items() if name.startswith("mutation/") and not scan["script"]
              and scan["finished"]]
    assert missed == [], missed


def test_damaged_files_are_read_to_an_answer(godot_bin: str, tmp_path: Path) -> None:
    rng = random.Random(20261123)
    originals = list(sources().values())
    files = {f"damaged/{i}": corpus.byte_edits(rng.choice(originals), rng) for i in range(3000)}
    results = run_check(godot_bin, files, tmp_path)
    assert len(results) == len(files)


def test_a_reference_before_the_first_tag_is_a_load(godot_bin: str, tmp_path: Path) -> None:
    # Found by random byte edits: a stray character before "[ext_resource" turns the tag into
    # assignments read before the first tag, where ExtResource("...") is a generic load.
    text = (b'[gd_resource type="Resource" format=3]\n\n'
            b'\\[ext_resource type="Texture2D" path="res://nothing.png" id=ExtResource("res://elsewhere.tres")]\n\n'
            b'[resource]\n')
    (result,) = run_check(godot_bin, {"stray.tres": text}, tmp_path)
    assert any("elsewhere.tres" in load for load in result["scan"]["loads"])


def test_a_property_with_no_name_is_not_vouched_for(godot_bin: str, tmp_path: Path) -> None:
    # Found by a red-team read: the engine's scene loader takes `"" = 1` for the section's tag read
    # once more (a second node B), where the reader went on with the same section.
    text = (b'[gd_scene format=3]\n\n[node name="Root" type="Node2D"]\n\n'
            b'[node name="B" type="Node2D" parent="."]\n"" = 1\nposition = Vector2(1, 2)\n')
    (result,) = run_check(godot_bin, {"unnamed.tscn": text}, tmp_path)
    assert result["scan"]["unreadable"] and not result["scan"]["finished"]


def test_an_escaped_surrogate_reads_as_the_engine_reads_it(godot_bin: str, tmp_path: Path) -> None:
    # A pair is one character (the engine joins them), a half alone is a parse error there.
    head = b'[gd_scene format=3]\n\n[node name="Root" type="Node2D"]\n'
    files = {"pair": head + b'"scr\\uD83D\\uDE00" = 1\n', "lead": head + b'x = "\\uD83Da"\n',
             "trail": head + b'x = "\\uDE00"\n', "leads": head + b'x = "\\uD83D\\uD83D"\n'}
    results = run_check(godot_bin, files, tmp_path)
    assert [r["scan"]["corrupt"] for r in results] == [False, True, True, True]


def test_a_resource_section_in_a_scene_is_corrupt(godot_bin: str, tmp_path: Path) -> None:
    # ResourceLoaderText: "found the 'resource' tag on a scene file!".
    text = b'[gd_scene format=3]\n\n[resource]\nload_path = "x"\n\n[node name="Root" type="Node2D"]\n'
    (result,) = run_check(godot_bin, {"resource_in_scene.tscn": text}, tmp_path)
    assert result["scan"]["corrupt"] and not result["scan"]["finished"]
