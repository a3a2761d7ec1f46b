extends RefCounted
## Resources named in requests and values: confined to the project, checked for scripts, loaded fresh.

const Job = preload("job.gd")
const Props = preload("props.gd")

const _SCRIPT_TYPES: Array[String] = ["GDScript", "Script", "CSharpScript"]
static var _script_line: RegEx = RegEx.create_from_string("(?m)^script = |^\\[(ext|sub)_resource type=\"(GDScript|Script|CSharpScript)\"")
static var _ext_path: RegEx = RegEx.create_from_string("(?m)^\\[ext_resource [^\\n]*path=\"([^\"]+)\"")


## Return `path` as a normalised res:// path inside the project, or "" after failing the job.
static func confine(path: String, job: Job, where: String) -> String:
	var inner: String = path.trim_prefix("res://")
	if inner.is_empty() or inner.is_absolute_path() or inner.contains("://") or inner.to_utf8_buffer().has(0):
		job.fail(Job.INVALID_PATH, "%s: %s must be a path relative to the project (or start with res://)" % [where, JSON.stringify(path)], where)
		return ""
	var simple: String = ("res://" + inner).simplify_path()
	if simple.begins_with("res://..") or simple == "res://":
		job.fail(Job.PATH_OUTSIDE_PROJECT, "%s: %s leads outside the project" % [where, JSON.stringify(path)], where)
		return ""
	if simple == "res://project.godot" or simple.begins_with("res://.godot/"):
		job.fail(Job.INVALID_PATH, "%s: %s points at the engine's own files" % [where, JSON.stringify(path)], where)
		return ""
	return simple


## Load the resource at res:// `path` fresh from disk, refusing scripts unless allowed.
static func load_fresh(path: String, job: Job, where: String) -> Resource:
	if not FileAccess.file_exists(path) and not ResourceLoader.exists(path):
		job.fail(Job.NOT_FOUND, "%s: %s does not exist" % [where, path], where)
		return null
	if not ResourceLoader.exists(path) and not path.get_extension() in ResourceLoader.get_recognized_extensions_for_type("Resource"):
		job.fail(Job.NOT_IMPORTED, "%s: %s has not been imported by the engine (the project has no import data for it)" % [where, path], where)
		return null
	if not job.allow_scripts:
		var carrier: String = script_carrier(path, {})
		if not carrier.is_empty():
			job.fail(Job.UNSAFE_RESOURCE, "%s: %s carries a script (in %s); loading it would run code, so set allow_scripts: true if you trust it" % [where, path, carrier], where)
			return null
	var loaded: Resource = ResourceLoader.load(path, "", ResourceLoader.CACHE_MODE_REPLACE_DEEP)
	if loaded == null:
		job.fail(Job.LOAD_FAILED, "%s: the engine could not load %s" % [where, path], where)
	return loaded


## The file (this one or one it depends on) whose resources carry a script, or "".
## Scenes are not inspected: the bridge never instantiates their nodes.
static func script_carrier(path: String, seen: Dictionary) -> String:
	if seen.has(path) or path.get_extension() in ["tscn", "scn"]:
		return ""
	seen[path] = true
	if path.get_extension() in ["gd", "cs"]:
		return ""
	var bytes: PackedByteArray = FileAccess.get_file_as_bytes(path)
	if path.get_extension() != "tres":
		for marker: String in _SCRIPT_TYPES:
			if bytes.get_string_from_ascii().contains(marker):
				return path
		return ""
	var text: String = bytes.get_string_from_utf8()
	if _script_line.search(text) != null:
		return path
	for found: RegExMatch in _ext_path.search_all(text):
		var carrier: String = script_carrier(found.get_string(1), seen)
		if not carrier.is_empty():
			return carrier
	return ""


## A Resource value from JSON: null, or a path to an existing resource of a class in `hint`.
static func from_value(value: Variant, hint: String, job: Job, where: String) -> Resource:
	if value == null:
		return null
	if typeof(value) != TYPE_STRING:
		job.fail(Job.INVALID_VALUE, "%s: give a resource as a path string or null, not %s" % [where, JSON.stringify(value)], where)
		return null
	var path: String = confine(value, job, where)
	if job.failed():
		return null
	var loaded: Resource = load_fresh(path, job, where)
	if job.failed():
		return null
	var accepted: PackedStringArray = hint.split(",", false)
	for cls: String in accepted:
		if loaded.is_class(cls.strip_edges()):
			return loaded
	if accepted.is_empty():
		return loaded
	job.fail(Job.INVALID_VALUE, "%s: %s is a %s, but this property takes %s" % [where, path, loaded.get_class(), " or ".join(accepted)], where)
	return null


## A resource as JSON: its path once `depth` is spent (or on a cycle), else type, path, properties.
static func to_value(value: Object, depth: int, stack: Array) -> Variant:
	if not (value is Resource):
		return null
	var resource: Resource = value
	if depth <= 0 or stack.has(resource):
		return resource.resource_path
	return {
		"type": resource.get_class(),
		"path": resource.resource_path,
		"properties": Props.stored(resource, depth - 1, stack + [resource], false),
	}
