extends SceneTree
## Confine each path of a JSON file as a property value is confined (gdscript/safety/paths.gd), in the
## project the file names, and print one JSON line per path: its code ("ok" or the error's), its
## message, the res:// path confine() gives and that path's real path; a last line says DONE.
## Run: godot --headless -s tests/gdscript/paths_check.gd -- <repo> <file with {"root", "paths"}>


func _initialize() -> void:
	var args: PackedStringArray = OS.get_cmdline_user_args()
	var paths: GDScript = load(args[0].path_join("gdscript/safety/paths.gd"))
	var job_class: GDScript = load(args[0].path_join("gdscript/job.gd"))
	var input: Dictionary = JSON.parse_string(FileAccess.get_file_as_string(args[1]))
	paths.call("set_root", input["root"])
	for text: String in input["paths"]:
		var job: RefCounted = job_class.new()
		var res: String = paths.call("confine", text, job, "value")
		var code: String = job.get("code")
		var line: Dictionary = {
			"code": code if not code.is_empty() else "ok", "message": job.get("message"), "res": res, "real": ""
		}
		if not res.is_empty():
			line["real"] = paths.call("real", res)
		print(JSON.stringify(line))
	print("DONE")
	quit()
