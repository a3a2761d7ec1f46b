extends RefCounted
## Whether the engine may load a resource file: decided before it loads anything, from the bytes
## of the file and of every file loading it would load, to any depth.
##
## A file passes only when it is proven (text_format.gd, binary_format.gd) to instantiate no class
## that inherits Script or GDExtension (by ClassDB, not by a list of names), to set no `script`
## anywhere, and to hold nothing the readers do not understand; and when every file it names, by
## path or by uid://, resolves (symbolic links followed) inside the project. Files are followed the
## way the engine follows them: ext_resource paths (relative ones against the file's folder) and
## their uids, inline Resource("...") paths, a `.remap` file beside a file, and an imported asset's
## `.import` remap. A script file (by extension, as the engine picks loaders) is refused outright.
## allow_scripts lifts the script rules, never the confinement.

const Job = preload("../job.gd")
const Scan = preload("scan.gd")
const TextFormat = preload("text_format.gd")
const BinaryFormat = preload("binary_format.gd")
const Paths = preload("paths.gd")
const Imported = preload("../imported.gd")

## The text loader's extensions (ResourceFormatLoaderText recognizes no others).
const _TEXT_EXTENSIONS: Array[String] = ["tres", "tscn"]

## File extensions whose loader makes a Script or loads native code (filled on first use).
static var _code_extensions: PackedStringArray = []
static var _loadable_extensions: PackedStringArray = []


## Check res:// `path` and everything loading it would load; fail `job` when it is unsafe, leaves
## the project, or needs an asset that is not imported (yet). Return the files the engine would load
## as resources, each {"res": the path it caches the file by, "real": its real path, "asset": whether
## it is loaded through its import, "needs": the "real" of the files loading it loads}, the requested
## one first.
static func check(path: String, job: Job, where: String) -> Array[Dictionary]:
	var pending: Array[Dictionary] = [{"path": path, "via": ""}]
	var seen: Dictionary = {}
	var walk: Dictionary = {"files": [] as Array[Dictionary], "unimported": ""}
	while not pending.is_empty():
		var item: Dictionary = pending.pop_front()
		var named: String = item["path"]
		var real: String = Paths.real(named) if named.begins_with("res://") or named.is_absolute_path() else ""
		if item.has("from"):
			item["from"]["needs"].append(real)
		if seen.has(real):
			continue
		seen[real] = true
		if not Paths.inside(real):
			job.fail(
				Job.PATH_OUTSIDE_PROJECT,
				(
					"%s: %s%s is outside the project%s"
					% [
						where,
						named,
						item["via"],
						" (it resolves to %s)" % real if not real.is_empty() and real != named else ""
					]
				),
				where
			)
			return []
		var entry: Dictionary = {"res": named, "real": real, "asset": false, "needs": []}
		var found: Array[Dictionary] = _judge(
			Paths.to_res(real), real, job, where, item["via"], item.get("artefact", false), walk
		)
		if job.failed():
			return []
		if not item.get("artefact", false) and FileAccess.file_exists(real):
			entry["asset"] = FileAccess.file_exists(real + ".import")
			walk["files"].append(entry)
		for next: Dictionary in found:
			if not next.get("artefact", false):
				next["from"] = entry
		pending.append_array(found)
	if not walk["unimported"].is_empty():
		job.fail(Job.NOT_IMPORTED, "%s: %s" % [where, walk["unimported"]], where)
		return []
	return walk["files"]


## Judge one file; return the files its loading would load next. `walk` collects the files met and
## the first asset that cannot be loaded yet.
static func _judge(
	file: String, real: String, job: Job, where: String, via: String, artefact: bool, walk: Dictionary
) -> Array[Dictionary]:
	var opened: FileAccess = FileAccess.open(real, FileAccess.READ)
	if opened == null:
		return []  # nothing (or a folder) there to load: the load fails on its own
	var named: String = file + via
	var extension: String = file.get_extension().to_lower()
	if extension in _code_extension_list():
		if not job.allow_scripts:
			_unsafe(job, where, named, "it is a script or a native library, which the engine would run")
		return []
	var next: Array[Dictionary] = []
	var imported: bool = FileAccess.file_exists(real + ".import")
	for redirect: String in [real + ".remap", real + ".import"]:
		if FileAccess.file_exists(redirect):
			next.append_array(_redirect(redirect, file, real, job, where, walk))
			if job.failed():
				return []
	# A file no loader takes as it is needs an import, unless it is what an import made.
	if not imported and not artefact and extension not in _loadable_extension_list() and walk["unimported"].is_empty():
		walk["unimported"] = (
			"%s%s has not been imported by the engine (the project has no import data for it)" % [file, via]
		)
	var bytes: PackedByteArray = _resource_bytes(opened, extension)
	if bytes.is_empty():
		return next  # data for a loader that creates no objects from it (a texture, a shader)
	var scan: Scan = Scan.new()
	if bytes.slice(0, 4).get_string_from_ascii() in ["RSRC", "RSCC"]:
		BinaryFormat.read(bytes, scan)
	else:
		TextFormat.new(bytes, scan).resource_file()
	# What was read before a reader stopped is what the engine would have acted on before it
	# stopped too: a script there is reported as such.
	if not job.allow_scripts:
		_judge_scan(scan, job, where, named)
		if job.failed():
			return []
	if not scan.corrupt.is_empty():
		job.fail(
			Job.LOAD_FAILED,
			"%s: %s is not a valid resource file: %s (ERR_FILE_CORRUPT)" % [where, named, scan.corrupt],
			where
		)
		return []
	if not scan.unreadable.is_empty() or not scan.finished:
		var why: String = (
			scan.unreadable if not scan.unreadable.is_empty() else "the check stopped before the end of the file"
		)
		job.fail(
			Job.UNSAFE_RESOURCE,
			"%s: %s cannot be vouched for: %s; the engine is not asked to load it" % [where, named, why],
			where
		)
		return []
	for load: Dictionary in scan.loads:
		next.append_array(_targets(load, file, " (named in %s by %s)" % [file, load["where"]]))
	return next


## The bytes of a file that a resource loader would parse (binary by its magic, whatever its
## extension; text for the text loader's extensions), or none for anything else.
static func _resource_bytes(file: FileAccess, extension: String) -> PackedByteArray:
	if extension in _TEXT_EXTENSIONS:
		return file.get_buffer(file.get_length())
	var head: PackedByteArray = file.get_buffer(4)
	var magic: String = head.get_string_from_ascii()
	if magic != "RSRC" and magic != "RSCC":
		return PackedByteArray()
	return head + file.get_buffer(file.get_length() - 4)


## Refuse a scan that instantiates a script class or sets a script.
static func _judge_scan(scan: Scan, job: Job, where: String, named: String) -> void:
	for entry: Dictionary in scan.classes:
		var type: String = entry["type"]
		if not ClassDB.class_exists(type):
			_unsafe(
				job,
				where,
				named,
				(
					"%s is of class %s, which the engine does not know (a script class?)"
					% [entry["where"], JSON.stringify(type)]
				)
			)
			return
		if ClassDB.is_parent_class(type, "Script") or ClassDB.is_parent_class(type, "GDExtension"):
			_unsafe(job, where, named, "%s is a %s" % [entry["where"], type])
			return
	if not scan.script_set.is_empty():
		_unsafe(job, where, named, "it sets a script in %s" % scan.script_set)


static func _unsafe(job: Job, where: String, named: String, why: String) -> void:
	if job.allow_scripts:
		job.fail(Job.UNSAFE_RESOURCE, "%s: %s cannot be loaded: %s" % [where, named, why], where)
	else:
		job.fail(
			Job.UNSAFE_RESOURCE,
			(
				"%s: %s carries code: %s; loading it would run that code, so it is loaded only with allow_scripts: true"
				% [where, named, why]
			),
			where
		)


## The files a .remap or .import file sends the engine to instead of (or for) `file` (real path
## `real`); an import that is missing or stale goes into `walk` (see Imported.problem).
static func _redirect(
	config: String, file: String, real: String, job: Job, where: String, walk: Dictionary
) -> Array[Dictionary]:
	var scan: Scan = Scan.new()
	var sections: Array[Dictionary] = TextFormat.new(FileAccess.get_file_as_bytes(config), scan, true).config_file()
	if not scan.stopped():
		for load: Dictionary in scan.loads:
			scan.fail("it loads %s" % load["where"])
	var next: Array[Dictionary] = []
	var remap: Dictionary = Imported.remap_values(sections)
	for key: Variant in remap:
		var value: Variant = remap[key]
		if key == "type" and typeof(value) == TYPE_STRING and not job.allow_scripts:
			if (
				not ClassDB.class_exists(value)
				or ClassDB.is_parent_class(value, "Script")
				or ClassDB.is_parent_class(value, "GDExtension")
			):
				scan.fail("its remap type is %s" % JSON.stringify(value))
		elif (key == "path" or str(key).begins_with("path.")) and typeof(value) == TYPE_STRING:
			for target: Dictionary in _targets(
				{"path": value, "uid": "", "base": "root"}, file, " (the %s of %s)" % [key, Paths.to_res(config)]
			):
				target["artefact"] = true
				next.append(target)
	if scan.stopped() or not scan.finished:
		var why: String = (
			scan.unreadable + scan.corrupt if scan.stopped() else "the check stopped before the end of the file"
		)
		job.fail(Job.UNSAFE_RESOURCE, "%s: %s cannot be vouched for: %s" % [where, Paths.to_res(config), why], where)
		return []
	if config.ends_with(".import") and walk["unimported"].is_empty():
		var problem: String = Imported.problem(file, real, sections)
		if not problem.is_empty():
			walk["unimported"] = "%s has not been imported by the engine: %s" % [file, problem]
	return next


## Every path the engine may open for one reference: the uid's file when the uid is known, and the
## written path (relative to the referring file's folder or to the project, as `base` says).
static func _targets(load: Dictionary, file: String, via: String) -> Array[Dictionary]:
	var targets: Array[Dictionary] = []
	var uid: String = load["uid"]
	var path: String = load["path"]
	if path.begins_with("uid://"):
		uid = path
		path = ""
	if not uid.is_empty():
		var id: int = ResourceUID.text_to_id(uid)
		if id != ResourceUID.INVALID_ID and ResourceUID.has_id(id):
			targets.append({"path": ResourceUID.get_id_path(id), "via": via})
	if path.is_empty():
		return targets
	if path.contains("://") or path.is_absolute_path():
		targets.append({"path": path, "via": via})
		return targets
	if load["base"] in ["file", "both"]:
		targets.append({"path": file.get_base_dir().path_join(path), "via": via})
	if load["base"] in ["root", "both"]:
		targets.append({"path": "res://" + path, "via": via})
	return targets


## The extensions the engine loads without an import (its loaders are all registered at start-up).
static func _loadable_extension_list() -> PackedStringArray:
	if _loadable_extensions.is_empty():
		# The empty type asks every loader for all its extensions; "Resource" is no catch-all (each
		# loader answers only for the types it makes: the compressed-texture loader leaves out .ctex).
		_loadable_extensions = ResourceLoader.get_recognized_extensions_for_type("")
	return _loadable_extensions


static func _code_extension_list() -> PackedStringArray:
	if _code_extensions.is_empty():
		var resource_formats: PackedStringArray = ResourceLoader.get_recognized_extensions_for_type("PackedScene")
		for type: String in ["Script", "GDExtension"]:
			for extension: String in ResourceLoader.get_recognized_extensions_for_type(type):
				if extension not in resource_formats and extension not in ["tres", "res"]:
					_code_extensions.append(extension.to_lower())
		for extension: String in ["gd", "gdc", "cs", "gdextension"]:
			if extension not in _code_extensions:
				_code_extensions.append(extension)
	return _code_extensions
