extends RefCounted
## resource_duplicate: copy a saved resource to a new file, then apply property_overrides.
##
## What the written file holds (decisions.md §5). Shallow: the copy keeps the source's nested
## objects, so the saver writes files of their own as ext_resource references and the source's
## embedded sub-resources as embedded sub-resources again. Deep: every nested resource is copied
## and loses its path, so the saver embeds it, except imported assets and scripts, which stay
## references (an imported texture cannot be embedded, and a copied script would be new code).

const Job = preload("../job.gd")
const Props = preload("../props.gd")
const Resources = preload("../resources.gd")
const Saving = preload("../saving.gd")


static func run(request: Dictionary, job: Job) -> Dictionary:
	var source: Resource = Resources.load_fresh(request["source_path"], job, "source_path")
	if job.failed():
		return {}
	var copy: Resource = source.duplicate(false)
	if request.get("deep_copy", false):
		_embed_nested(copy, {})
	var values: Dictionary = Props.apply(copy, request.get("property_overrides", {}), job, "property_overrides")
	if not job.failed():
		Saving.save(copy, request["dest_path"], job, "dest_path", values, "property_overrides")
	return {"type": copy.get_class()}


## Replace every nested resource of `owner` by a path-less copy, recursively; `copies` maps each
## original to its copy so shared objects stay shared and cycles end.
static func _embed_nested(owner: Resource, copies: Dictionary) -> void:
	for info: Dictionary in owner.get_property_list():
		if info["usage"] & PROPERTY_USAGE_STORAGE == 0 or info["name"] == "script":
			continue
		var value: Variant = owner.get(info["name"])
		var copied: Variant = _copied(value, copies)
		if copied != null and not is_same(copied, value):
			owner.set(info["name"], copied)


static func _copied(value: Variant, copies: Dictionary) -> Variant:
	match typeof(value):
		TYPE_OBJECT:
			if not value is Resource or _stays_reference(value):
				return value
			if not copies.has(value):
				var fresh: Resource = value.duplicate(false)
				fresh.resource_path = ""
				copies[value] = fresh
				_embed_nested(fresh, copies)
			return copies[value]
		TYPE_ARRAY:
			var items: Array = value.duplicate()
			for i: int in items.size():
				items[i] = _copied(items[i], copies)
			return items
		TYPE_DICTIONARY:
			var entries: Dictionary = value.duplicate()
			for key: Variant in entries:
				entries[key] = _copied(entries[key], copies)
			return entries
	return value


## Scripts and imported assets (a file with a .import beside it) are shared, never embedded.
static func _stays_reference(resource: Resource) -> bool:
	var file: String = resource.resource_path.get_slice("::", 0)
	return resource is Script or (not file.is_empty() and FileAccess.file_exists(file + ".import"))
