extends RefCounted
## Resources named in requests and values: confined to the project, checked for code, loaded fresh.

const Job = preload("job.gd")
const Props = preload("props.gd")
const Guard = preload("safety/guard.gd")
const Paths = preload("safety/paths.gd")
const Creating = preload("creating.gd")

const _ASSETS_KEPT: int = 256

## The imported assets kept loaded between requests (the engine's cache holds a resource only as
## long as something else does), res -> [import stamp when loaded (see _import_stamp()), resource],
## least recently used first; the worker's memory limit (bridge/worker.py) bounds the rest.
static var _assets: Dictionary = {}


## Return `path` as a normalised res:// path inside the project, or "" after failing the job.
static func confine(path: String, job: Job, where: String) -> String:
	var inner: String = path.trim_prefix("res://")
	if inner.is_empty() or inner.is_absolute_path() or inner.contains("://") or inner.to_utf8_buffer().has(0):
		job.fail(
			Job.INVALID_PATH,
			"%s: %s must be a path relative to the project (or start with res://)" % [where, JSON.stringify(path)],
			where
		)
		return ""
	var simple: String = ("res://" + inner).simplify_path()
	if simple.begins_with("res://..") or simple == "res://":
		job.fail(Job.PATH_OUTSIDE_PROJECT, "%s: %s leads outside the project" % [where, JSON.stringify(path)], where)
		return ""
	var real: String = Paths.real(simple)
	if not Paths.inside(real):
		job.fail(
			Job.PATH_OUTSIDE_PROJECT,
			"%s: %s leads outside the project through a symbolic link" % [where, JSON.stringify(path)],
			where
		)
		return ""
	for named: String in [simple, Paths.to_res(real)]:
		if named == "res://project.godot" or named.begins_with("res://.godot/"):
			job.fail(Job.INVALID_PATH, "%s: %s points at the engine's own files" % [where, JSON.stringify(path)], where)
			return ""
	return simple


## Load the resource at res:// `path` fresh from disk, after guard.gd has found that loading it runs
## no code (unless allowed), opens nothing outside the project, and needs no asset not imported.
## `copy`: return an object of its own, which the engine's cache does not hold (its embedded
## sub-resources are new objects too; the files it names are shared).
static func load_fresh(path: String, job: Job, where: String, copy: bool = false) -> Resource:
	if not FileAccess.file_exists(path) and not ResourceLoader.exists(path):
		job.fail(Job.NOT_FOUND, "%s: %s does not exist" % [where, path], where)
		return null
	var files: Array[Dictionary] = Guard.check(path, job, where)
	if job.failed():
		return null
	# Held until the load below has taken them from the cache, which holds nothing by itself.
	var fresh: Array[Resource] = _refresh_dependencies(files)
	var loaded: Resource = ResourceLoader.load(
		path, "", ResourceLoader.CACHE_MODE_IGNORE if copy else ResourceLoader.CACHE_MODE_REPLACE
	)
	fresh.clear()
	if loaded == null:
		job.fail(
			Job.LOAD_FAILED,
			"%s: the engine could not load %s (%s)" % [where, path, Job.error_name(_load_error(path))],
			where
		)
	return loaded


## Put fresh copies of the files `files[0]` depends on into the engine's cache, dependencies before
## the files that need them, so that loading files[0] without reloading them (which would decode
## every texture again: ~36 ms a texture) still sees every file as it is on disk now. An imported
## asset is loaded again only once its import has changed.
static func _refresh_dependencies(files: Array[Dictionary]) -> Array[Resource]:
	var by_real: Dictionary = {}
	for file: Dictionary in files:
		by_real[file["real"]] = file
	var done: Dictionary = {files[0]["real"]: true}
	var fresh: Array[Resource] = []
	for need: String in files[0]["needs"]:
		_refresh(need, by_real, done, fresh)
	return fresh


static func _refresh(real: String, by_real: Dictionary, done: Dictionary, fresh: Array[Resource]) -> void:
	if done.has(real) or not by_real.has(real):
		return
	done[real] = true
	var file: Dictionary = by_real[real]
	var res: String = file["res"]
	for need: String in file["needs"]:
		_refresh(need, by_real, done, fresh)
	if not file["asset"]:
		fresh.append(ResourceLoader.load(res, "", ResourceLoader.CACHE_MODE_REPLACE))
		return
	var stamp: Array = _import_stamp(res)
	var kept: Array = _assets.get(res, [])
	_assets.erase(res)  # put back last: the most recently used asset is the last to go
	if kept.is_empty() or kept[0] != stamp or not ResourceLoader.has_cached(res):
		kept = [stamp, ResourceLoader.load(res, "", ResourceLoader.CACHE_MODE_REPLACE)]
	_assets[res] = kept
	while _assets.size() > _ASSETS_KEPT:
		_assets.erase(_assets.keys()[0])


## When an asset's import last changed: its .import file and the editor's record of the import.
static func _import_stamp(res: String) -> Array:
	var record: String = "res://.godot/imported/%s-%s.md5" % [res.get_file(), res.md5_text()]
	return [FileAccess.get_modified_time(res + ".import"), FileAccess.get_modified_time(record)]


## Whether `resource` is (or is inside) an imported asset: its file has a .import file beside it.
static func is_imported(resource: Resource) -> bool:
	var file: String = resource.resource_path.get_slice("::", 0)
	return not file.is_empty() and FileAccess.file_exists(file + ".import")


## Why a load failed, as near as can be told: ResourceLoader.load() returns no error code.
static func _load_error(path: String) -> Error:
	if FileAccess.open(path, FileAccess.READ) == null:
		return FileAccess.get_open_error()
	for dependency: String in ResourceLoader.get_dependencies(path):
		var target: String = dependency.get_slice("::", 2) if dependency.contains("::") else dependency
		if not target.is_empty() and not ResourceLoader.exists(target):
			return ERR_FILE_MISSING_DEPENDENCIES
	return ERR_FILE_CORRUPT


## A Resource value from JSON: null, or a path to an existing resource of a class in `hint`.
## Also what resource_read prints for one: "res://file.tres::ID" for a sub-resource embedded in
## another file, or the expanded {"type", "path", "properties"} (named by its path).
static func from_value(value: Variant, hint: String, job: Job, where: String) -> Resource:
	if value == null:
		return null
	if typeof(value) == TYPE_DICTIONARY and not value.has("path") and typeof(value.get("type")) == TYPE_STRING:
		return _made(value, hint, job, where)
	var named: Variant = value
	if typeof(value) == TYPE_DICTIONARY and typeof(value.get("path")) == TYPE_STRING:
		named = value["path"]
	if typeof(named) != TYPE_STRING:
		job.fail(
			Job.INVALID_VALUE,
			"%s: give a resource as a path string or null, not %s" % [where, JSON.stringify(value)],
			where
		)
		return null
	var text: String = named
	var path: String = confine(text.get_slice("::", 0), job, where)
	if job.failed():
		return null
	var loaded: Resource = load_fresh(path, job, where)
	if not job.failed() and text.contains("::"):
		loaded = _embedded(loaded, path + "::" + text.get_slice("::", 1), {})
		if loaded == null:
			job.fail(
				Job.NOT_FOUND,
				"%s: %s has no sub-resource %s" % [where, path, JSON.stringify(text.get_slice("::", 1))],
				where
			)
	if job.failed():
		return null
	if typeof(value) == TYPE_DICTIONARY and value.get("type") != loaded.get_class():
		job.fail(
			Job.INVALID_VALUE,
			"%s: %s is a %s, not a %s" % [where, text, loaded.get_class(), JSON.stringify(value.get("type"))],
			where
		)
		return null
	var accepted: PackedStringArray = hint.split(",", false)
	for cls: String in accepted:
		if loaded.is_class(cls.strip_edges()):
			return loaded
	if accepted.is_empty():
		return loaded
	job.fail(
		Job.INVALID_VALUE,
		"%s: %s is a %s, but this property takes %s" % [where, text, loaded.get_class(), " or ".join(accepted)],
		where
	)
	return null


## A new embedded resource from the object form {"type", "properties"?} (what resource_read prints).
static func _made(value: Dictionary, hint: String, job: Job, where: String) -> Resource:
	for key: Variant in value:
		if key not in ["type", "properties"]:
			job.fail(
				Job.INVALID_VALUE,
				'%s: a new resource is {"type", "properties"}, not %s' % [where, JSON.stringify(key)],
				where
			)
			return null
	var properties: Variant = value.get("properties", {})
	if typeof(properties) != TYPE_DICTIONARY:
		job.fail(Job.INVALID_VALUE, "%s.properties must be an object" % where, where)
		return null
	var accepted: PackedStringArray = hint.split(",", false)
	if not accepted.is_empty() and not _is_one_of(value["type"], accepted):
		job.fail(
			Job.INVALID_VALUE,
			(
				"%s: a %s cannot go here: this property takes %s"
				% [where, JSON.stringify(value["type"]), " or ".join(accepted)]
			),
			where
		)
		return null
	# A class refused here is a bad value, not a bad type member of the request.
	return Creating.make(value["type"], properties, job, where, where + ".properties", Job.INVALID_VALUE)[0]


## Whether `type` names a class that is (or inherits) one of `classes`.
static func _is_one_of(type: Variant, classes: PackedStringArray) -> bool:
	for cls: String in classes:
		if ClassDB.class_exists(type) and ClassDB.is_parent_class(type, cls.strip_edges()):
			return true
	return false


## The resource with resource_path `path` among those nested in `owner`, or null.
static func _embedded(owner: Resource, path: String, seen: Dictionary) -> Resource:
	if owner == null or seen.has(owner):
		return null
	seen[owner] = true
	if owner.resource_path == path:
		return owner
	for info: Dictionary in owner.get_property_list():
		var found: Resource = _embedded_in(owner.get(info["name"]), path, seen)
		if found != null:
			return found
	return null


static func _embedded_in(value: Variant, path: String, seen: Dictionary) -> Resource:
	if value is Resource:
		return _embedded(value, path, seen)
	if typeof(value) == TYPE_ARRAY or typeof(value) == TYPE_DICTIONARY:
		for item: Variant in value if typeof(value) == TYPE_ARRAY else value.values():
			var found: Resource = _embedded_in(item, path, seen)
			if found != null:
				return found
	return null


## A resource as JSON: its path once `depth` is spent or once it has been expanded in this reply
## (`expanded`), else {type, path, properties}. Expanding each resource once keeps a reply as large
## as the file, not 2^depth: 40 sub-resources that each name the next twice would be expanded
## a trillion times. The path names it (res://file.tres::ID for an embedded one), as at depth 0.
static func to_value(value: Object, depth: int, expanded: Dictionary) -> Variant:
	if not (value is Resource):
		return null
	var resource: Resource = value
	if depth <= 0 or expanded.has(resource):
		return resource.resource_path
	if is_imported(resource):
		# An imported asset is a leaf: its properties are its raw data (a font's glyph cache, a
		# texture's image), megabytes that say nothing a request can set.
		return {"type": resource.get_class(), "path": resource.resource_path}
	expanded[resource] = true
	return {
		"type": resource.get_class(),
		"path": resource.resource_path,
		"properties": Props.stored(resource, depth - 1, expanded, false),
	}
