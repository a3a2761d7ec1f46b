extends RefCounted
## resource_read: load a saved resource fresh from disk and serialise its properties.

const Job = preload("../job.gd")
const Props = preload("../values/props.gd")
const Resources = preload("../values/resources.gd")


static func run(request: Dictionary, job: Job) -> Dictionary:
	var resource: Resource = Resources.load_fresh(request["resource_path"], job, job.named("resource_path"))
	if job.failed():
		return {}
	var depth: int = request.get("depth", 1)
	var properties: Dictionary = {}
	if request.has("properties"):
		properties = Props.pick(resource, request["properties"], depth, job)
	else:
		properties = Props.stored(resource, depth, {resource: true}, request.get("include_defaults", false))
	var script: Script = resource.get_script()
	return {
		"type": resource.get_class(),
		"script": script.resource_path if script != null else null,
		"properties": properties,
	}
