extends SceneTree
## Build the settings pack a worker starts with (`--main-pack`): the bridge's own project settings
## in place of the project's, so that starting an engine on a project runs none of its code.
##
## Run as `godot --headless --path <empty folder> -s make_pack.gd -- <out.pck> <flavour> <pack path>`,
## the last the path the pack will have once the bridge renames it there.
## The engine reads `res://project.binary` before `project.godot` and a file in the main pack before
## the same path on disk, so the pack's settings win over any the project has: no autoload, theme,
## custom font or bus layout named by the project is loaded at start (each of those can carry a
## script). Flavour "safe" also shadows `.godot/extension_list.cfg` (GDExtension libraries loaded at
## start) and `.godot/global_script_class_cache.cfg` (whose `Resource("...")` values are loaded at
## start) with empty files, and `.godot/scene_groups_cache.cfg` (parsed at start); flavour "trusted"
## (allow_scripts) leaves those to the project.
##
## The audio bus layout is named below the pack itself, where no file can be: before any of the
## bridge's scripts runs, the engine looks for the layout its settings name, and reads the `.remap`
## file beside that path with the parser that builds objects and scripts. The engine's default
## (res://default_bus_layout.tres) is in the project, and so is "" (`.remap`): a project's remap file
## there ran its code in every worker (a red-team read found it; tests/engine/test_isolation.py).


func _initialize() -> void:
	var args: PackedStringArray = OS.get_cmdline_user_args()
	quit(0 if args.size() == 3 and _build(args[0], args[1], args[2]) == OK else 1)


func _build(out: String, flavour: String, final: String) -> Error:
	var scratch: String = out + ".parts"
	DirAccess.make_dir_recursive_absolute(scratch)
	# Only what a worker needs differs from the defaults: replies go to stderr, so it stays on; and
	# no log file per engine start in the user's data folder (on by default on desktop platforms).
	ProjectSettings.set_setting("application/config/name", "gdres worker")
	ProjectSettings.set_setting("application/run/disable_stderr", false)
	ProjectSettings.set_setting("debug/file_logging/enable_file_logging", false)
	ProjectSettings.set_setting("debug/file_logging/enable_file_logging.pc", false)
	# The worker's heartbeat (main.gd) must reach the pipe at once to notice a bridge that is gone.
	ProjectSettings.set_setting("application/run/flush_stdout_on_print", true)
	ProjectSettings.set_setting("application/run/flush_stdout_on_print.debug", true)
	ProjectSettings.set_setting("audio/buses/default_bus_layout", final.path_join("none.tres"))
	var err: Error = ProjectSettings.save_custom(scratch.path_join("project.binary"))
	if err != OK:
		return err
	var empty: FileAccess = FileAccess.open(scratch.path_join("empty"), FileAccess.WRITE)
	if empty == null:
		return FileAccess.get_open_error()
	empty.close()
	var packer: PCKPacker = PCKPacker.new()
	err = packer.pck_start(out)
	if err == OK:
		err = packer.add_file("res://project.binary", scratch.path_join("project.binary"))
	if err == OK and flavour == "safe":
		for shadowed: String in [
			"res://.godot/extension_list.cfg",
			"res://.godot/global_script_class_cache.cfg",
			"res://.godot/scene_groups_cache.cfg"
		]:
			err = packer.add_file(shadowed, scratch.path_join("empty")) if err == OK else err
	if err == OK:
		err = packer.flush()
	DirAccess.remove_absolute(scratch.path_join("project.binary"))
	DirAccess.remove_absolute(scratch.path_join("empty"))
	DirAccess.remove_absolute(scratch)
	return err
