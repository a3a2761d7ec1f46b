extends SceneTree
## Lay out the bridge's scripts as binary tokens, from the pack `godot --export-pack` made of them
## with the preset's script_export_mode=1 (gdres/engine/tokens.py writes that preset and runs both).
##
## Run as `godot --headless --path <empty folder> -s tokens.gd -- <the pack> <out folder>`.
## Each script goes to <out>/<its path>.gdc, the engine's binary tokens, with <its path>.gd.remap
## beside it naming that file by its absolute path: the engine follows a remap from any path it
## loads, so `-s <out>/main.gd` and every preload("x.gd") of the scripts load the tokens. The data
## files (.json) are copied as they are. Then every script is loaded back from <out> and must
## compile: a folder that holds a script the engine would not run is never used.

const AtomicWrite = preload("../files/atomic_write.gd")
const _SCRIPTS: String = "res://gdscript"


func _initialize() -> void:
	var args: PackedStringArray = OS.get_cmdline_user_args()
	var ok: bool = args.size() == 2 and ProjectSettings.load_resource_pack(args[0], false)
	var scripts: PackedStringArray = []
	if ok:
		ok = _lay_out(_SCRIPTS, args[1], scripts) == OK
	for script: String in scripts:
		if ok:
			var loaded: Resource = load(script)
			ok = loaded is GDScript and (loaded as GDScript).can_instantiate()
			if not ok:
				printerr("%s does not compile from its binary tokens" % script)
	quit(0 if ok and not scripts.is_empty() else 1)


## Lay out the folder `from` of the pack in the folder `to`; note the path each script loads by.
func _lay_out(from: String, to: String, scripts: PackedStringArray) -> Error:
	var err: Error = DirAccess.make_dir_recursive_absolute(to)
	var folder: DirAccess = DirAccess.open(from)
	if err != OK or folder == null:
		return FAILED if err == OK else err
	for name: String in folder.get_files():
		var extension: String = name.get_extension()
		if extension in ["gdc", "json"]:
			err = _store(to.path_join(name), FileAccess.get_file_as_bytes(from.path_join(name)))
		if extension == "gdc" and err == OK:
			var remap: String = '[remap]\n\npath="%s"\n' % to.path_join(name).c_escape()
			err = _store(to.path_join(name.get_basename() + ".gd.remap"), remap.to_utf8_buffer())
			scripts.append(to.path_join(name.get_basename() + ".gd"))
		if err != OK:
			return err
	for sub: String in folder.get_directories():
		err = _lay_out(from.path_join(sub), to.path_join(sub), scripts)
		if err != OK:
			return err
	return OK


## Write `bytes` (read from the pack: none is a read that failed) as the file at `path`.
func _store(path: String, bytes: PackedByteArray) -> Error:
	return ERR_FILE_CANT_READ if bytes.is_empty() else AtomicWrite.store(path, bytes)
