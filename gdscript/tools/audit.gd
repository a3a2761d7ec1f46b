extends MainLoop
## List the files of a project that its import must not see, one res:// path per line on stdout
## after a line "UNSAFE": resource files the gate (safety/gate.gd) would refuse to let the engine
## parse without allow_scripts (they carry code, cannot be vouched for, or name a file outside the
## project), `.remap` files that lead to code or out of the project, and assets whose `.import`
## parameters name a script or a file outside the project (the asset is listed: it is not imported).
## The bridge leaves them out of the copy of the project it imports (godot_bridge/serving/imports.py): an importer
## may load a resource (a scene's external material), runs an import script, and the editor runs
## the code of a @tool script it loads. Each file is judged by its own bytes: what it names is
## either judged too or, left out, fails to load in the import.
##
## Run as a worker is run (--path PROJECT --main-pack <safe pack>), with the project's real path:
## godot --headless --path P --main-pack PACK -s audit.gd -- P

const Gate = preload("../safety/gate.gd")
const Imported = preload("../safety/imported.gd")
const Paths = preload("../safety/paths.gd")
const Scan = preload("../formats/scan.gd")

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
		if not _safe(path, name.get_extension().to_lower()):
			unsafe.append(path.trim_suffix(".import") if name.ends_with(".import") else path)
	for name: String in dir.get_directories():
		if folder == "res://" and name == ".godot":
			continue
		if not dir.is_link(Paths.absolute(folder.path_join(name))):
			_walk(folder.path_join(name), unsafe)


static func _safe(path: String, extension: String) -> bool:
	var real: String = Paths.real(path)
	if not Paths.inside(real):
		return false
	if extension in _RESOURCE_EXTENSIONS:
		var scan: Scan = Gate.read(FileAccess.get_file_as_bytes(real))
		if Gate.judge(scan) != Gate.MAY:
			return false
		# The editor opens what a file names to learn its dependencies: nothing out of the project.
		for load: Dictionary in scan.loads:
			var named: String = Gate.named(load, path)
			if not named.is_empty() and not Paths.opens_inside(named):
				return false
		return true
	if extension == "import":
		return Imported.unsafe_import(Imported.config(real), Gate.code_extensions())[0].is_empty()
	if extension == "remap":
		var target: Variant = Imported.remap_values(Imported.config(real)).get("path", "")
		if typeof(target) != TYPE_STRING or target.is_empty():
			return true
		return Paths.opens_inside(target) and target.get_extension().to_lower() not in Gate.code_extensions()
	return true
