extends RefCounted
## The uids of a project that no editor has opened, learnt from its files as the editor's scan learns
## them, for a file whose `ext_resource` path is stale but whose uid names a file of the project.
##
## The engine's text and binary loaders take an ext_resource's uid before its path when ResourceUID
## knows the uid (ResourceFormatLoaderText::_parse_ext_resource); ResourceUID learns them from
## `.godot/uid_cache.bin`, which a fresh clone lacks, so such a file failed with not_found there and
## loaded in the editor. The gate (gate.gd) asks for the project's uids the first time a file it reads
## names a uid the engine does not know and a path that does not exist; this reads each file's uid
## where the editor finds it (formats/ids.gd: a header, a `.import`, a `.uid`), skipping hidden
## folders, folders holding `.gdignore` and linked folders, and adds those ResourceUID lacks. A uid
## that two files claim names neither (gdres/requests/uids.py decides the same).

const Ids = preload("../formats/ids.gd")
const Paths = preload("paths.gd")

## The sidecars whose uid belongs to the file beside them: never a file of their own.
const _SIDECARS: Array[String] = ["import", "uid"]

## Whether the project's uids were learnt by this engine (once: a file added since is met by path).
static var _learnt: bool = false


## Add the project's uids that ResourceUID lacks, the first time only.
static func learn() -> void:
	if _learnt:
		return
	_learnt = true
	var found: Dictionary = {}
	for path: String in Paths.scanned_files():
		var real: String = Paths.real(path)
		if path.get_extension().to_lower() in _SIDECARS or not Paths.inside(real):
			continue  # a sidecar's uid is its file's; a link out of the project is not read
		var text: String = Ids.uid_of(real)
		var id: int = ResourceUID.text_to_id(text) if not text.is_empty() else ResourceUID.INVALID_ID
		if id != ResourceUID.INVALID_ID:
			found[id] = path if not found.has(id) else ""  # a uid two files claim names neither
	for id: int in found:
		if found[id] != "" and not ResourceUID.has_id(id):
			ResourceUID.add_id(id, found[id])
