extends SceneTree
## Print the engine's own table of uids, as the editor left it in the project's .godot/uid_cache.bin:
## one JSON object, uid:// -> res:// path, for each uid given on the command line that it holds.
## Run: godot --headless --path <project> -s tests/gdscript/uid_table.gd -- <uid> ...


func _initialize() -> void:
	var table: Dictionary = {}
	for text: String in OS.get_cmdline_user_args():
		var id: int = ResourceUID.text_to_id(text)
		if ResourceUID.has_id(id):
			table[text] = ResourceUID.get_id_path(id)
	print(JSON.stringify(table))
	quit()
