extends RefCounted
## The ids of resource files: the uid:// a project file has, and the ids of the sections inside one.

const Scan = preload("scan.gd")
const TextFormat = preload("text_format.gd")

const _FLAG_UIDS: int = 2
## Bytes read of a file to find its uid: a header, never a whole file.
const _HEAD: int = 4096
const _ID_CHARS: String = "abcdefghijklmnopqrstuvwxyz0123456789"

## A uid and nothing else: `\\z`, not `$`, which also matches before a last line break.
static var _uid_text: RegEx = RegEx.create_from_string("^uid://[a-z0-9]+\\z")
static var _import_uid: RegEx = RegEx.create_from_string('(?m)^uid="(uid://[a-z0-9]+)"')
static var _uid_file: RegEx = RegEx.create_from_string("^\\s*(uid://[a-z0-9]+)\\s*$")


## The uid:// text of the file at `path` (an absolute real path), or "" when it has none. Read from
## the file that holds it, as the editor reads it (a text resource's header line, an imported
## asset's .import file, a script's or shader's .uid file, a binary resource's header), not from the
## engine's uid cache: a fresh clone has none. gdres/requests/uids.py reads them alike.
static func uid_of(path: String) -> String:
	for candidate: String in [path + ".import", path + ".uid", path]:
		if not FileAccess.file_exists(candidate):
			continue
		# The file itself was confined by its caller; a link beside it could lead anywhere, and
		# what is read here comes back in a reply.
		if candidate != path and _is_link(candidate):
			return ""
		if candidate == path and path.get_extension().to_lower() in ["res", "scn"]:
			return _binary_uid(path)
		var file: FileAccess = FileAccess.open(candidate, FileAccess.READ)
		if file == null:
			return ""
		var head: PackedByteArray = file.get_buffer(_HEAD)
		if candidate == path:
			return header_uid(head)
		var pattern: RegEx = _import_uid if candidate.ends_with(".import") else _uid_file
		var found: RegExMatch = pattern.search(head.get_string_from_utf8())
		return found.get_string(1) if found != null else ""
	return ""


## The uid:// a text resource's or scene's header gives, read as the engine reads the header, or "".
static func header_uid(head: PackedByteArray) -> String:
	var header: Dictionary = TextFormat.new(head, Scan.new()).header()
	var tag_name: String = header.get("name", "")
	if not tag_name.begins_with("gd_"):
		return ""
	var uid: Variant = header["fields"].get("uid")
	return uid if typeof(uid) == TYPE_STRING and _uid_text.search(uid) != null else ""


## Whether `path` (absolute) is a link, or cannot be told from one.
static func _is_link(path: String) -> bool:
	var folder: DirAccess = DirAccess.open(path.substr(0, path.rfind("/")))
	return folder == null or folder.is_link(path.get_file())


## Write `id` as the uid in the header of the binary resource at `path` (an absolute real path),
## in place: the saver leaves room for it (and sets the flag) even when it writes none.
static func stamp_binary(path: String, id: int) -> Error:
	var file: FileAccess = FileAccess.open(path, FileAccess.READ_WRITE)
	if file == null:
		return FileAccess.get_open_error()
	if not _to_uid(file):
		return ERR_FILE_CORRUPT
	file.store_64(id)
	var err: Error = file.get_error()
	file.close()
	return err if err != ERR_FILE_EOF else OK


## The uid in a binary resource's header, or "". Not ResourceLoader.get_resource_uid(): in 4.6.3 it
## answers INVALID_ID for a .res whose header holds a uid, unless the engine's uid cache has it.
static func _binary_uid(path: String) -> String:
	var file: FileAccess = FileAccess.open(path, FileAccess.READ)
	if file == null or not _to_uid(file):
		return ""
	var id: int = file.get_64()
	return ResourceUID.id_to_text(id) if id >= 0 and not file.eof_reached() else ""


## Move `file` (a binary resource, from its start) to its header's uid; false when it is no binary
## resource or its header says it holds no uid.
static func _to_uid(file: FileAccess) -> bool:
	if file.get_buffer(4) != "RSRC".to_ascii_buffer():
		return false
	# Big-endian, real64, major, minor and format as 32-bit numbers, the class name (length, then
	# as many bytes), the import metadata's offset (64 bits), the flags, the uid.
	file.big_endian = file.get_32() != 0
	for i: int in 4:
		file.get_32()
	var name_length: int = file.get_32()
	file.seek(file.get_position() + name_length)
	file.get_64()
	return file.get_32() & _FLAG_UIDS != 0 and not file.eof_reached()


## A uid for the file at res:// `path` that has none (one saved before Godot 4.0), drawn from its
## path as section ids are (drawn()), not at random as the engine draws one, so that the same update
## of two clones writes the same bytes; one the engine knows for another file is not taken.
static func drawn_uid(path: String) -> String:
	var draw: int = 0
	while true:
		var drawn_from: String = "%s:uid:%d" % [path, draw]
		var id: int = drawn_from.sha256_buffer().decode_s64(0) & 0x7FFFFFFFFFFFFFFF
		if id != ResourceUID.INVALID_ID and (not ResourceUID.has_id(id) or ResourceUID.get_id_path(id) == path):
			return ResourceUID.id_to_text(id)
		draw += 1
	return ""


## A new section id, `prefix` and five characters of [a-z0-9] as the engine's own look
## ("Gradient_x3k9q", "2_ab1cd"), not in `taken`: drawn from `seed` and the ids taken, not at
## random as the engine draws them, so that the same request writes the same file twice (a dry
## run's diff is the real run's; a batch run again gives the same files).
static func drawn(prefix: String, seed: String, taken: Dictionary) -> String:
	var draw: int = taken.size()
	while true:
		var drawn_from: String = "%s:%s:%d" % [seed, prefix, draw]
		var bytes: PackedByteArray = drawn_from.sha256_buffer()
		var id: String = prefix
		for i: int in 5:
			id += _ID_CHARS[bytes[i] % _ID_CHARS.length()]
		if not taken.has(id):
			return id
		draw += 1
	return ""
