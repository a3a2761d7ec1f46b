extends SceneTree
## Read chains of scene texts, each an edit of the one before, the way a worker reads the scenes it
## edits: the first whole, each next one by SceneText.reread() from what was read of the one before
## (where it lends itself; whole where not). Print one JSON line per edit saying whether reread()
## applied and whether it gave exactly what a whole read gives (its outline and every finding);
## a last line says DONE.
## Run: godot --headless -s tests/gdscript/reread_check.gd -- <repo> <manifest.json>
## (the manifest: a JSON list of chains, each a list of file paths).


func _initialize() -> void:
	var args: PackedStringArray = OS.get_cmdline_user_args()
	var text_format: GDScript = load(args[0].path_join("gdscript/formats/text_format.gd"))
	var scan_class: GDScript = load(args[0].path_join("gdscript/formats/scan.gd"))
	var scene_text: GDScript = load(args[0].path_join("gdscript/files/scene_text.gd"))
	for chain: Array in JSON.parse_string(FileAccess.get_file_as_string(args[1])):
		var old: PackedByteArray = FileAccess.get_file_as_bytes(chain[0])
		var old_scan: RefCounted = scan_class.new()
		var old_sections: Array[Dictionary] = text_format.new(old, old_scan).outline()
		for path: String in chain.slice(1):
			var new: PackedByteArray = FileAccess.get_file_as_bytes(path)
			var whole: RefCounted = scan_class.new()
			var whole_sections: Array[Dictionary] = text_format.new(new, whole).outline()
			var into: RefCounted = scan_class.new()
			var sections: Array[Dictionary] = scene_text.reread(old, old_sections, old_scan, new, into)
			var applied: bool = not sections.is_empty()
			var differs: String = ""
			if applied:
				differs = _difference(sections, whole_sections, into, whole)
			else:
				sections = whole_sections
				into = whole
			print(JSON.stringify({"file": path, "applied": applied, "differs": differs.uri_encode()}))
			old = new
			old_sections = sections
			old_scan = into
	print("DONE")
	quit()


## What differs between a reread and a whole read ("" when nothing does).
func _difference(sections: Array[Dictionary], whole_sections: Array[Dictionary], scan: Object, whole: Object) -> String:
	for field: String in [
		"classes",
		"loads",
		"file_values",
		"scripts",
		"script_set",
		"inline_load",
		"lined",
		"unreadable",
		"corrupt",
		"finished"
	]:
		if scan.get(field) != whole.get(field):
			return "%s: %s against %s" % [field, str(scan.get(field)), str(whole.get(field))]
	if sections.size() != whole_sections.size():
		return "%d sections against %d" % [sections.size(), whole_sections.size()]
	for i: int in sections.size():
		if sections[i] != whole_sections[i]:
			return "section %d: %s against %s" % [i, str(sections[i]), str(whole_sections[i])]
	return ""
