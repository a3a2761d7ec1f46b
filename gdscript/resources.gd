extends RefCounted
## Resources named in requests and values: confined to the project, checked for code, loaded fresh.

const Job = preload("job.gd")

const _ASSETS_KEPT: int = 256

## The imported assets kept loaded between requests (the engine's cache holds a resource only as
## long as something else does), res -> [import stamp when loaded (see _import_stamp()), resource],
## least recently used first; the worker's memory limit (bridge/worker.py) bounds the rest.
static var _assets: Dictionary = {}

## safety/guard.gd, compiled on the first load (with the file readers it uses, ~0.1 s): a request
## that loads no file never needs it, and a one-shot `godot-bridge run` of one pays for no more.
static var _guard: GDScript = null


## Load the resource at res:// `path` fresh from disk, after guard.gd has found that loading it runs
## no code (unless allowed), opens nothing outside the project, and needs no asset not imported.
## `copy`: return an object of its own, which the engine's cache does not hold (its embedded
## sub-resources are new objects too; the files it names are shared).
static func load_fresh(path: String, job: Job, where: String, copy: bool = false) -> Resource:
	if not FileAccess.file_exists(path) and not ResourceLoader.exists(path):
		job.fail(Job.NOT_FOUND, "%s: %s does not exist" % [where, path], where)
		return null
	if _guard == null:
		var job_script: Script = Job
		_guard = load(job_script.resource_path.get_base_dir().path_join("safety/guard.gd"))
	var files: Array[Dictionary] = _guard.check(path, job, where)
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
