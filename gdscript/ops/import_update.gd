extends RefCounted
## import_update: set import settings of an asset in its `.import` (only those lines change), have
## the asset imported again with them, and check that what the engine loads now has them.
##
## Served in two passes, as the bridge serves any request that meets an asset not imported: the
## first writes the changed lines and answers not_imported, naming the asset and carrying what it
## changed; the bridge imports it (gdres/serving/imports.py: on a shadow built from checked values,
## behind the wall, where no import script runs) and serves the request again; the second pass finds
## the settings in place and checks the artefact. Why check: the bridge's test of an asset's import
## (safety/imported.gd) compares sources and artefacts, not settings, so an artefact made before the
## change would pass it; a setting the check below can see in the loaded resource must be there.

const Gate = preload("../safety/gate.gd")
const ImportFile = preload("../files/import_file.gd")
const Imported = preload("../safety/imported.gd")
const Job = preload("../job.gd")
const Paths = preload("../safety/paths.gd")
const Props = preload("../values/props.gd")
const Saving = preload("../files/saving.gd")

## Options whose value names a file the importer would run or write: never set here (the shadow
## refuses them too, tools/shadow.gd).
const _REFUSED: Array[String] = ["import_script/path", "atlas_file", "materials/extract_path"]
## Options whose value names an image the import reads (PROPERTY_HINT_FILE, Godot 4.4-4.6).
const _TEXTURE_PATHS: Array[String] = ["roughness/src_normal"]
const _IMAGES: Array[String] = ["png", "jpg", "jpeg", "webp", "bmp", "tga", "svg", "hdr", "exr", "dds", "ktx"]
## Formats of AudioStreamWAV each compress/mode of the wav importer gives.
const _WAV_FORMATS: Array = [[0, 1], [2], [3]]


static func run(request: Dictionary, job: Job) -> Dictionary:
	var source: String = request["source_path"]
	var file: ImportFile = ImportFile.new()
	file.read(source, job, "source_path")
	if job.failed():
		return {}
	if file.makes_objects:
		var why: String = "holds a value that makes the engine load a file or make an object"
		job.fail(
			Job.UNSAFE_RESOURCE,
			"source_path: %s %s; its import is refused, so change it in the editor" % [file.path, why],
			"source_path"
		)
		return {}
	var declared: Dictionary = {}
	for option: Dictionary in file.options(request["importers"]):
		declared[option["name"]] = option
	if declared.is_empty():
		job.fail(
			Job.INVALID_REQUEST,
			(
				"source_path: %s is imported by %s, which declares no settings to change"
				% [source, JSON.stringify(file.importer)]
			),
			"source_path"
		)
		return {}
	var wanted: Dictionary = {}
	for key: String in request["params"]:
		var value: Variant = _checked(key, request["params"][key], declared, job)
		if job.failed():
			return {}
		wanted[key] = value
	var changed: Array = wanted.keys().filter(func(key: String) -> bool: return not _same(file, key, wanted[key]))
	if job.if_match.has(source):
		job.if_match[file.path] = job.if_match[source]  # if_match names the asset; its .import is what changes
	if not changed.is_empty():
		var values: Dictionary = {}
		for key: String in changed:
			values[key] = wanted[key]
		var old: PackedByteArray = FileAccess.get_file_as_bytes(Paths.real(file.path))
		Saving.write_bytes(file.path, file.with_params(values), job, "params")
		if job.failed() or job.dry_run:
			return {} if job.failed() else {"importer": file.importer, "changed": changed}
		# Should the import be refused, the bridge puts the old settings back (gdres/serving/slot.py).
		var undo: Dictionary = {
			"path": Paths.real(file.path), "old": Marshalls.raw_to_base64(old), "new": job.etags[file.path]
		}
		_import_again(source, changed, "its new settings are to be imported", job, undo)
		return {}
	changed = request.get("carried", {}).get("changed", [])
	job.etags[source] = FileAccess.get_sha256(Paths.real(file.path))
	if job.dry_run:
		return {"importer": file.importer, "changed": []}
	var sections: Array[Dictionary] = Imported.config(Paths.real(file.path))
	var problem: String = Imported.problem(source, Paths.real(source), sections)
	if problem.is_empty():
		var loaded: Resource = Gate.load_checked(source, "source_path", ResourceLoader.CACHE_MODE_IGNORE)
		if job.failed():
			return {}
		problem = _missing_setting(file.importer, loaded, wanted) if loaded != null else "the engine cannot load it"
	if not problem.is_empty():
		_import_again(source, changed, problem, job, request.get("carried", {}).get("undo", {}))
		return {}
	return {"importer": file.importer, "changed": changed}


## `value` for option `key` as the .import stores it (an enum's label becomes its number), or null
## after failing the job: unknown_property for an option the importer lacks, forbidden_property for
## one that names code or files the importer writes, invalid_value for a value of the wrong type.
static func _checked(key: String, value: Variant, declared: Dictionary, job: Job) -> Variant:
	var where: String = "params"
	if not declared.has(key):
		job.fail(
			Job.UNKNOWN_PROPERTY,
			"params.%s: the importer has no such option%s" % [key, Props.suggest(key, declared.keys())],
			where
		)
		return null
	if key in _REFUSED:
		job.fail(
			Job.FORBIDDEN_PROPERTY,
			"params.%s names a script the importer would run or files it would write; set it in the editor" % key,
			where
		)
		return null
	var option: Dictionary = declared[key]
	var values: Array = option.get("values", [])
	if option["type"] == "int" and typeof(value) == TYPE_STRING and value in values:
		return values.find(value)
	var fits: bool = (
		(option["type"] == "bool" and typeof(value) == TYPE_BOOL)
		or (option["type"] == "int" and typeof(value) == TYPE_INT)
		or (option["type"] == "int" and typeof(value) == TYPE_FLOAT and value == floorf(value) and absf(value) < 1e15)
		or (option["type"] == "float" and typeof(value) in [TYPE_INT, TYPE_FLOAT])
		or (option["type"] == "string" and typeof(value) == TYPE_STRING)
	)
	if fits and option["type"] == "int" and not values.is_empty() and (int(value) < 0 or int(value) >= values.size()):
		fits = false
	if not fits:
		var accepted: String = "a " + str(option["type"])
		if not values.is_empty():
			accepted = "one of %s, or its number from 0 to %d" % [JSON.stringify(values), values.size() - 1]
		elif option["type"] == "other":
			accepted = "set in the editor: only bool, int, float and string settings are set here"
		job.fail(Job.INVALID_VALUE, "params.%s: %s is not %s" % [key, JSON.stringify(value), accepted], where)
		return null
	if key in _TEXTURE_PATHS and not str(value).is_empty():
		# A file the import reads (a roughness texture's normal map): one of the project's images.
		var path: String = Paths.confine(str(value), job, where)
		if (
			not job.failed()
			and (path.get_extension().to_lower() not in _IMAGES or not FileAccess.file_exists(Paths.real(path)))
		):
			job.fail(
				Job.INVALID_VALUE, "params.%s: %s is no image of the project" % [key, JSON.stringify(value)], where
			)
		return path
	return int(value) if option["type"] == "int" else float(value) if option["type"] == "float" else value


## Whether the .import holds `value` for `key` already.
static func _same(file: ImportFile, key: String, value: Variant) -> bool:
	if not file.params.has(key):
		return false
	var held: Variant = file.params[key][1]
	return typeof(held) == typeof(value) and held == value


## Answer not_imported naming the asset, carrying what the request changed to its next pass.
static func _import_again(source: String, changed: Array, why: String, job: Job, undo: Dictionary) -> void:
	job.unimported.append(source)
	job.carried = {"changed": changed, "undo": undo}
	job.fail(Job.NOT_IMPORTED, "source_path: %s is to be imported again: %s" % [source, why], "source_path")


## Why `loaded` (the asset as the engine loads it now) lacks a setting of `wanted` that can be seen in
## it, or "": for the settings users change most (mipmaps, compression, size, loops).
static func _missing_setting(importer: String, loaded: Resource, wanted: Dictionary) -> String:
	var seen: Dictionary = {}
	if importer == "texture" and loaded is Texture2D:
		var image: Image = (loaded as Texture2D).get_image()
		if image != null:
			seen["mipmaps/generate"] = [wanted.get("mipmaps/generate"), image.has_mipmaps()]
			if wanted.get("compress/mode", -1) in [0, 1, 2, 3]:
				seen["compress/mode"] = [wanted["compress/mode"] == 2, image.is_compressed()]
			if wanted.get("process/size_limit", 0) > 0:
				var limit: int = wanted["process/size_limit"]
				seen["process/size_limit"] = [true, maxi(image.get_width(), image.get_height()) <= limit]
	elif importer == "wav" and loaded is AudioStreamWAV:
		var wav: AudioStreamWAV = loaded
		if wanted.get("edit/loop_mode", 0) > 0:
			seen["edit/loop_mode"] = [wanted["edit/loop_mode"] - 1, int(wav.loop_mode)]
		if wanted.has("compress/mode"):
			seen["compress/mode"] = [true, int(wav.format) in _WAV_FORMATS[wanted["compress/mode"]]]
	elif importer in ["oggvorbisstr", "mp3"] and loaded != null:
		for key: String in ["loop", "loop_offset", "bpm", "beat_count", "bar_beats"]:
			if wanted.has(key) and key in loaded:
				seen[key] = [wanted[key], loaded.get(key)]
	for key: String in seen:
		var asked: Variant = seen[key][0]
		if asked != null and not is_equal_approx(float(asked), float(seen[key][1])):
			return "its artefact does not have %s = %s yet" % [key, JSON.stringify(wanted[key])]
	return ""
