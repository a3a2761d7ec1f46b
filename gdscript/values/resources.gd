extends RefCounted
## Resources named in requests and values: confined to the project, checked for code, loaded fresh.

const Job = preload("../job.gd")

const Gate = preload("../safety/gate.gd")


## Load the resource at res:// `path` fresh from disk, it and every file it loads through the gate
## (safety/gate.gd), which fails `job` for what runs code (unless allowed), leaves the project, or is
## not imported. `copy`: return an object of its own, which the engine's cache does not hold: it, its
## embedded sub-resources and the files it names are loaded anew in one pass (imported assets are
## still the ones the gate keeps). Two loads did this before, the file and what it names into the
## cache, then the file again outside it: one pass saved a resource_duplicate ~100-150 us of its
## ~1,050 (the bench's mixed batch in one engine, 4.6.3).
static func load_fresh(path: String, job: Job, where: String, copy: bool = false) -> Resource:
	if not Gate.remap_fault(path).is_empty():
		return Gate.load_checked(path, where, ResourceLoader.CACHE_MODE_IGNORE)  # refused, unread
	if not FileAccess.file_exists(path) and not ResourceLoader.exists(path):
		job.fail(Job.NOT_FOUND, "%s: %s does not exist" % [where, path], where)
		return null
	# Every file it names is loaded again too (the gate keeps imported assets while their import
	# holds), so each is judged as it is on disk now.
	var mode: ResourceLoader.CacheMode = (
		ResourceLoader.CACHE_MODE_IGNORE_DEEP if copy else ResourceLoader.CACHE_MODE_REPLACE_DEEP
	)
	var loaded: Resource = Gate.load_checked(path, where, mode)
	if job.failed():
		return null
	if loaded == null:
		job.fail(
			Job.LOAD_FAILED,
			"%s: the engine could not load %s (%s)" % [where, path, Job.error_name(_load_error(path))],
			where
		)
	return loaded


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
		if target.begins_with("uid://"):
			var id: int = ResourceUID.text_to_id(target)
			target = ResourceUID.get_id_path(id) if ResourceUID.has_id(id) else ""
		if not target.is_empty() and Gate.remap_fault(target).is_empty() and not ResourceLoader.exists(target):
			return ERR_FILE_MISSING_DEPENDENCIES
	return ERR_FILE_CORRUPT
