extends RefCounted
## import_read: an imported asset's import settings, as its `.import` holds them, with every option
## its importer has (files/import_file.gd).

const ImportFile = preload("../files/import_file.gd")
const Job = preload("../job.gd")


static func run(request: Dictionary, job: Job) -> Dictionary:
	var file: ImportFile = ImportFile.new()
	file.read(request["source_path"], job, "source_path")
	if job.failed():
		return {}
	if file.makes_objects:
		job.fail(
			Job.UNSAFE_RESOURCE,
			"source_path: %s holds a value that makes the engine load a file or make an object" % file.path,
			"source_path"
		)
		return {}
	var params: Dictionary = {}
	for key: String in file.params:
		params[key] = file.shown(key)
	job.etags[request["source_path"]] = FileAccess.get_sha256(ImportFile.Paths.real(file.path))
	return {
		"importer": file.importer, "type": file.type, "params": params, "options": file.options(request["importers"])
	}
