extends RefCounted
## resource_duplicate: copy a saved resource to a new file, then apply property_overrides.
##
## What the written file holds (decisions.md §5). Shallow: the copy keeps the source's nested
## objects, so the saver writes files of their own as ext_resource references and the source's
## embedded sub-resources as embedded sub-resources again. Deep: every nested resource is copied
## and loses its path, so the saver embeds it, except imported assets and scripts, which stay
## references (an imported texture cannot be embedded, and a copied script would be new code).
##
## The copy is the source loaded once more from its file, not Resource.duplicate(): in 4.6.3
## duplicating an OpenXRActionMap keeps 8 of its 14 interaction profiles, and leaves only 6 in the
## source it was made from (the profiles' setter hands them over one by one), so a duplicate would
## lose data and the loaded source with it. A second load holds exactly what the file holds.

const Codec = preload("../values/codec.gd")
const Job = preload("../job.gd")
const Resources = preload("../values/resources.gd")
const Saving = preload("../files/saving.gd")


static func run(request: Dictionary, job: Job) -> Dictionary:
	var copy: Resource = Resources.load_fresh(request["source_path"], job, "source_path", true)
	if job.failed():
		return {}
	if request.get("deep_copy", false):
		_embed_nested(copy, {})
	var values: Dictionary = Codec.apply(copy, request.get("property_overrides", {}), job, "property_overrides")
	var uid: String = ""
	if not job.failed():
		uid = Saving.save(copy, request["dest_path"], job, "dest_path", values, "property_overrides")
	return {"type": copy.get_class(), "uid": uid}


## Replace every resource file that `owner` names by a path-less copy of its own, recursively, so
## the saver embeds it; `copies` maps each file's path to its copy so shared files stay shared and
## cycles end. Embedded sub-resources are the copy's own objects already and are walked in place.
static func _embed_nested(owner: Resource, copies: Dictionary) -> void:
	for info: Dictionary in owner.get_property_list():
		if info["usage"] & PROPERTY_USAGE_STORAGE == 0 or info["name"] == "script":
			continue
		var value: Variant = owner.get(info["name"])
		var copied: Variant = _copied(value, copies)
		if not is_same(copied, value):
			owner.set(info["name"], copied)


static func _copied(value: Variant, copies: Dictionary) -> Variant:
	match typeof(value):
		TYPE_OBJECT:
			if not value is Resource or _stays_reference(value):
				return value
			var file: String = value.resource_path
			if file.is_empty() or file.contains("::"):
				if not copies.has(value):
					copies[value] = value
					_embed_nested(value, copies)
				return value
			if not copies.has(file):
				# Loaded through the gate (safety/gate.gd), like every load while a request is served.
				var fresh: Resource = ResourceLoader.load(file, "", ResourceLoader.CACHE_MODE_IGNORE)
				fresh.resource_path = ""
				copies[file] = fresh
				_embed_nested(fresh, copies)
			return copies[file]
		TYPE_ARRAY:
			var items: Array = value.duplicate()
			var changed: bool = false
			for i: int in items.size():
				items[i] = _copied(items[i], copies)
				changed = changed or not is_same(items[i], value[i])
			return items if changed else value
		TYPE_DICTIONARY:
			var entries: Dictionary = value.duplicate()
			var changed: bool = false
			for key: Variant in entries:
				entries[key] = _copied(entries[key], copies)
				changed = changed or not is_same(entries[key], value[key])
			return entries if changed else value
	return value


## Scripts and imported assets (a file with a .import beside it) are shared, never embedded.
static func _stays_reference(resource: Resource) -> bool:
	return resource is Script or Resources.is_imported(resource)
