extends RefCounted
## resource_read: load a saved resource fresh from disk and serialise its properties.

const Codec = preload("../values/codec.gd")
const Job = preload("../job.gd")
const Resources = preload("../values/resources.gd")
const Paths = preload("../safety/paths.gd")
const Ids = preload("../formats/ids.gd")


static func run(request: Dictionary, job: Job) -> Dictionary:
	job.etags[request["resource_path"]] = FileAccess.get_sha256(request["resource_path"])
	var resource: Resource = Resources.load_fresh(request["resource_path"], job, job.named("resource_path"))
	if job.failed():
		return {}
	var depth: int = request.get("depth", 1)
	var properties: Dictionary = {}
	if request.has("properties"):
		properties = Codec.pick(resource, request["properties"], depth, job)
	else:
		properties = Codec.stored(resource, depth, {resource: true}, request.get("include_defaults", false))
	var script: Script = resource.get_script()
	var uid: String = Ids.uid_of(Paths.real(request["resource_path"]))
	return {
		"type": resource.get_class(),
		"uid": uid if not uid.is_empty() else null,
		"script": script.resource_path if script != null else null,
		"properties": properties,
	}
