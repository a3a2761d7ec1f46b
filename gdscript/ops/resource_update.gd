extends RefCounted
## resource_update: change properties of a saved resource in place, or put them back to their
## defaults (`reset`: the saver then leaves their lines out).
##
## The resource is loaded once more from its file and saved over it. The engine keeps what a
## reviewer's diff needs: the file's uid (Saving.save keeps it), the ids of its ext_resources (a
## loaded resource remembers the id each file gave it) and of its sub_resources (their scene unique
## ids), and the properties in the class's order, which is the order the engine wrote them in.

const Job = preload("../job.gd")
const Props = preload("../props.gd")
const Resources = preload("../resources.gd")
const Saving = preload("../saving.gd")


static func run(request: Dictionary, job: Job) -> Dictionary:
	var resource: Resource = Resources.load_fresh(request["path"], job, "path", true)
	if job.failed():
		return {}
	var properties: Dictionary = request.get("properties", {})
	var reset: Array = request.get("reset", [])
	var names: Array = properties.keys() + reset
	var before: Dictionary = {}
	for name: String in names:
		before[name] = resource.get(name)
	# Names to set are checked by Props.apply(), as for any request; names to reset here.
	var known: Dictionary = Props.infos(resource)
	for name: String in reset:
		if not known.has(name):
			job.fail(
				Job.UNKNOWN_PROPERTY,
				(
					"%s has no property %s%s"
					% [resource.get_class(), JSON.stringify(name), Props.suggest(name, known.keys())]
				),
				"reset"
			)
			return {}
		if name in Props.FORBIDDEN:
			job.fail(
				Job.FORBIDDEN_PROPERTY, "reset may not name %s: it would attach code or move the file" % name, "reset"
			)
			return {}
		resource.set(name, Props.default_of(resource, name))
	var values: Dictionary = Props.apply(resource, properties, job, "properties")
	if job.failed():
		return {}
	Saving.save(resource, request["path"], job, "path", values, "properties")
	var changed: Array = names.filter(
		func(name: String) -> bool: return not Props.same(before[name], resource.get(name))
	)
	return {"type": resource.get_class(), "changed": changed}
