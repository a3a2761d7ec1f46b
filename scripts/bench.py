#!/usr/bin/env python3
"""Measure gdres against a fresh engine per request and against the engine's own limit.

Generates a project and a mixed batch (material_create with 5 properties, shape_create saved,
style_box_create, resource_read depth 1, resource_duplicate with an override; equal shares), then
measures, in one run:

  1. baseline: a fresh `godot --headless -s oneshot.gd` per request (how other tools work), on a sample;
  2. `gdres run` per request, on the same sample;
     and `gdres run --warm` per request, its project's host up;
  3. `gdres batch --jobs 1` on the whole batch;
     and `gdres batch --atomic` on the same (all-or-nothing: one at a time, journalled);
     and 1,000 node edits on one scene through `batch --jobs 1` (node_set_properties on 50 nodes in
     turn: a position and a visibility each, so every edit rewrites lines), beside the resource writes;
  4. `gdres batch --jobs 2` on the same;
  5. the limit: one engine process running a minimal typed GDScript loop of the same saves and
     loads (`StandardMaterial3D.new()`, its properties set as typed values, `ResourceSaver.save`;
     the same for the box shape, the style box, load + duplicate + save, and load + list), written
     here for the benchmark and sharing no code with the bridge;
     and the verified loop: the same, each save loaded back with CACHE_MODE_IGNORE and compared
     (`var_to_bytes_with_objects` of what was saved against what loads), what a proven write costs
     at the least;
  6. a generic plain loop: the same operations with the class named by the request and each value
     converted by the property's type (what a tool without the bridge's checks would do);
  and, for scale, two generic loops at once on halves of the batch: how much two engines gain over
  one on this machine with no bridge at all, the ceiling of ratio 4/3; and, where the MCP SDK is
  installed, a tool call inside an MCP session (the SDK's client, `gdres mcp`, small
  style_box_create writes) against the same write through `Bridge.run()`, in ms per call.

First it runs `gdres doctor`, as the README has users do (it makes the binary tokens of the bridge's
scripts for this Godot, which its workers then run). Every stage starts from the same clean project
and is timed end to end (process start to exit).
Prints requests per second, the ratios 3/1, 3/5 and 4/3, the bridge's own CPU per request (which
bounds how many engines one bridge keeps busy; over the whole batch, and after its first tenth, without
the start-up) and the peak RSS of an engine worker during stage 3,
as a table, or as JSON with --json. It measures; it asserts nothing.

`--jobs-sweep 1,2,4,8,16` measures instead, for each J, `batch --jobs J` against J generic loops and
J minimal loops run side by side, each on 1/J of the batch.

    .venv/bin/python scripts/bench.py [--requests 5000] [--sample 30] [--dir DIR] [--json]
    .venv/bin/python scripts/bench.py --jobs-sweep 1,2,4,8,16 [--requests 20000]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psutil

from gdres import Bridge

SOURCES = 10
PER_FOLDER = 250
OPS = ("material_create", "shape_create", "style_box_create", "resource_read", "resource_duplicate")
NODE_EDITS = 1000
SCENE_NODES = 50
SCENE_TSCN = ('[gd_scene format=3 uid="uid://bbenchscene01"]\n\n[sub_resource type="BoxMesh" id="BoxMesh_bench"]\n\n'
              '[node name="Level" type="Node3D" unique_id=1]\n'
              + "".join(f'\n[node name="Mesh{k}" type="MeshInstance3D" parent="." unique_id={k + 2}]\n'
                        'mesh = SubResource("BoxMesh_bench")\n' for k in range(SCENE_NODES)))
"""The scene of the node edits, as the 4.6 editor writes one."""

PROJECT_GODOT = """; Engine configuration file.
config_version=5

[application]

config/name="gdres-bench"
config/features=PackedStringArray("4.3")
"""

SOURCE_TRES = """[gd_resource type="StandardMaterial3D" format=3]

[resource]
albedo_color = Color({r}, 0.4, 0.6, 1)
roughness = 0.25
metallic = 0.5
"""

# The benchmark's own engine-side code: plain engine calls, nothing from the bridge.
BENCH_OPS_GD = r'''extends RefCounted
## One benchmark operation with plain engine calls: create and save, load and list, duplicate.


static func perform(op: Dictionary) -> String:
	match op["op"]:
		"material_create":
			return _create(op["material_type"], op["properties"], op["path"])
		"shape_create":
			return _create(op["shape_type"], op["shape_params"], op["save_path"])
		"style_box_create":
			return _create(op["style_type"], op["properties"], op["path"])
		"resource_read":
			var loaded: Resource = ResourceLoader.load(op["path"], "", ResourceLoader.CACHE_MODE_REPLACE_DEEP)
			return JSON.stringify(_stored(loaded, 1))
		"resource_duplicate":
			var source: Resource = ResourceLoader.load(op["source_path"], "", ResourceLoader.CACHE_MODE_REPLACE_DEEP)
			var copy: Resource = source.duplicate(false)
			_apply(copy, op["property_overrides"])
			return error_string(_save(copy, op["dest_path"]))
	return "unknown op"


static func _create(type: String, properties: Dictionary, path: String) -> String:
	var resource: Resource = ClassDB.instantiate(type)
	_apply(resource, properties)
	return error_string(_save(resource, path))


static func _save(resource: Resource, path: String) -> Error:
	DirAccess.make_dir_recursive_absolute(path.get_base_dir())
	return ResourceSaver.save(resource, path)


static func _apply(target: Object, values: Dictionary) -> void:
	var types: Dictionary = {}
	for info: Dictionary in target.get_property_list():
		types[info["name"]] = info["type"]
	for name: String in values:
		target.set(name, _convert(values[name], types.get(name, TYPE_NIL)))


static func _convert(value: Variant, type: int) -> Variant:
	if type == TYPE_COLOR:
		return Color(value)
	if type == TYPE_VECTOR3:
		return Vector3(value[0], value[1], value[2])
	return type_convert(value, type)


static func _stored(resource: Resource, depth: int) -> Dictionary:
	var out: Dictionary = {}
	for info: Dictionary in resource.get_property_list():
		if info["usage"] & PROPERTY_USAGE_STORAGE == 0:
			continue
		var name: String = info["name"]
		var value: Variant = resource.get(name)
		if value == ClassDB.class_get_property_default_value(resource.get_class(), name):
			continue
		if value is Resource and depth > 0:
			out[name] = _stored(value, depth - 1)
		else:
			out[name] = var_to_str(value)
	return out
'''

# The limit: the same work with typed engine calls and nothing else.
MINIMAL_OPS_GD = r'''extends RefCounted
## One benchmark operation, minimal: typed objects, typed values, one save. With `verify`, each save
## is loaded back fresh and compared with what was saved (the verified loop).

## Whether each save is loaded back (CACHE_MODE_IGNORE) and compared, as var_to_bytes_with_objects.
static var verify: bool = false


static func perform(op: Dictionary) -> String:
	match op["op"]:
		"material_create":
			var material: StandardMaterial3D = StandardMaterial3D.new()
			material.albedo_color = Color("#cc3311")
			material.roughness = 0.4
			material.metallic = 0.7
			material.emission_enabled = true
			material.emission = Color("#221100")
			return _save(material, op["path"])
		"shape_create":
			var shape: BoxShape3D = BoxShape3D.new()
			var size: Array = op["shape_params"]["size"]
			shape.size = Vector3(size[0], size[1], size[2])
			return _save(shape, op["save_path"])
		"style_box_create":
			var style: StyleBoxFlat = StyleBoxFlat.new()
			style.bg_color = Color("#202830")
			style.border_width_top = 2
			style.border_color = Color("#ffcc00")
			return _save(style, op["path"])
		"resource_read":
			var loaded: Resource = ResourceLoader.load(op["path"], "", ResourceLoader.CACHE_MODE_IGNORE)
			var out: Dictionary = {}
			for info: Dictionary in loaded.get_property_list():
				if info["usage"] & PROPERTY_USAGE_STORAGE:
					out[info["name"]] = var_to_str(loaded.get(info["name"]))
			return JSON.stringify(out)
		"resource_duplicate":
			var mode: ResourceLoader.CacheMode = ResourceLoader.CACHE_MODE_IGNORE
			var source: StandardMaterial3D = ResourceLoader.load(op["source_path"], "", mode)
			var copy: StandardMaterial3D = source.duplicate()
			copy.roughness = 0.9
			return _save(copy, op["dest_path"])
	return "unknown op"


static func _save(resource: Resource, path: String) -> String:
	DirAccess.make_dir_recursive_absolute(path.get_base_dir())
	var saved: Error = ResourceSaver.save(resource, path)
	if saved != OK or not verify:
		return error_string(saved)
	var loaded: Resource = ResourceLoader.load(path, "", ResourceLoader.CACHE_MODE_IGNORE)
	if loaded == null or var_to_bytes_with_objects(loaded) != var_to_bytes_with_objects(resource):
		return "MISMATCH"
	return error_string(saved)
'''

LOOP_GD = r'''extends SceneTree
## Every operation of the batch file in one engine process, no bridge: with bench_ops.gd (the generic
## loop) or, given "minimal" or "verified" after the file, bench_minimal.gd (the limit, and the limit
## with each save loaded back and compared).

const Generic = preload("bench_ops.gd")
const Minimal = preload("bench_minimal.gd")


func _initialize() -> void:
	var args: PackedStringArray = OS.get_cmdline_user_args()
	var lines: PackedStringArray = FileAccess.get_file_as_string(args[0]).split("\n", false)
	var ops: GDScript = Minimal if args.size() > 1 and args[1] in ["minimal", "verified"] else Generic
	Minimal.verify = args.size() > 1 and args[1] == "verified"
	var started: int = Time.get_ticks_usec()
	var failed: int = 0
	for line: String in lines:
		var result: String = ops.perform(JSON.parse_string(line))
		if result in ["ERR_FILE_CANT_OPEN", "unknown op", "MISMATCH"]:
			failed += 1
	printerr("BENCH %d %d %d" % [lines.size(), failed, Time.get_ticks_usec() - started])
	quit()
'''

ONESHOT_GD = r'''extends SceneTree
## One operation, then exit: what a tool that starts the engine per request does.

const Generic = preload("bench_ops.gd")


func _initialize() -> void:
	Generic.perform(JSON.parse_string(FileAccess.get_file_as_string(OS.get_cmdline_user_args()[0])))
	quit()
'''


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=5000, help="batch size of stages 3-6 (default 5000)")
    parser.add_argument("--sample", type=int, default=30, help="requests of stages 1-2 (default 30)")
    parser.add_argument("--jobs-sweep", metavar="J,J,...", type=jobs_list,
                        help="instead of the stages: batch --jobs J against J plain loops, for each J")
    parser.add_argument("--per-folder", type=int, default=PER_FOLDER, metavar="N",
                        help=f"files written into one folder before the next (default {PER_FOLDER}; 1 gives each "
                             "file a folder of its own, to see what engines writing into one folder cost)")
    parser.add_argument("--processes", type=int, metavar="P",
                        help="batch --processes P in the sweep (default: the bridge's own choice)")
    parser.add_argument("--dir",
                        help="a new or empty folder for the project and its files (default: a new temporary folder)")
    parser.add_argument("--godot", help="Godot binary (default: GODOT_BIN, then godot on PATH)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args()
    godot = args.godot or os.environ.get("GODOT_BIN") or shutil.which("godot") or shutil.which("godot4")
    if not godot:
        sys.exit("bench: no Godot binary (pass --godot or set GODOT_BIN)")
    work = Path(args.dir or tempfile.mkdtemp(prefix="gdres-bench-")).resolve()
    if work.exists() and any(work.iterdir()):
        sys.exit(f"bench: {work} is not empty; give a new or empty folder")
    bench = Bench(work, godot, args.requests, args.sample, args.per_folder, args.processes)
    if args.jobs_sweep:
        results = bench.sweep(args.jobs_sweep)
        print(json.dumps(results, indent=2) if args.json else sweep_table(results))
    else:
        results = bench.run()
        print(json.dumps(results, indent=2) if args.json else table(results))
    return 0


def jobs_list(text: str) -> list[int]:
    """Parse --jobs-sweep: positive integers separated by commas."""
    try:
        jobs = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of integers: {text!r}") from None
    if not jobs or min(jobs) < 1:
        raise argparse.ArgumentTypeError("every J must be at least 1")
    return jobs


class Bench:
    """The generated project and batch, and the measurements."""

    def __init__(self, work: Path, godot: str, requests: int, sample: int, per_folder: int = PER_FOLDER,
                 processes: int | None = None) -> None:
        self.work = work
        self.per_folder = per_folder
        self.processes = processes
        self.godot = godot
        self.project = work / "project"
        self.scripts = work / "scripts"
        self.requests = [self.request(i) for i in range(requests)]
        self.sample = self.requests[:sample]
        self.cli = str(Path(sys.executable).parent / "gdres")

    def request(self, i: int) -> dict[str, Any]:
        """Return the i-th request of the batch: the five operations in turn."""
        folder = f"gen/g{i // self.per_folder}"
        source = f"base/src{i % SOURCES}.tres"
        common = {"project_path": str(self.project), "id": i}
        kind = OPS[i % len(OPS)]
        if kind == "material_create":
            return {**common, "op": kind, "material_type": "StandardMaterial3D",
                    "resource_path": f"{folder}/mat{i}.tres",
                    "properties": {"albedo_color": "#cc3311", "roughness": 0.4, "metallic": 0.7,
                                   "emission_enabled": True, "emission": "#221100"}}
        if kind == "shape_create":
            return {**common, "op": kind, "shape_type": "BoxShape3D", "save_path": f"{folder}/shape{i}.tres",
                    "shape_params": {"size": [1.0, 2.0, 0.5 + i % 7]}}
        if kind == "style_box_create":
            return {**common, "op": kind, "style_type": "StyleBoxFlat", "resource_path": f"{folder}/style{i}.tres",
                    "properties": {"bg_color": "#202830", "border_width_top": 2, "border_color": "#ffcc00"}}
        if kind == "resource_read":
            return {**common, "op": kind, "resource_path": source, "depth": 1}
        return {**common, "op": kind, "source_path": source, "dest_path": f"{folder}/dup{i}.tres",
                "property_overrides": {"roughness": 0.9}}

    def run(self) -> dict[str, Any]:
        """Run the six stages; return their measurements."""
        self.write_files()
        scripts = self.prepare()
        baseline = self.per_request([self.godot, "--headless", "--path", str(self.project), "-s",
                                     str(self.scripts / "oneshot.gd"), "--"], as_file=True)
        run = self.per_request([self.cli, "--godot", self.godot, "run"], as_file=False)
        warm = self.warm_runs()
        jobs1 = self.batch(1)
        nodes = self.batch(1, lines="node_edits.jsonl")
        atomic = self.batch(1, atomic=True)
        jobs2 = self.batch(2)
        calls = self.calls()
        minimal = self.loops(1, minimal=True)
        verified = self.loops(1, minimal=True, verified=True)
        generic = self.loops(1)
        two_loops = self.loops(2)
        rate = {"baseline": baseline["rate"], "run": run["rate"], "run_warm": warm["rate"],
                "batch_jobs_1": jobs1["rate"], "node_edits": nodes["rate"],
                "batch_atomic": atomic["rate"],
                "batch_jobs_2": jobs2["rate"], "minimal_loop": minimal["rate"], "verified_loop": verified["rate"],
                "generic_loop": generic["rate"], "two_generic_loops": two_loops["rate"]}
        return {
            "machine": machine(),
            "scripts": scripts,
            "requests": len(self.requests),
            "sample": len(self.sample),
            "requests_per_second": rate,
            "ratios": {
                "batch_jobs_1/baseline": rate["batch_jobs_1"] / rate["baseline"],
                "batch_jobs_1/minimal_loop": rate["batch_jobs_1"] / rate["minimal_loop"],
                "batch_jobs_1/verified_loop": rate["batch_jobs_1"] / rate["verified_loop"],
                "verified_loop/minimal_loop": rate["verified_loop"] / rate["minimal_loop"],
                "batch_jobs_1/generic_loop": rate["batch_jobs_1"] / rate["generic_loop"],
                "batch_jobs_2/batch_jobs_1": rate["batch_jobs_2"] / rate["batch_jobs_1"],
                "batch_atomic/batch_jobs_1": rate["batch_atomic"] / rate["batch_jobs_1"],
                "node_edits/batch_jobs_1": rate["node_edits"] / rate["batch_jobs_1"],
                "two_generic_loops/generic_loop": rate["two_generic_loops"] / rate["generic_loop"],
            },
            "seconds_per_request": {"baseline": baseline["mean"], "run": run["mean"],
                                    "run_minus_baseline": run["mean"] - baseline["mean"], "run_warm": warm["mean"],
                                    "run_warm_median": warm["median"]},
            "bridge_cpu_us_per_request": {"batch_jobs_1": jobs1["bridge_cpu_us"],
                                          "batch_jobs_2": jobs2["bridge_cpu_us"]},
            "bridge_cpu_us_per_request_after_start": {"batch_jobs_1": jobs1["bridge_cpu_steady_us"],
                                                      "batch_jobs_2": jobs2["bridge_cpu_steady_us"]},
            "ms_per_call": calls,
            "engine_peak_rss_mb": {"batch_jobs_1": jobs1["peak_rss"] / 2**20,
                                   "batch_jobs_2": jobs2["peak_rss"] / 2**20},
            "errors": {"run": run["errors"], "run_warm": warm["errors"], "batch_jobs_1": jobs1["errors"],
                       "node_edits": nodes["errors"],
                       "batch_atomic": atomic["errors"],
                       "batch_jobs_2": jobs2["errors"],
                       "minimal_loop": minimal["errors"], "verified_loop": verified["errors"],
                       "generic_loop": generic["errors"],
                       "two_generic_loops": two_loops["errors"]},
            "loop_inner_seconds": {"minimal": minimal["inner"], "verified": verified["inner"],
                                   "generic": generic["inner"]},
            "project": str(self.project),
            "folder": str(self.work),
        }

    def prepare(self) -> str:
        """Set up as the README has users do: `gdres doctor`, which makes the binary tokens of the
        bridge's scripts for this Godot; return what the workers run ("binary tokens" or "sources")."""
        done = subprocess.run([self.cli, "--godot", self.godot, "doctor", "--json"], capture_output=True,
                              text=True, check=False)
        try:
            made = json.loads(done.stdout).get("scripts", {}).get("binary_tokens", False)
        except json.JSONDecodeError:
            made = False
        return "binary tokens" if made else "sources"

    def sweep(self, jobs: list[int]) -> dict[str, Any]:
        """For each J: batch --jobs J, J generic loops and J minimal loops side by side."""
        self.write_files()
        scripts = self.prepare()
        rows = []
        for count in jobs:
            batch = self.batch(count)
            generic = self.loops(count)
            minimal = self.loops(count, minimal=True)
            rows.append({"jobs": count, "batch": batch["rate"], "generic_loops": generic["rate"],
                         "minimal_loops": minimal["rate"], "batch/generic_loops": batch["rate"] / generic["rate"],
                         "batch/minimal_loops": batch["rate"] / minimal["rate"],
                         "bridge_cpu_us_per_request": batch["bridge_cpu_us"],
                         "errors": batch["errors"] + generic["errors"] + minimal["errors"]})
        single = next((row["batch"] for row in rows if row["jobs"] == 1), None)
        for row in rows:
            # How close J engines come to J times one: 1.0 where nothing but the engines limits the batch.
            row["batch/(J*batch_1)"] = row["batch"] / (row["jobs"] * single) if single else None
        return {"machine": machine(), "scripts": scripts, "requests": len(self.requests), "sweep": rows,
                "folder": str(self.work)}

    def write_files(self) -> None:
        """Write the project, the benchmark's own GDScript, and the batch files."""
        (self.project / "base").mkdir(parents=True)
        (self.project / "project.godot").write_text(PROJECT_GODOT)
        for k in range(SOURCES):
            (self.project / "base" / f"src{k}.tres").write_text(SOURCE_TRES.format(r=k / SOURCES))
        self.scripts.mkdir()
        for name, text in (("bench_ops.gd", BENCH_OPS_GD), ("bench_minimal.gd", MINIMAL_OPS_GD),
                           ("loop.gd", LOOP_GD), ("oneshot.gd", ONESHOT_GD)):
            (self.scripts / name).write_text(text)
        (self.work / "batch.jsonl").write_text("".join(json.dumps(r) + "\n" for r in self.requests))
        (self.project / "level.tscn").write_text(SCENE_TSCN)
        edits = [{"project_path": str(self.project), "id": i, "op": "node_set_properties", "scene_path": "level.tscn",
                  "node_path": f"Mesh{i % SCENE_NODES}",
                  "properties": {"position": [i % 7, i % 3, i % 5], "visible": i // SCENE_NODES % 2 == 1}}
                 for i in range(NODE_EDITS)]
        (self.work / "node_edits.jsonl").write_text("".join(json.dumps(r) + "\n" for r in edits))
        self.ops = [json.dumps(engine_op(r)) + "\n" for r in self.requests]
        for k, r in enumerate(self.sample):
            (self.work / f"sample{k}.json").write_text(json.dumps(engine_op(r)))

    def clean(self) -> None:
        """Move the files of the previous stage out of the project (to DIR/done) and onto the disk.

        They are never deleted: on an ext4 without a journal, the kernel steps past every inode
        freed in the last minutes when it creates a file, so deleting thousands of files slows
        every later stage, and the next run (remove DIR yourself, a few minutes before).
        """
        done = self.work / "done"
        done.mkdir(exist_ok=True)
        if (self.project / "gen").exists():
            (self.project / "gen").rename(done / str(len(list(done.iterdir()))))
        # The kernel writes the last stage's files out in the background, in this stage's time
        # unless done now.
        os.sync()

    def per_request(self, argv: list[str], *, as_file: bool) -> dict[str, Any]:
        """Stages 1 and 2: one process per request of the sample."""
        self.clean()
        times, errors = [], 0
        for k, r in enumerate(self.sample):
            tail = str(self.work / f"sample{k}.json") if as_file else json.dumps(r)
            started = time.perf_counter()
            done = subprocess.run([*argv, tail], capture_output=True, stdin=subprocess.DEVNULL, check=False)
            times.append(time.perf_counter() - started)
            errors += done.returncode != 0
        return {"rate": len(times) / sum(times), "mean": statistics.mean(times),
                "median": statistics.median(times), "errors": errors}

    def warm_runs(self) -> dict[str, Any]:
        """Stage 2a: `gdres run --warm` per request of the sample, once the project's warm host
        is up (started by one run before, not counted); then that host is stopped."""
        argv = [self.cli, "--godot", self.godot, "run", "--warm"]
        subprocess.run([*argv, json.dumps(self.sample[0])], capture_output=True, check=False)
        try:
            return self.per_request(argv, as_file=False)
        finally:
            # The host's command line names nothing; its engine's names the project. SIGTERM ends a
            # host as its idle time does: engine stopped, socket removed.
            project = os.path.realpath(self.project)
            for process in psutil.process_iter(["cmdline"]):
                with contextlib.suppress(psutil.Error):
                    if any("gdres.front.warm_host" in part for part in process.info["cmdline"] or []) and any(
                            project in part.cmdline() for part in process.children(recursive=True)):
                        process.terminate()
                        process.wait(timeout=30)

    def batch(self, jobs: int, *, atomic: bool = False, lines: str = "batch.jsonl") -> dict[str, Any]:
        """The whole batch (or the file `lines` of the work folder) through `gdres batch --jobs N`
        (or `--atomic`); also the bridge process's own CPU time (its engines' not counted) per request:
        over the whole batch, and after its first tenth (start-up, pydantic's import above all, left out)."""
        self.clean()
        count = sum(1 for _ in (self.work / lines).open())
        started = time.perf_counter()
        how = ["--atomic"] if atomic else ["--jobs", str(jobs)]
        if self.processes is not None and not atomic:
            how += ["--processes", str(min(self.processes, jobs))]
        proc = subprocess.Popen([self.cli, "--godot", self.godot, "batch", *how, "--no-progress",
                                 str(self.work / lines)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        peak = PeakRss(proc.pid)
        assert proc.stdout is not None
        tenth = count // 10
        replies, cpu_at_tenth = [], None
        for line in proc.stdout:
            replies.append(json.loads(line))
            if len(replies) == tenth:
                cpu_at_tenth = peak.cpu_now()
        cpu = peak.cpu_now()
        proc.wait()
        elapsed = time.perf_counter() - started
        peak.stop()
        errors = sum(r["result"] != "ok" for r in replies) + count - len(replies)
        steady = (1e6 * (cpu - cpu_at_tenth) / (len(replies) - tenth)
                  if cpu_at_tenth is not None and len(replies) > tenth else None)
        return {"rate": count / elapsed, "peak_rss": peak.value, "errors": errors,
                "bridge_cpu_us": 1e6 * cpu / count, "bridge_cpu_steady_us": steady}

    def calls(self, count: int = 100) -> dict[str, float | None]:
        """Milliseconds per small write: a tool call in an MCP session (None without the SDK), and
        `Bridge.run()` in one process, each after one warm-up call."""
        self.clean()

        def request(i: int) -> dict[str, Any]:
            return {"style_type": "StyleBoxFlat", "resource_path": f"gen/calls/p{i}.tres",
                    "properties": {"bg_color": "#202830"}}

        with Bridge(self.godot) as bridge:
            bridge.run({"op": "style_box_create", "project_path": str(self.project), **request(-1)})
            started = time.perf_counter()
            for i in range(count):
                bridge.run({"op": "style_box_create", "project_path": str(self.project), **request(i)})
            api = (time.perf_counter() - started) / count * 1000
        try:
            import anyio
            from mcp import ClientSession, StdioServerParameters
            from mcp.client.stdio import stdio_client
        except ImportError:
            return {"mcp": None, "api": api}

        async def session() -> float:
            params = StdioServerParameters(command=self.cli, args=["--godot", self.godot, "mcp", "--project",
                                                                   str(self.project)])
            async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
                await client.initialize()
                await client.call_tool("style_box_create", request(count))
                started = time.perf_counter()
                for i in range(count):
                    await client.call_tool("style_box_create", request(count + 1 + i))
                return (time.perf_counter() - started) / count * 1000

        return {"mcp": anyio.run(session), "api": api}

    def loops(self, count: int, *, minimal: bool = False, verified: bool = False) -> dict[str, Any]:
        """`count` engine processes at once, each running a plain GDScript loop over every count-th
        request (as --jobs spreads them), writing to the same folders; `verified`: the minimal loop
        with each save loaded back and compared."""
        self.clean()
        for part in range(count):
            (self.work / f"ops{part}.jsonl").write_text("".join(self.ops[part::count]))
        kind = ["verified"] if verified else ["minimal"] if minimal else []
        started = time.perf_counter()
        procs = [subprocess.Popen([self.godot, "--headless", "--path", str(self.project), "-s",
                                   str(self.scripts / "loop.gd"), "--", str(self.work / f"ops{part}.jsonl"), *kind],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                 for part in range(count)]
        outputs = [proc.communicate()[1] for proc in procs]
        elapsed = time.perf_counter() - started
        done = failed = inner = 0
        for output in outputs:
            line = next((ln for ln in output.decode("utf-8", "replace").splitlines() if ln.startswith("BENCH ")), "")
            n, bad, micros = (int(x) for x in line.split()[1:]) if line else (0, 0, 0)
            done, failed, inner = done + n, failed + bad, max(inner, micros)
        return {"rate": len(self.requests) / elapsed, "errors": failed + len(self.requests) - done,
                "inner": inner / 1e6}


class PeakRss:
    """Sample the largest resident memory of any engine process under `pid`, every 20 ms, and the
    CPU time the bridge has used: `pid` itself and, for a batch served by several processes, each of
    its parts (`batch --part`); its engines not counted."""

    def __init__(self, pid: int) -> None:
        self.value = 0
        self.bridge_cpu = 0.0
        self._parts: dict[int, float] = {}
        self._root = psutil.Process(pid)
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._done.wait(0.02):
            try:
                children = self._root.children(recursive=True)
                times = self._root.cpu_times()
            except psutil.Error:
                return
            self.bridge_cpu = times.user + times.system
            for child in children:
                with contextlib.suppress(psutil.Error):  # a child that exited between listing and reading
                    if "--part" in child.cmdline():
                        part = child.cpu_times()
                        self._parts[child.pid] = part.user + part.system
                    else:
                        self.value = max(self.value, child.memory_info().rss)

    def cpu_now(self) -> float:
        """The CPU time the bridge has used so far (the last sample of a process that has exited)."""
        with contextlib.suppress(psutil.Error):
            times = self._root.cpu_times()
            self.bridge_cpu = times.user + times.system
        return self.bridge_cpu + sum(self._parts.values())

    def stop(self) -> None:
        self._done.set()
        self._thread.join()


def engine_op(request: dict[str, Any]) -> dict[str, Any]:
    """The request as the benchmark's own GDScript takes it: res:// paths, no bridge members."""
    op = {key: value for key, value in request.items() if key not in ("project_path", "id")}
    for key in ("resource_path", "save_path", "source_path", "dest_path"):
        if key in op:
            op["path" if key == "resource_path" else key] = "res://" + op.pop(key)
    return op


def machine() -> dict[str, Any]:
    """Describe the machine: cores, CPU model, memory, Python and Godot."""
    model = ""
    try:
        model = next(ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                     if ln.startswith("model name"))
    except (OSError, StopIteration):
        model = platform.processor()
    return {"cores": len(os.sched_getaffinity(0)), "cpu": model,
            "ram_gb": round(psutil.virtual_memory().total / 2**30, 1), "python": platform.python_version(),
            "load_average_before": [round(x, 2) for x in os.getloadavg()]}


def table(r: dict[str, Any]) -> str:
    """Format the results as a Markdown table with the ratios and targets below it."""
    rate, ratio, per, cpu = r["requests_per_second"], r["ratios"], r["seconds_per_request"], \
        r["bridge_cpu_us_per_request"]
    steady = r["bridge_cpu_us_per_request_after_start"]
    rows = [
        ("1. fresh engine per request (baseline)", f"{r['sample']}", rate["baseline"]),
        ("2. `gdres run` per request", f"{r['sample']}", rate["run"]),
        ("2a. `gdres run --warm` per request, its host up", f"{r['sample']}", rate["run_warm"]),
        ("3. `gdres batch --jobs 1`", f"{r['requests']}", rate["batch_jobs_1"]),
        ("3a. `gdres batch --atomic`", f"{r['requests']}", rate["batch_atomic"]),
        ("3b. node edits on one scene, `batch --jobs 1`", f"{NODE_EDITS}", rate["node_edits"]),
        ("4. `gdres batch --jobs 2`", f"{r['requests']}", rate["batch_jobs_2"]),
        ("5. minimal typed loop, one engine (limit)", f"{r['requests']}", rate["minimal_loop"]),
        ("5v. the same, each save loaded back fresh and compared", f"{r['requests']}", rate["verified_loop"]),
        ("6. generic plain loop, one engine", f"{r['requests']}", rate["generic_loop"]),
        ("two generic loops at once, half each (for scale)", f"{r['requests']}", rate["two_generic_loops"]),
    ]
    lines = ["| stage | requests | req/s |", "|---|---:|---:|"]
    lines += [f"| {name} | {n} | {value:,.1f} |" for name, n, value in rows]
    lines += [
        "",
        f"- 3/1 = {ratio['batch_jobs_1/baseline']:,.0f}x (target >= 300x)",
        (f"- 3/5 = {ratio['batch_jobs_1/minimal_loop']:.2f} (target >= 0.45, issue 29); 3/6 = "
         f"{ratio['batch_jobs_1/generic_loop']:.2f}"),
        (f"- 3/5v = {ratio['batch_jobs_1/verified_loop']:.2f} (a proven write against proving it; target >= 0.67, "
         f"issue 47); 5v/5 = {ratio['verified_loop/minimal_loop']:.2f}"),
        f"- 3a/3 = {ratio['batch_atomic/batch_jobs_1']:.2f} (the cost of --atomic)",
        f"- 3b/3 = {ratio['node_edits/batch_jobs_1']:.2f} (node edits beside resource writes; target >= 0.5, issue 47)",
        (f"- 4/3 = {ratio['batch_jobs_2/batch_jobs_1']:.2f}; two generic loops reach "
         f"{ratio['two_generic_loops/generic_loop']:.2f}x one on this machine"),
        (f"- `run` {per['run']:.3f} s per request vs baseline {per['baseline']:.3f} s: "
         f"{per['run_minus_baseline']:+.3f} s (target <= +0.10 s); `run --warm` with its host up: "
         f"{per['run_warm'] * 1000:.0f} ms (median {per['run_warm_median'] * 1000:.0f} ms; target < 50 ms)"),
        (f"- bridge CPU per request (its engines not counted, start-up included): "
         f"{cpu['batch_jobs_1']:.0f} us in stage 3, {cpu['batch_jobs_2']:.0f} us in stage 4"
         + ("; after the batch's first tenth (start-up left out): "
            f"{steady['batch_jobs_1']:.0f} and {steady['batch_jobs_2']:.0f} us"
            if None not in steady.values() else "")),
        f"- engine worker peak RSS during stage 3: {r['engine_peak_rss_mb']['batch_jobs_1']:.0f} MB (target < 150 MB)",
        (f"- a small write: {r['ms_per_call']['mcp']:.1f} ms per MCP tool call in a session (target <= 5 ms), "
         if r["ms_per_call"]["mcp"] is not None else "- a small write: no MCP SDK here, ")
        + f"{r['ms_per_call']['api']:.1f} ms per `Bridge.run()`",
        f"- error replies: {r['errors']}",
        machine_line(r),
    ]
    return "\n".join(lines)


def sweep_table(r: dict[str, Any]) -> str:
    """Format a --jobs-sweep as a Markdown table: batch against J plain loops, for each J."""
    header = ("| jobs | batch req/s | J generic loops req/s | ratio | J minimal loops req/s | ratio | "
              "batch / (J x batch at J=1) | bridge CPU us/req |")
    lines = [header, "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    lines += [f"| {row['jobs']} | {row['batch']:,.0f} | {row['generic_loops']:,.0f} | "
              f"{row['batch/generic_loops']:.2f} | {row['minimal_loops']:,.0f} | {row['batch/minimal_loops']:.2f} | "
              + (f"{row['batch/(J*batch_1)']:.2f}" if row["batch/(J*batch_1)"] is not None else "-")
              + f" | {row['bridge_cpu_us_per_request']:.0f} |" for row in r["sweep"]]
    errors = sum(row["errors"] for row in r["sweep"])
    lines += ["", f"- {r['requests']} requests per row; error replies: {errors}", machine_line(r)]
    return "\n".join(lines)


def machine_line(r: dict[str, Any]) -> str:
    m = r["machine"]
    return (f"- machine: {m['cores']} cores, {m['cpu']}, {m['ram_gb']} GB RAM, Python {m['python']}, "
            f"load average before the run {m['load_average_before']}\n"
            f"- workers ran the bridge's scripts as {r['scripts']} (after `gdres doctor`)\n"
            f"- generated files: {r['folder']} (left in place; remove it when done)")


if __name__ == "__main__":
    sys.exit(main())
