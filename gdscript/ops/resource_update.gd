extends RefCounted
## resource_update: change properties of a saved resource in place, or put them back to their
## defaults (`reset`: the saver then leaves their lines out).
##
## The resource is loaded once more from its file and saved over it. The engine keeps what a
## reviewer's diff needs: the file's uid (Saving.save keeps it), the ids of its ext_resources (a
## loaded resource remembers the id each file gave it) and of its sub_resources (their scene unique
## ids), and the properties in the class's order, which is the order the engine wrote them in.

const Codec = preload("../values/codec.gd")
const Job = preload("../job.gd")
const Props = preload("../values/props.gd")
const Resources = preload("../values/resources.gd")
const Saving = preload("../files/saving.gd")
const Scan = preload("../formats/scan.gd")
const TextFormat = preload("../formats/text_format.gd")
## The text format the engine's saver writes (format=3 since Godot 4.0).
const _FORMAT: int = 3


static func run(request: Dictionary, job: Job) -> Dictionary:
	var format: int = _text_format(request["resource_path"])
	var resource: Resource = Resources.load_fresh(request["resource_path"], job, job.named("resource_path"), true)
	if job.failed():
		return {}
	var properties: Dictionary = request.get("properties", {})
	var reset: Array = request.get("reset", [])
	var names: Array = properties.keys() + reset
	var before: Dictionary = _stored_values(resource)
	# Names to set are checked by Codec.apply(), as for any request; names to reset here (the list
	# of properties costs ~0.35 ms a material, a tenth of an update: only a reset asks for it).
	var known: Dictionary = Props.infos(resource) if not reset.is_empty() else {}
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
	var values: Dictionary = Codec.apply(resource, properties, job, "properties")
	if job.failed():
		return {}
	var uid: String = Saving.save(
		resource, request["resource_path"], job, job.named("resource_path"), values, "properties"
	)
	# Every stored property that changed, the ones named first: setting one property can change
	# another, also inside an embedded resource (stencil_outline_thickness moves the grow_amount of
	# the outline material the engine keeps in next_pass: "next_pass.grow_amount").
	var after: Dictionary = _stored_values(resource)
	var changed: Array = []
	for name: String in names + after.keys():
		if name in changed or Props.same(before.get(name), after.get(name)):
			continue
		# A resource that is new as a whole is one change, not one per member.
		if not changed.any(func(parent: String) -> bool: return name.begins_with(parent + ".")):
			changed.append(name)
	var reply: Dictionary = {"type": resource.get_class(), "uid": uid, "changed": changed}
	if format > 0 and format < _FORMAT:
		# The engine's saver writes only the current format: the whole file was rewritten.
		reply["converted_from_format"] = format
	return reply


## The format=N a text resource's header says, or 0 (a binary file, or no header the engine wrote).
static func _text_format(path: String) -> int:
	var file: FileAccess = FileAccess.open(path, FileAccess.READ)
	if file == null or path.get_extension().to_lower() != "tres":
		return 0
	var header: Dictionary = TextFormat.new(file.get_buffer(4096), Scan.new()).header()
	var format: Variant = header.get("fields", {}).get("format") if header.get("name") == "gd_resource" else null
	return format if typeof(format) == TYPE_INT else 0


## The value of every property `resource` stores, by name, and those of the resources embedded in
## it as "<property>.<name>" (to a few levels; a resource met again is not entered again).
static func _stored_values(resource: Resource, prefix: String = "", seen: Dictionary = {}) -> Dictionary:
	var values: Dictionary = {}
	seen[resource] = true
	for info: Dictionary in resource.get_property_list():
		var name: String = info["name"]
		if info["usage"] & PROPERTY_USAGE_STORAGE == 0 or name in Props.FORBIDDEN:
			continue
		var value: Variant = resource.get(name)
		values[prefix + name] = value
		var embedded: bool = (
			value is Resource and (value.resource_path.is_empty() or value.resource_path.contains("::"))
		)
		if embedded and not seen.has(value) and prefix.count(".") < 3:
			values.merge(_stored_values(value, prefix + name + ".", seen))
	return values
