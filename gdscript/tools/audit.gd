extends MainLoop
## List the resource files of a project that the guard would not let the engine load without
## allow_scripts (they carry code, cannot be vouched for, or reach outside the project), one res://
## path per line on stdout
## after a line "UNSAFE". The bridge leaves them out of the copy of the project it imports
## (bridge/imports.py): an importer may load a resource (a scene's external material), and the
## editor runs the code of a @tool script it loads.
##
## Run as a worker is run (--path PROJECT --main-pack <safe pack>), with the project's real path:
## godot --headless --path P --main-pack PACK -s audit.gd -- P

const Guard = preload("../safety/guard.gd")
const Job = preload("../job.gd")
const Paths = preload("../safety/paths.gd")

const _RESOURCE_EXTENSIONS: Array[String] = ["tres", "tscn", "res", "scn"]


func _initialize() -> void:
	Paths.set_root(OS.get_cmdline_user_args()[0])
	var unsafe: PackedStringArray = []
	_walk("res://", unsafe)
	print("UNSAFE\n" + "\n".join(unsafe))


func _process(_delta: float) -> bool:
	return true


func _walk(folder: String, unsafe: PackedStringArray) -> void:
	var dir: DirAccess = DirAccess.open(Paths.absolute(folder))
	if dir == null:
		return
	for name: String in dir.get_files():
		var path: String = folder.path_join(name)
		if name.get_extension().to_lower() in _RESOURCE_EXTENSIONS:
			var job: Job = Job.new({})
			Guard.check(path, job, "file")
			if job.code == Job.UNSAFE_RESOURCE or job.code == Job.PATH_OUTSIDE_PROJECT:
				unsafe.append(path)
	for name: String in dir.get_directories():
		if folder == "res://" and name == ".godot":
			continue
		if not dir.is_link(Paths.absolute(folder.path_join(name))):
			_walk(folder.path_join(name), unsafe)
