extends RefCounted
## Values of Resource properties, JSON <-> Resource, for the value codec (codec.gd, which main.gd
## hands from_value() and to_value(): this file needs props.gd, which needs codec.gd).
##
## A value is null, a path to a resource file (confined to the project and loaded fresh by
## resources.gd), "res://file.tres::ID" for a sub-resource embedded in a file, or a new resource to
## embed, {"type", "properties"} (made by creating.gd). Read back, a resource is its path, or
## {"type", "path", "properties"} while the reply's depth lasts.

const Job = preload("../job.gd")
const Creating = preload("creating.gd")
const Props = preload("props.gd")
const Resources = preload("resources.gd")
const Paths = preload("../safety/paths.gd")


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
	var path: String = Paths.confine(text.get_slice("::", 0), job, where)
	if job.failed():
		return null
	var loaded: Resource = Resources.load_fresh(path, job, where)
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
	if Resources.is_imported(resource):
		# An imported asset is a leaf: its properties are its raw data (a font's glyph cache, a
		# texture's image), megabytes that say nothing a request can set.
		return {"type": resource.get_class(), "path": resource.resource_path}
	expanded[resource] = true
	return {
		"type": resource.get_class(),
		"path": resource.resource_path,
		"properties": Props.stored(resource, depth - 1, expanded, false),
	}
