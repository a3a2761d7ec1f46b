extends RefCounted
## Reads a Godot 4 binary resource file (`.res`, `.scn`, anything that starts with "RSRC") from its
## bytes, without loading it, and fills a Scan with what loading it would do: the classes it would
## instantiate, the files it would load, and where it would set a `script`.
##
## It reads the layout that Godot 4.0 to 4.6 write and read (core/io/resource_format_binary.cpp):
## format versions 4 to 6 (4.3 to 4.6 write 6), engine major version 4, little-endian, with the
## header flags NAMED_SCENE_IDS (required), UIDS, REAL_T_IS_DOUBLE and HAS_SCRIPT_CLASS.
##
## It fails closed: a file is only vouched for when it was read to the end of its main resource and
## every byte on the way was understood. Anything else (compression, big-endian data, another format
## version, an unknown flag or value type, a count, length or offset that leads past the end) makes
## it call `scan.fail()`, because a value it cannot walk could hide the reference that runs code.

const Scan = preload("scan.gd")

const _MAGIC: String = "RSRC"
const _COMPRESSED_MAGIC: String = "RSCC"
## The most a compressed file may unpack to before the check refuses to read it (a font's data is a
## few megabytes; a file claiming gigabytes would only cost memory).
const _MAX_UNPACKED: int = 256 * 1024 * 1024
const _ENGINE_MAJOR: int = 4
const _MIN_FORMAT: int = 4
const _MAX_FORMAT: int = 6

const _FLAG_NAMED_SCENE_IDS: int = 1
const _FLAG_UIDS: int = 2
const _FLAG_REAL_T_IS_DOUBLE: int = 4
const _FLAG_HAS_SCRIPT_CLASS: int = 8
const _KNOWN_FLAGS: int = 15
const _RESERVED_FIELDS: int = 11

## Containers nested deeper than this are refused; the engine itself would recurse without a limit.
const _MAX_DEPTH: int = 64
## Bit 31 of an inline string name's length says "inline", as opposed to an index into the table.
const _INLINE_NAME: int = 0x80000000
## The engine ignores bit 31 of an array's or dictionary's length (it once meant "shared").
const _LENGTH_MASK: int = 0x7FFFFFFF

# Value type ids as the file stores them (not Variant.Type: the file has its own numbering).
const _V_NIL: int = 1
const _V_INT: int = 3
const _V_INT64: int = 40
const _V_STRING: int = 5
const _V_NODE_PATH: int = 22
const _V_OBJECT: int = 24
const _V_DICTIONARY: int = 26
const _V_ARRAY: int = 30
const _V_PACKED_BYTE_ARRAY: int = 31
const _V_PACKED_STRING_ARRAY: int = 34
const _V_STRING_NAME: int = 44

# How an OBJECT value refers to its resource.
const _OBJECT_EMPTY: int = 0
const _OBJECT_EXTERNAL_PATH: int = 1
const _OBJECT_INTERNAL: int = 2
const _OBJECT_EXTERNAL_INDEX: int = 3

## Value types whose payload is a fixed number of 4-byte words (ints and float32s).
const _WORDS: Dictionary = {
	1: 0,  # NIL
	2: 1,  # BOOL
	3: 1,  # INT (32-bit)
	20: 4,  # COLOR (always float32)
	23: 1,  # RID
	40: 2,  # INT64
	41: 2,  # DOUBLE (always float64)
	42: 0,  # CALLABLE (saved empty)
	43: 0,  # SIGNAL (saved empty)
	45: 2,  # VECTOR2I
	46: 4,  # RECT2I
	47: 3,  # VECTOR3I
	51: 4,  # VECTOR4I
}
## Value types whose payload is a fixed number of real_t (4 or 8 bytes by REAL_T_IS_DOUBLE).
const _REALS: Dictionary = {
	4: 1,  # FLOAT
	10: 2,  # VECTOR2
	11: 4,  # RECT2
	12: 3,  # VECTOR3
	13: 4,  # PLANE
	14: 4,  # QUATERNION
	15: 6,  # AABB
	16: 9,  # BASIS
	17: 12,  # TRANSFORM3D
	18: 6,  # TRANSFORM2D
	50: 4,  # VECTOR4
	52: 16,  # PROJECTION
}
## Packed arrays of fixed-size elements: bytes per element.
const _PACKED_BYTES: Dictionary = {
	32: 4,  # PACKED_INT32_ARRAY
	33: 4,  # PACKED_FLOAT32_ARRAY
	36: 16,  # PACKED_COLOR_ARRAY (always float32)
	48: 8,  # PACKED_INT64_ARRAY
	49: 8,  # PACKED_FLOAT64_ARRAY
}
## Packed arrays of real_t vectors: reals per element.
const _PACKED_REALS: Dictionary = {
	35: 3,  # PACKED_VECTOR3_ARRAY
	37: 2,  # PACKED_VECTOR2_ARRAY
	53: 4,  # PACKED_VECTOR4_ARRAY (format 6)
}


## The reader's place in the file and what the header and tables said.
class _Cursor:
	extends RefCounted
	var bytes: PackedByteArray
	var scan: Scan
	var pos: int = 0
	var ok: bool = true
	var flags: int = 0
	var real_size: int = 4
	var strings: PackedStringArray = []
	var ext_count: int = 0
	var int_count: int = 0
	## Where the header's import metadata offset is, each external path [start, end, path as
	## written] and each internal resource's offset are in the bytes (with_paths() rewrites them).
	var importmd_at: int = -1
	var ext_paths: Array = []
	var offsets_at: PackedInt64Array = []

	func _init(data: PackedByteArray, into: Scan) -> void:
		bytes = data
		scan = into

	func left() -> int:
		return bytes.size() - pos

	func fail(reason: String) -> void:
		if ok:
			ok = false
			scan.fail(reason)

	## Stop at a file cut short or pointing past its end: the engine's loader refuses it too.
	func fail_corrupt(reason: String) -> void:
		if ok:
			ok = false
			scan.fail_corrupt(reason)


## Fill `scan` from the bytes of a binary resource file.
static func read(bytes: PackedByteArray, scan: Scan) -> void:
	# The unpacked stream of a compressed file is what follows the magic of an uncompressed one, and
	# the offsets in its table count from the stream's start: read it behind a magic, 4 bytes on.
	var compressed: bool = bytes.slice(0, 4).get_string_from_ascii() == _COMPRESSED_MAGIC
	if compressed:
		bytes = _MAGIC.to_ascii_buffer() + _unpack(bytes, scan)
		if scan.stopped():
			return
	var c: _Cursor = _Cursor.new(bytes, scan)
	_read_header(c)
	if c.ok:
		_read_strings(c)
	if c.ok:
		_read_external(c)
	var paths: PackedStringArray = []
	var offsets: PackedInt64Array = []
	if c.ok:
		_read_internal(c, paths, offsets)
		if compressed:
			for i: int in offsets.size():
				offsets[i] += _MAGIC.length()
	if c.ok:
		_check_offsets(c, offsets)
	for i: int in offsets.size():
		if not c.ok:
			return
		_read_resource(c, i, paths[i], offsets[i])
	if c.ok:
		scan.finish()


## `bytes`, a binary resource this reader vouches for, with the path of each external resource that
## `renamed` (path as written -> its new path, or "" to keep it) maps written anew, and the offsets
## that point past the table (each internal resource's, the import metadata's) moved by what the
## table grew or shrank: what the engine's ResourceFormatLoaderBinary::rename_dependencies writes,
## every other byte kept. Empty when nothing is renamed, or the file is compressed ("RSCC": the
## engine writes it whole anew) or not vouched for.
static func with_paths(bytes: PackedByteArray, renamed: Callable) -> PackedByteArray:
	var whole: Scan = Scan.new()
	read(bytes, whole)
	if bytes.slice(0, 4).get_string_from_ascii() != _MAGIC or whole.stopped():
		return PackedByteArray()
	var c: _Cursor = _Cursor.new(bytes, Scan.new())
	_read_header(c)
	_read_strings(c)
	_read_external(c)
	_read_internal(c, PackedStringArray(), PackedInt64Array())
	var out: PackedByteArray = []
	var last: int = 0
	var delta: int = 0
	for entry: Array in c.ext_paths:
		var target: String = renamed.call(entry[2])
		if target.is_empty():
			continue
		var text: PackedByteArray = target.to_utf8_buffer()
		var encoded: PackedByteArray = []
		encoded.resize(4)
		encoded.encode_u32(0, text.size() + 1)
		encoded.append_array(text)
		encoded.append(0)
		out.append_array(bytes.slice(last, entry[0]))
		out.append_array(encoded)
		delta += encoded.size() - (entry[1] - entry[0])
		last = entry[1]
	if last == 0:
		return PackedByteArray()
	out.append_array(bytes.slice(last))
	for at: int in c.offsets_at:
		out.encode_u64(at + delta, out.decode_u64(at + delta) + delta)
	var importmd: int = out.decode_u64(c.importmd_at)
	if importmd > 0:
		out.encode_u64(c.importmd_at, importmd + delta)
	return out


## The bytes inside a compressed binary resource ("RSCC", as the importers write fonts), unpacked the
## way FileAccessCompressed reads them: after the magic, u32 compression mode, u32 block size, u32
## unpacked size, then (size / block size + 1) u32 packed block sizes and the packed blocks, each
## unpacking to a full block but the last. In it is a binary resource without its leading magic.
static func _unpack(bytes: PackedByteArray, scan: Scan) -> PackedByteArray:
	if bytes.size() < 16:
		scan.fail_corrupt("compressed binary resource cut short in its header (%d bytes)" % bytes.size())
		return PackedByteArray()
	var mode: int = bytes.decode_u32(4)
	var block_size: int = bytes.decode_u32(8)
	var total: int = bytes.decode_u32(12)
	if block_size == 0:
		scan.fail_corrupt("compressed binary resource with block size 0")
		return PackedByteArray()
	if mode > FileAccess.COMPRESSION_BROTLI or total > _MAX_UNPACKED:
		scan.fail("compressed binary resource with compression mode %d and %d bytes unpacked: not read" % [mode, total])
		return PackedByteArray()
	var blocks: int = total / block_size + 1
	var at: int = 16 + blocks * 4
	if bytes.size() < at:
		scan.fail_corrupt("compressed binary resource cut short in its block table")
		return PackedByteArray()
	var unpacked: PackedByteArray = PackedByteArray()
	for i: int in blocks:
		var packed: int = bytes.decode_u32(16 + i * 4)
		var size: int = block_size if i < blocks - 1 else total % block_size
		if at + packed > bytes.size():
			scan.fail_corrupt("compressed binary resource cut short in block %d" % i)
			return PackedByteArray()
		if size > 0:
			var block: PackedByteArray = bytes.slice(at, at + packed).decompress(size, mode)
			if block.size() != size:
				scan.fail_corrupt("compressed binary resource whose block %d does not unpack" % i)
				return PackedByteArray()
			unpacked.append_array(block)
		at += packed
	return unpacked


# ----- header and tables -----------------------------------------------------------------------


static func _read_header(c: _Cursor) -> void:
	if c.bytes.size() < 4:
		c.fail_corrupt("too short for a binary resource (%d bytes)" % c.bytes.size())
		return
	var magic: String = c.bytes.slice(0, 4).get_string_from_ascii()
	if magic != _MAGIC:
		c.fail("not a binary resource: it starts with %s, not RSRC" % JSON.stringify(magic))
		return
	c.pos = 4
	if _u32(c, "the endianness field") != 0 and c.ok:
		c.fail("big-endian binary resource: only little-endian files are read")
	if _u32(c, "the use_real64 field") != 0 and c.ok:
		c.fail("the header's use_real64 field is set, which no Godot 4 saver writes")
	_read_versions(c)
	var type: String = _string(c, "the main resource's type")
	if c.ok:
		c.scan.add_class(type, "the file header's main resource type")
	c.importmd_at = c.pos
	_u64(c, "the import metadata offset")  # the engine skips it; renaming dependencies rewrites it
	_read_flags(c)


static func _read_versions(c: _Cursor) -> void:
	var major: int = _u32(c, "the engine major version")
	_u32(c, "the engine minor version")
	var format: int = _u32(c, "the format version")
	if not c.ok:
		return
	if major != _ENGINE_MAJOR:
		c.fail("written by engine major version %d; only Godot 4 files are read" % major)
	elif format < _MIN_FORMAT or format > _MAX_FORMAT:
		c.fail("binary format version %d; only versions %d to %d are read" % [format, _MIN_FORMAT, _MAX_FORMAT])


static func _read_flags(c: _Cursor) -> void:
	c.flags = _u32(c, "the format flags")
	if not c.ok:
		return
	if (c.flags & ~_KNOWN_FLAGS) != 0:
		c.fail("unknown format flags 0x%x in the header" % (c.flags & ~_KNOWN_FLAGS))
		return
	if (c.flags & _FLAG_NAMED_SCENE_IDS) == 0:
		c.fail("the header lacks the NAMED_SCENE_IDS flag that every Godot 4 saver sets")
		return
	c.real_size = 8 if c.flags & _FLAG_REAL_T_IS_DOUBLE else 4
	_u64(c, "the resource uid")  # present whether or not the UIDS flag is set
	if c.flags & _FLAG_HAS_SCRIPT_CLASS:
		var script_class: String = _string(c, "the script class")
		if c.ok and not script_class.is_empty():
			c.scan.mark_script("the header's script_class " + script_class)
	for i: int in _RESERVED_FIELDS:
		if _u32(c, "reserved header field %d" % i) != 0 and c.ok:
			c.fail("reserved header field %d is not zero: written by a format this scan does not know" % i)


static func _read_strings(c: _Cursor) -> void:
	var count: int = _count(c, 4, "the string table")
	for i: int in count:
		c.strings.append(_string(c, "string table entry %d" % i))
		if not c.ok:
			return


static func _read_external(c: _Cursor) -> void:
	var count: int = _count(c, 8, "the external resource table")
	for i: int in count:
		var type: String = _string(c, "the type of external resource %d" % i)
		var start: int = c.pos
		var path: String = _string(c, "the path of external resource %d" % i)
		c.ext_paths.append([start, c.pos, path])
		var uid: String = ""
		if c.flags & _FLAG_UIDS:
			uid = _uid_text(_s64(c, "the uid of external resource %d" % i))
		if not c.ok:
			return
		var where: String = "external resource %d (%s)" % [i, path]
		c.scan.add_class(type, where)  # a declared Script is refused even if the file is absent
		_add_table_load(c, path, uid, where)
	c.ext_count = count


## An external resource's relative path: the loader (4.3 to 4.6) joins it to its own folder part and
## localizes that against the project, so "sub/b.res" loads res://sub/sub/b.res and "./b.res" loads
## res://b.res, whatever folder this file is in. Report both that and the path as written.
static func _add_table_load(c: _Cursor, path: String, uid: String, where: String) -> void:
	if path.contains("://") or not path.is_relative_path():
		c.scan.add_load(path, uid, where, "file")
		return
	c.scan.add_load(path, uid, where, "both")
	var resolved: String = path.get_base_dir().path_join(path).simplify_path()
	if resolved != path.simplify_path():
		c.scan.add_load(resolved, uid, where + " as the engine resolves it", "root")


static func _read_internal(c: _Cursor, paths: PackedStringArray, offsets: PackedInt64Array) -> void:
	var count: int = _count(c, 12, "the internal resource table")
	if c.ok and count == 0:
		c.fail("the internal resource table is empty, so there is no main resource")
	for i: int in count:
		paths.append(_string(c, "the path of internal resource %d" % i))
		c.offsets_at.append(c.pos)
		offsets.append(_u64(c, "the offset of internal resource %d" % i))
		if not c.ok:
			return
	c.int_count = count


## Every resource must start after the tables and before the end marker, which must be there.
static func _check_offsets(c: _Cursor, offsets: PackedInt64Array) -> void:
	var size: int = c.bytes.size()
	if size - c.pos < 4 or c.bytes.slice(size - 4).get_string_from_ascii() != _MAGIC:
		c.fail_corrupt("the file does not end with the RSRC end marker: it is truncated or has trailing data")
		return
	for i: int in offsets.size():
		if offsets[i] < c.pos or offsets[i] >= size - 4:
			c.fail_corrupt(
				(
					"internal resource %d starts at offset %d, outside the resource data (%d to %d)"
					% [i, offsets[i], c.pos, size - 4]
				)
			)
			return


# ----- resources and their properties ----------------------------------------------------------


static func _read_resource(c: _Cursor, index: int, path: String, offset: int) -> void:
	c.pos = offset
	var where: String = "internal resource %d (%s)" % [index, path]
	if index == c.int_count - 1:
		where = "the main resource"
	var type: String = _string(c, "the type of " + where)
	if not c.ok:
		return
	c.scan.add_class(type, where)
	var count: int = _count(c, 8, "the properties of " + where)
	for i: int in count:
		_read_property(c, type, where)
		if not c.ok:
			return


static func _read_property(c: _Cursor, owner_type: String, where: String) -> void:
	var name: String = _name(c, "a property name of " + where)
	if not c.ok:
		return
	if name.is_empty():
		c.fail("%s has a property with an empty name (offset %d)" % [where, c.pos])
		return
	var at: String = "%s, property %s" % [where, name]
	var bundled: bool = owner_type == "PackedScene" and name == "_bundled"
	var read_property: bool = Scan.is_read_property(owner_type, name)
	if read_property and _need(c, 4, "a value type in " + at) and c.bytes.decode_u32(c.pos) == _V_STRING:
		c.pos += 4
		c.scan.add_value(owner_type, name, _string(c, "a string in " + at), where)
		return
	if c.scan.property_kind(owner_type, name) == "count" and c.left() >= 12:
		var kind: int = c.bytes.decode_u32(c.pos)
		if kind == _V_INT or kind == _V_INT64:
			var count: int = c.bytes.decode_s32(c.pos + 4) if kind == _V_INT else c.bytes.decode_s64(c.pos + 4)
			c.scan.add_value(owner_type, name, count, where)
	var type: int = _skip_value(c, 0, at, bundled)
	if c.ok and read_property and type != _V_NIL:
		c.scan.add_value(owner_type, name, type, where)  # not a string: refused
	if c.ok and name == "script" and type != _V_NIL:
		c.scan.mark_script(where)


## Walk one value and return its type id (_V_NIL for a null object too). `bundled` marks a
## PackedScene's `_bundled` dictionary, whose "names" list holds the property names its nodes set.
static func _skip_value(c: _Cursor, depth: int, where: String, bundled: bool = false) -> int:
	var type: int = _u32(c, "a value type in " + where)
	if not c.ok:
		return _V_NIL
	if _fixed_size(c, type) >= 0:
		_skip(c, _fixed_size(c, type), "a value in " + where)
	elif type == _V_STRING or type == _V_STRING_NAME:
		_skip_string(c, "a string in " + where)
	elif type == _V_NODE_PATH:
		_skip_node_path(c, where)
	elif type == _V_OBJECT:
		return _read_object(c, where)
	elif type == _V_ARRAY or type == _V_DICTIONARY:
		_skip_container(c, type, depth, where, bundled)
	elif type == _V_PACKED_BYTE_ARRAY:
		var length: int = _count(c, 1, "a PackedByteArray in " + where)
		_skip(c, length + (4 - length % 4) % 4, "a PackedByteArray in " + where)  # padded to 4 bytes
	elif type == _V_PACKED_STRING_ARRAY:
		_skip_strings(c, where)
	elif _element_size(c, type) > 0:
		_skip_packed(c, _element_size(c, type), where)
	else:
		c.fail("unknown value type id %d at offset %d in %s" % [type, c.pos - 4, where])
	return type


## The payload size of a value type of fixed size, or -1 when its size depends on its contents.
static func _fixed_size(c: _Cursor, type: int) -> int:
	if _WORDS.has(type):
		var words: int = _WORDS[type]
		return 4 * words
	if _REALS.has(type):
		var reals: int = _REALS[type]
		return c.real_size * reals
	return -1


## The element size of a packed array type of fixed-size elements, or 0 for any other type.
static func _element_size(c: _Cursor, type: int) -> int:
	if _PACKED_BYTES.has(type):
		var size: int = _PACKED_BYTES[type]
		return size
	if _PACKED_REALS.has(type):
		var reals: int = _PACKED_REALS[type]
		return c.real_size * reals
	return 0


static func _skip_node_path(c: _Cursor, where: String) -> void:
	if not _need(c, 4, "a NodePath in " + where):
		return
	var names: int = c.bytes.decode_u16(c.pos)
	var subnames: int = c.bytes.decode_u16(c.pos + 2) & 0x7FFF  # bit 15 marks an absolute path
	c.pos += 4
	for i: int in names + subnames:
		_name(c, "a NodePath part in " + where)
		if not c.ok:
			return


static func _read_object(c: _Cursor, where: String) -> int:
	var kind: int = _u32(c, "an object reference in " + where)
	if not c.ok:
		return _V_NIL
	match kind:
		_OBJECT_EMPTY:
			return _V_NIL
		_OBJECT_INTERNAL:
			_check_index(c, _u32(c, "an internal reference in " + where), c.int_count, "internal", where)
		_OBJECT_EXTERNAL_INDEX:
			# Past the table the loader sets null and loads nothing; the 4.6 saver itself writes that
			# when FLAG_BUNDLE_RESOURCES moves an external resource into the file.
			_u32(c, "an external reference in " + where)
		_OBJECT_EXTERNAL_PATH:
			_read_external_path(c, where)
		_:
			c.fail("unknown object reference kind %d at offset %d in %s" % [kind, c.pos - 4, where])
	return _V_OBJECT


## The loader fails the whole file on an internal reference past the table.
static func _check_index(c: _Cursor, index: int, count: int, kind: String, where: String) -> void:
	if c.ok and index >= count:
		c.fail("%s refers to %s resource %d of %d" % [where, kind, index, count])


## The old inline form (type and path inside the value): the loader loads the path, joined to this
## file's folder when it is relative.
static func _read_external_path(c: _Cursor, where: String) -> void:
	var type: String = _string(c, "an inline external reference's type in " + where)
	var path: String = _string(c, "an inline external reference's path in " + where)
	if not c.ok:
		return
	var at: String = "an inline external reference in " + where
	if c.scan.inline_load.is_empty():
		c.scan.inline_load = at
	c.scan.add_class(type, at)
	c.scan.add_load(path, "", at, "file")


static func _skip_container(c: _Cursor, type: int, depth: int, where: String, bundled: bool) -> void:
	if depth >= _MAX_DEPTH:
		c.fail("values nested deeper than %d levels in %s" % [_MAX_DEPTH, where])
		return
	var what: String = ("an Array in " if type == _V_ARRAY else "a Dictionary in ") + where
	var length: int = _u32(c, what) & _LENGTH_MASK
	var per_item: int = 4 if type == _V_ARRAY else 8
	if c.ok and length * per_item > c.left():
		c.fail_corrupt("%s claims %d entries, more than the %d bytes left could hold" % [what, length, c.left()])
	for i: int in length:
		if not c.ok:
			return
		if type == _V_DICTIONARY and bundled:
			_skip_bundled_entry(c, depth + 1, where)
		elif type == _V_DICTIONARY:
			_skip_value(c, depth + 1, where)  # the key
			_skip_value(c, depth + 1, where)
		else:
			_skip_value(c, depth + 1, where)


static func _skip_bundled_entry(c: _Cursor, depth: int, where: String) -> void:
	if _read_key(c, depth, where) == "names":
		_check_scene_names(c, where)
	else:
		_skip_value(c, depth, where)


## A dictionary key: its text when it is a String or StringName, else "" (after walking it).
static func _read_key(c: _Cursor, depth: int, where: String) -> String:
	if not _need(c, 4, "a dictionary key in " + where):
		return ""
	var type: int = c.bytes.decode_u32(c.pos)
	if type != _V_STRING and type != _V_STRING_NAME:
		_skip_value(c, depth, where)
		return ""
	c.pos += 4
	return _string(c, "a dictionary key in " + where)


## A packed scene lists every property name its nodes set in "names"; "script" there means a node
## gets a script (a node called "script" is marked too: the list does not say which is which).
## The scene converts any other kind of value to strings, so only the saver's own form is read.
static func _check_scene_names(c: _Cursor, where: String) -> void:
	if _u32(c, "the scene's names in " + where) != _V_PACKED_STRING_ARRAY and c.ok:
		c.fail("%s: the scene's names are not a PackedStringArray (offset %d)" % [where, c.pos - 4])
		return
	var count: int = _count(c, 4, "the scene's names in " + where)
	for i: int in count:
		if _string(c, "a scene name in " + where) == "script" and c.ok:
			c.scan.mark_script("a node of the packed scene in " + where)
		if not c.ok:
			return


static func _skip_strings(c: _Cursor, where: String) -> void:
	var count: int = _count(c, 4, "a PackedStringArray in " + where)
	for i: int in count:
		_skip_string(c, "a PackedStringArray entry in " + where)
		if not c.ok:
			return


static func _skip_packed(c: _Cursor, element_size: int, where: String) -> void:
	var count: int = _count(c, element_size, "a packed array in " + where)
	_skip(c, count * element_size, "a packed array in " + where)


# ----- primitives: every read is bounds-checked first ------------------------------------------


static func _need(c: _Cursor, size: int, what: String) -> bool:
	if not c.ok:
		return false
	if size < 0 or size > c.left():
		c.fail_corrupt(
			"truncated: %s needs %d bytes at offset %d, but the file ends at %d" % [what, size, c.pos, c.bytes.size()]
		)
		return false
	return true


static func _skip(c: _Cursor, size: int, what: String) -> void:
	if _need(c, size, what):
		c.pos += size


static func _u32(c: _Cursor, what: String) -> int:
	if not _need(c, 4, what):
		return 0
	c.pos += 4
	return c.bytes.decode_u32(c.pos - 4)


static func _u64(c: _Cursor, what: String) -> int:
	if not _need(c, 8, what):
		return 0
	c.pos += 8
	return c.bytes.decode_u64(c.pos - 8)


static func _s64(c: _Cursor, what: String) -> int:
	if not _need(c, 8, what):
		return 0
	c.pos += 8
	return c.bytes.decode_s64(c.pos - 8)


## A count of items that take at least `min_size` bytes each: refused when they cannot all fit.
static func _count(c: _Cursor, min_size: int, what: String) -> int:
	var count: int = _u32(c, "the length of " + what)
	if c.ok and count * min_size > c.left():
		c.fail_corrupt(
			(
				"%s claims %d entries at offset %d, more than the %d bytes left could hold"
				% [what, count, c.pos - 4, c.left()]
			)
		)
		return 0
	return count


## A length-prefixed UTF-8 string; the length counts the terminating NUL and there is no padding.
static func _string(c: _Cursor, what: String) -> String:
	var length: int = _u32(c, "the length of " + what)
	return _text(c, length, what)


static func _skip_string(c: _Cursor, what: String) -> void:
	var length: int = _u32(c, "the length of " + what)
	_skip(c, length, what)


## A name as properties and NodePaths store it: an index into the string table, or (bit 31 set)
## an inline string of that length.
static func _name(c: _Cursor, what: String) -> String:
	var id: int = _u32(c, what)
	if not c.ok:
		return ""
	if id & _INLINE_NAME:
		return _text(c, id & ~_INLINE_NAME, what)
	if id >= c.strings.size():
		c.fail("%s is string %d of a table of %d (offset %d)" % [what, id, c.strings.size(), c.pos - 4])
		return ""
	return c.strings[id]


## `length` bytes read as the engine does: UTF-8 up to the first NUL. Every saver ends the bytes
## with that NUL, so bytes without one are refused rather than guessed at.
static func _text(c: _Cursor, length: int, what: String) -> String:
	if length == 0 or not _need(c, length, what):
		return ""
	var end: int = c.bytes.find(0, c.pos)
	if end < 0 or end >= c.pos + length:
		c.fail("%s at offset %d is not NUL-terminated" % [what, c.pos])
		return ""
	var text: String = c.bytes.slice(c.pos, end).get_string_from_utf8()
	c.pos += length
	return text


## The text form of an external resource's uid; "" when there is none. The loader ignores any
## negative id (it cannot be registered), and falls back to the path.
static func _uid_text(id: int) -> String:
	if id < 0:
		return ""
	return ResourceUID.id_to_text(id)
