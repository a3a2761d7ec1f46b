extends RefCounted
## Whether an imported asset (a file with a `.import` beside it) can be loaded now: its import
## artefacts exist and are current, as the editor decides it (EditorFileSystem's reimport test).
##
## A project checked out from git has its `.import` files but no `.godot/`: the engine would find
## the remap path missing and fail with ERR_FILE_CORRUPT, so the bridge must know to import first.
## The editor records, per source, `.godot/imported/<name>-<md5 of its res:// path>.md5` with the
## md5 of the source and of the artefacts it made; the asset is current when both still match and
## every artefact named in the import's `dest_files` exists. Hashes are kept per file (by size and
## time of change), so a texture is hashed once per worker, not once per request.

const Job = preload("../job.gd")
const Paths = preload("paths.gd")
const Scan = preload("../formats/scan.gd")
const TextFormat = preload("../formats/text_format.gd")

## Real path -> [modified time, size, md5 text]; for several files joined, their paths joined by "|"
## -> [[time, size] of each, md5 text].
static var _hashes: Dictionary = {}


## The remap values of an import or remap file as the engine reads them: the keys before any
## section and those of a first [remap] section (ResourceFormatImporter stops at any other tag).
static func remap_values(sections: Array[Dictionary]) -> Dictionary:
	var values: Dictionary = {}
	for i: int in mini(sections.size(), 2):
		if i == 0 or sections[i]["name"] == "remap":
			values.merge(sections[i]["values"], true)
	return values


## The section of `sections` named `name`, or {}.
static func section(sections: Array[Dictionary], name: String) -> Dictionary:
	for each: Dictionary in sections:
		if each["name"] == name:
			return each["values"]
	return {}


## Why the asset at res:// `source` (real path `real`; `sections` from its .import file) cannot be
## loaded now, or "" when it can.
static func problem(source: String, real: String, sections: Array[Dictionary]) -> String:
	var remap: Dictionary = remap_values(sections)
	if remap.get("importer", "") == "keep" or remap.get("importer", "") == "skip":
		return ""  # used as it is, or never loaded: either way there is nothing to import
	if remap.get("valid", true) == false:
		return "the editor's last import of it failed"
	var record: String = "res://.godot/imported/%s-%s.md5" % [source.get_file(), source.md5_text()]
	if not Paths.opens_inside(record):
		return "the project's .godot folder leads out of the project (a link), where the bridge reads no import data"
	if not FileAccess.file_exists(record):
		return "it has no import data"
	var deps: Dictionary = section(sections, "deps")
	var dests: Variant = deps.get("dest_files", [])
	if typeof(dests) != TYPE_ARRAY:
		return "its .import file lists no artefacts"
	# Each artefact is confined before it is looked at: a .import is the project's text, and a
	# dest_files entry naming /etc/hostname must not make the engine open it, nor tell whether it exists.
	for dest: Variant in dests:
		if typeof(dest) != TYPE_STRING or not Paths.opens_inside(dest):
			return "its .import lists an import artefact outside the project"
	for dest: Variant in dests:
		if not FileAccess.file_exists(dest):
			return "its import artefact %s is missing" % str(dest)
	var recorded: Dictionary = section(config(record), "")
	if recorded.get("source_md5", "") != md5(real):
		return "it changed since it was imported"
	var dest_md5: String = str(recorded.get("dest_md5", ""))
	if not dest_md5.is_empty() and dest_md5 != _joined_md5(dests):
		return "its import artefacts changed since they were made"
	return ""


## Why an import with these `sections` must not run, as [error code, reason], or ["", ""]: an import
## parameter that names a script (an EditorScenePostImport's `import_script/path`, run by the
## importer) or a file outside the project, which the importer would open (any key of [params],
## whatever its name): not_imported, the asset is left unimported; or a remap path or source file
## leading to either (the editor opens them to check the import): unsafe_resource or
## path_outside_project. `code`: the extensions of script files.
static func unsafe_import(sections: Array[Dictionary], code: PackedStringArray) -> Array:
	var named: Dictionary = {}
	for key: Variant in section(sections, "params"):
		named["import parameter %s" % key] = section(sections, "params")[key]
	var remap: Dictionary = remap_values(sections)
	for key: Variant in remap:
		if key == "path" or str(key).begins_with("path."):
			named["remap %s" % key] = remap[key]
	named["source_file"] = section(sections, "deps").get("source_file", "")
	for what: String in named:
		var value: Variant = named[what]
		if typeof(value) != TYPE_STRING or value == TextFormat.OTHER or value.is_empty():
			continue
		var fault: String = Job.NOT_IMPORTED if what.begins_with("import parameter") else ""
		if value.get_extension().to_lower() in code:
			return [
				fault if fault else Job.UNSAFE_RESOURCE,
				"its %s names %s, a script the importer would run" % [what, value]
			]
		if (value.is_absolute_path() or value.contains("://")) and not Paths.opens_inside(value):
			return [
				fault if fault else Job.PATH_OUTSIDE_PROJECT, "its %s names %s, outside the project" % [what, value]
			]
	return ["", ""]


## The md5 text of the file at `path`, from the cache while its size and time of change hold.
static func md5(path: String) -> String:
	var changed: int = FileAccess.get_modified_time(path)
	var size: int = _size(path) if FileAccess.file_exists(path) else -1
	var known: Array = _hashes.get(path, [])
	if not known.is_empty() and known[0] == changed and known[1] == size:
		return known[2]
	var text: String = FileAccess.get_md5(path)
	_hashes[path] = [changed, size, text]
	return text


## The md5 of several files as one (their bytes in order), as FileAccess::get_multiple_md5 makes
## it for dest_md5; from the cache while each file's size and time of change hold.
static func _joined_md5(paths: Array) -> String:
	var key: String = "|".join(paths.map(func(path: Variant) -> String: return str(path)))
	var stamps: Array = paths.map(
		func(path: Variant) -> Array: return [FileAccess.get_modified_time(str(path)), _size(str(path))]
	)
	var known: Array = _hashes.get(key, [])
	if not known.is_empty() and known[0] == stamps:
		return known[1]
	var context: HashingContext = HashingContext.new()
	context.start(HashingContext.HASH_MD5)
	for path: Variant in paths:
		context.update(FileAccess.get_file_as_bytes(str(path)))
	var text: String = context.finish().hex_encode()
	_hashes[key] = [stamps, text]
	return text


## The size in bytes of the file at `path`, or -1 when it cannot be opened. (FileAccess.get_size() tells it
## without opening the file, but only from Godot 4.5 on.)
static func _size(path: String) -> int:
	var file: FileAccess = FileAccess.open(path, FileAccess.READ)
	return file.get_length() if file != null else -1


## Why the engine's own parser of the config file at `path` (an asset's .import: its importer parses
## it whole when the asset loads) would load or make an object, or the file cannot be vouched for;
## "" when neither. `what` names the file in the reason.
static func inert(path: String, what: String = "its .import") -> String:
	var scan: Scan = Scan.new()
	TextFormat.new(FileAccess.get_file_as_bytes(path), scan, true).config_file()
	if scan.stopped() or not scan.finished:
		return "%s cannot be read: %s" % [what, scan.unreadable if not scan.unreadable.is_empty() else scan.corrupt]
	if not scan.loads.is_empty() or not scan.classes.is_empty():
		var where: String = (scan.loads[0] if not scan.loads.is_empty() else scan.classes[0])["where"]
		return "%s writes a value that makes the engine load or create an object (%s)" % [what, where]
	return ""


## The sections of a file in the engine's config syntax (values: see TextFormat.config_file).
static func config(path: String) -> Array[Dictionary]:
	return TextFormat.new(FileAccess.get_file_as_bytes(path), Scan.new(), true).config_file()
