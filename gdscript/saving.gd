extends RefCounted
## Save resources atomically, keeping UIDs: write a temp file beside the target, fix its UIDs,
## rename it over the target. A failure at any step leaves the target as it was and no temp file.

const Job = preload("job.gd")
const Props = preload("props.gd")
const SceneText = preload("scene_text.gd")
const Paths = preload("safety/paths.gd")

static var _uid_attr: RegEx = RegEx.create_from_string(" uid=\"uid://[^\"]*\"")
static var _ext_line: RegEx = RegEx.create_from_string("(?m)^\\[ext_resource ([^\\n]*?)path=\"([^\"]+)\"([^\\n]*)\\]$")
## One DirAccess for every folder check and rename: each DirAccess.*_absolute call makes its own
## (four system calls more per call). Opened on the project's real path: the worker's settings
## pack makes a DirAccess on res:// see only the pack (see main.gd).
static var _project: DirAccess = null


## Save `resource` as res:// `path`; `where` names the request member for errors. `values_set`
## are the properties a request set (from request member `member`): the engine must have written
## each of them, or the request fails with invalid_value and nothing is saved.
static func save(resource: Resource, path: String, job: Job, where: String, values_set: Dictionary = {}, member: String = "") -> void:
	var folder: String = path.get_base_dir()
	var made: String = _make_folders(folder, job, where)
	if job.failed():
		return
	var uid: String = uid_of(path)
	if uid.is_empty():
		uid = ResourceUID.id_to_text(ResourceUID.create_id())
	var temp: String = temp_path(path)
	var err: Error = ResourceSaver.save(resource, temp)
	if err == OK:
		err = _check_and_stamp(temp, uid, resource, values_set, job, member)
	if err == OK:
		err = _dir().rename(Paths.absolute(temp), Paths.absolute(path))
	if err == OK:
		return
	DirAccess.remove_absolute(Paths.absolute(temp))
	_remove_made(made, folder)
	if job.failed():
		return
	if _dir().dir_exists(Paths.absolute(path)):
		job.fail(Job.SAVE_FAILED, "%s: %s is a folder, so no file can be saved there (ERR_ALREADY_EXISTS)" % [where, path], where)
	else:
		job.fail(Job.SAVE_FAILED, "%s: the engine could not save %s (%s)" % [where, path, Job.error_name(err)], where)


## Put `bytes` in place of the file at res:// `path` the same way: temp file, then rename.
static func write_bytes(path: String, bytes: PackedByteArray) -> Error:
	var temp: String = temp_path(path)
	var file: FileAccess = FileAccess.open(temp, FileAccess.WRITE)
	if file == null:
		return FileAccess.get_open_error()
	file.store_buffer(bytes)
	file.close()
	var err: Error = file.get_error() if file.get_error() != ERR_FILE_EOF else OK
	if err == OK:
		err = _dir().rename(Paths.absolute(temp), Paths.absolute(path))
	if err != OK:
		DirAccess.remove_absolute(Paths.absolute(temp))
	return err


## A temp file beside `path`, named by this process's id: the bridge removes those of an engine
## it had to kill (bridge/locks.py).
static func temp_path(path: String) -> String:
	# path_join, not "%s/%s": for a file at the project root the folder is "res://", and under the
	# worker's settings pack "res:///x" names /x at the file system root (see safety/paths.gd).
	return path.get_base_dir().path_join(".%s.%d-%d.tmp.%s" % [path.get_file(), OS.get_process_id(), randi(), path.get_extension()])


## The uid:// text of the file at `path` (a text resource, or an asset's .import / .uid file), or "".
static func uid_of(path: String) -> String:
	for candidate: String in [path + ".import", path + ".uid", path]:
		if not FileAccess.file_exists(candidate):
			continue
		var file: FileAccess = FileAccess.open(candidate, FileAccess.READ)
		if file == null:
			return ""
		var head: String = file.get_buffer(4096).get_string_from_utf8()
		var at: int = head.find("uid://")
		if at < 0 or candidate == path and not head.begins_with("[gd_"):
			return ""
		return head.substr(at, head.find("\"", at) - at).strip_edges() if head.find("\"", at) > 0 else head.substr(at).strip_edges()
	return ""


## Confirm that the file saved at `temp` holds every value set, then give it its own uid and every
## external reference its target's uid. FAILED once the job failed.
static func _check_and_stamp(temp: String, uid: String, resource: Resource, values_set: Dictionary, job: Job, member: String) -> Error:
	# One open both reads and rewrites the file (two opens cost a path walk each).
	var file: FileAccess = FileAccess.open(temp, FileAccess.READ_WRITE)
	if file == null:
		return FileAccess.get_open_error()
	var text: String = file.get_as_text()
	if text.is_empty():
		return ERR_FILE_CORRUPT
	if not values_set.is_empty():
		# A value the file lacks is one the engine does not store, or one equal to its default,
		# which the saver leaves out: only for those is the object asked which it is.
		Props.check_stored(resource, _unwritten(text, values_set.keys()), job, member)
		if job.failed():
			return FAILED
	var newline: int = text.find("\n")
	var header: String = _uid_attr.sub(text.substr(0, newline), "")
	header = header.trim_suffix("]") + " uid=\"%s\"]" % uid
	var body: String = text.substr(newline)
	var patched: String = ""
	var last: int = 0
	for found: RegExMatch in _ext_line.search_all(body):
		var target_uid: String = uid_of(found.get_string(2))
		if target_uid.is_empty() or found.get_string(0).contains(" uid=\""):
			continue
		patched += body.substr(last, found.get_start() - last)
		patched += "[ext_resource %suid=\"%s\" path=\"%s\"%s]" % [found.get_string(1), target_uid, found.get_string(2), found.get_string(3)]
		last = found.get_end()
	patched += body.substr(last)
	var stamped: PackedByteArray = (header + patched).to_utf8_buffer()
	file.seek(0)
	file.store_buffer(stamped)
	if file.get_length() > stamped.size():
		file.resize(stamped.size())
	file.close()
	return file.get_error() if file.get_error() != ERR_FILE_EOF else OK


## Those of `names` that are not properties of the main resource in the .tres `text`.
static func _unwritten(text: String, names: Array) -> Array:
	var at: int = text.rfind("\n[resource]\n")
	if at < 0:
		return names
	var section: String = text.substr(at + "\n[resource]".length())
	if section.contains("\""):
		# A string may span lines and hold one that reads like a property: scan the text properly.
		var sections: Array[Dictionary] = SceneText.scan(text)
		var written: Dictionary = sections[-1]["props"]
		return names.filter(func(name: String) -> bool: return not written.has(name))
	return names.filter(func(name: String) -> bool: return not section.contains("\n%s = " % name))


static func _dir() -> DirAccess:
	if _project == null:
		_project = DirAccess.open(Paths.root)
	return _project


## Create missing folders up to `folder`; return the outermost one created ("" if none).
static func _make_folders(folder: String, job: Job, where: String) -> String:
	var outermost: String = ""
	var probe: String = folder
	while not _dir().dir_exists(Paths.absolute(probe)) and probe != "res://":
		# A file in the way would be taken for a folder this save made, and removed on failure.
		if FileAccess.file_exists(probe):
			job.fail(Job.SAVE_FAILED, "%s: %s is a file, so no folder can be made there (ERR_ALREADY_EXISTS)" % [where, probe], where)
			return ""
		outermost = probe
		probe = probe.get_base_dir()
	if outermost.is_empty():
		return ""
	var err: Error = DirAccess.make_dir_recursive_absolute(Paths.absolute(folder))
	if err != OK:
		job.fail(Job.SAVE_FAILED, "%s: could not create folder %s (%s)" % [where, folder, Job.error_name(err)], where)
	return outermost


static func _remove_made(outermost: String, folder: String) -> void:
	if outermost.is_empty():
		return
	var current: String = folder
	while current.length() >= outermost.length():
		DirAccess.remove_absolute(Paths.absolute(current))
		current = current.get_base_dir()
