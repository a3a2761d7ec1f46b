extends SceneTree
## Rewrite a file in place with gdscript/files/atomic_write.gd and print what it then holds, as
## JSON: {"error": <Error>, "bytes": <the file's text>}.
## Run: godot --headless -s tests/gdscript/rewrite_check.gd -- <atomic_write.gd> <file> <text>


func _initialize() -> void:
	var args: PackedStringArray = OS.get_cmdline_user_args()
	var atomic_write: GDScript = load(args[0])
	var err: Error = atomic_write.rewrite(args[1], args[2].to_utf8_buffer())
	print(JSON.stringify({"error": err, "text": FileAccess.get_file_as_string(args[1])}))
	quit()
