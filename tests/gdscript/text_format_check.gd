extends SceneTree
## Read each file named on the command line with the text reader and print one JSON line per file
## with what the scan found; a last line says DONE.
## Run: godot --headless -s tests/gdscript/text_format_check.gd -- <repo> <file>...


func _initialize() -> void:
	var args: PackedStringArray = OS.get_cmdline_user_args()
	var text_format: GDScript = load(args[0].path_join("gdscript/formats/text_format.gd"))
	var scan_class: GDScript = load(args[0].path_join("gdscript/formats/scan.gd"))
	for path: String in args.slice(1):
		var bytes: PackedByteArray = FileAccess.get_file_as_bytes(path)
		var scan: RefCounted = scan_class.new()
		text_format.new(bytes, scan).resource_file()
		print(JSON.stringify({"file": path, "scan": _summary(scan)}))
	print("DONE")
	quit()


func _summary(scan: RefCounted) -> Dictionary:
	return {
		# URI-encoded: the engine's JSON writer emits escapes (\v) that JSON does not have.
		"classes": scan.get("classes").map(func(entry: Dictionary) -> String: return str(entry["type"]).uri_encode()),
		"loads": scan.get("loads").map(_load_text),
		"script": not str(scan.get("script_set")).is_empty(),
		"unreadable": not str(scan.get("unreadable")).is_empty(),
		"corrupt": not str(scan.get("corrupt")).is_empty(),
		"finished": scan.get("finished"),
	}


func _load_text(entry: Dictionary) -> String:
	return ("%s|%s|%s" % [entry["path"], entry["uid"], entry["base"]]).uri_encode()
