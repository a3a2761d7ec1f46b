extends "text_tokens.gd"
## Read Godot's text resource format (.tres, .tscn, and the same syntax in .import and .remap files)
## the way the engine reads it, without creating a single object.
##
## This is a port of the rules of the engine's VariantParser (core/variant/variant_parser.cpp) and
## ResourceLoaderText (scene/resources/resource_format_text.cpp), byte for byte, because a check that
## reads a file differently from the loader can be fooled by the difference. Facts it relies on:
## - The file is read as bytes; a byte <= 32 is whitespace, `;` starts a comment to the end of the
##   line, and a NUL byte ends the token stream (this reader refuses a file holding one).
## - A property name is every byte > 32 before `=`, with whitespace and comments skipped *inside*
##   it, and a quoted part replacing what came before it: `scr ipt=`, `"script"=` and
##   `x"scr"ipt=` all set `script`. A `[` starts a tag only when the name is still empty.
## - Strings may span lines; `\` escapes the next character, `\u` takes 4 and `\U` 6 hex digits.
## - `Object(Class, "prop": value, ...)` instantiates any class and sets any property, `script`
##   included: read as an instantiated class and its properties.
## - `Resource("path")` loads a file by path (the text loader gives the parser no handler for it),
##   and so do ExtResource("path") and SubResource("path") where the parser has no handler: in the
##   header tag and in the first tag after it, which ResourceLoaderText parses before installing
##   its handlers. A path found there is reported as a file the load would open.
## Where the engine would stop with a parse error this reader may read on or stop too; either way
## it never reads less than the engine acts on.

## Constructors whose arguments are numbers (or inf/nan names) only.
const _CONSTRUCTORS: JSON = preload("constructors.json")
const _BYTES: Array[String] = ["PackedByteArray", "PoolByteArray", "ByteArray"]
const _STRINGS: Array[String] = ["PackedStringArray", "PoolStringArray", "StringArray"]
const _REFERENCES: Array[String] = ["Resource", "ExtResource", "SubResource"]
const _SCALARS: Array[String] = ["true", "false", "null", "nil", "inf", "-inf", "inf_neg", "nan"]
const _STOR_FIX: Array[String] = ["inf", "-inf", "inf_neg", "nan"]
## Deepest nesting of arrays and dictionaries read; deeper is refused, not recursed.
const _MAX_DEPTH: int = 64

## What a value was, for the callers that look at values: a string, a number, null, or OTHER.
const OTHER: String = Scan.OTHER

## A byte that cannot be part of a run of numbers, inf/nan names, commas and whitespace.
static var _not_numeric: RegEx = RegEx.create_from_string("[^0-9A-Za-z_.,+\\-\\x01-\\x20]")

## Where outline() stopped before reading to the end: the offset of a tag in its `stop_at`, or -1.
var stopped_at: int = -1
## The class of the section being read (its properties' hints say which are file paths).
var _section_type: String = ""
## The class the header names for the [resource] section, and whether the header is a scene's.
var _main_type: String = ""
var _scene: bool = false
## Whether ExtResource/SubResource take paths here (no handler installed yet), as Resource always does.
var _generic_refs: bool = true
## Config files (.import, .remap) have "simple" section headers: anything up to an unescaped `]`.
var _simple_tags: bool = false
var _depth: int = 0
## Where the current tag or assignment starts (a byte offset).
var _event_start: int = 0
## Whether to note where each section and property is (outline()), and what was noted.
var _outlining: bool = false
var _outline: Array[Dictionary] = []
## Offsets of tags before which outline() stops, and what the scan held where the last tag started.
var _stop_at: Dictionary = {}
var _found_before_tag: PackedInt64Array = []


func _init(bytes: PackedByteArray, scan: Scan, simple_tags: bool = false) -> void:
	_bytes = bytes
	_size = bytes.size()
	_scan = scan
	_simple_tags = simple_tags


# ----- files -------------------------------------------------------------------------------------


## Read a .tres or .tscn file as resource_file() does, and return where its sections are: each
## {"kind": tag name, "attrs": field -> text (a string's value, else the value as written), "spans":
## field -> [start, end] of its value as written, "start", "body_start" (the line after the tag),
## "end" (where the next section starts): byte offsets, "props": property name -> [start of its
## line, end of the line its value ends on], "found": what the scan held where the section starts,
## before its tag was read (Scan.progress()), "events": where its tag ends, then the start and end
## of each of its assignments, in bytes from "start" (kept so when other offsets become characters),
## "id": its id as the engine's loader takes it (the value as a String), or null for a composite}.
## scene_text.gd edits scenes by this outline, so an edit sees the file as the engine reads it.
## From `start` > 0, the tag there past the first tag after a .tscn header, with the scan holding
## what a read from the file's start finds before it, this reads on as that read would (its state
## where such a tag starts is only its place and what it found), and stops before a tag at an offset
## in `stop_at` (before reading it), noted in stopped_at; it gives the sections it read.
func outline(start: int = 0, stop_at: Dictionary = {}) -> Array[Dictionary]:
	_outlining = true
	if start == 0:
		resource_file()
	elif not _holds_nul():
		_pos = start
		_generic_refs = false
		_scene = true
		_stop_at = stop_at
		stopped_at = _sections("")
		if stopped_at >= 0 and not _outline.is_empty():
			_outline[-1]["end"] = stopped_at
	return _outline


## Note a section that starts at `start` (its tag read up to _pos).
func _note_section(tag: Dictionary, start: int) -> void:
	if not _outlining:
		return
	if not _outline.is_empty():
		_outline[-1]["end"] = start
	var attrs: Dictionary = {}
	for field: String in tag["fields"]:
		var value: Variant = tag["fields"][field]
		attrs[field] = value if _is_text(value) else tag["raw"][field]
	var id: Variant = tag["fields"].get("id")
	var body: int = _line_end(_pos)
	_outline.append(
		{
			"kind": tag["name"],
			"attrs": attrs,
			"spans": tag["spans"].duplicate(true),
			"start": start,
			"body_start": body,
			"end": _size,
			"props": {},
			"found": _found_before_tag,
			"events": [_pos - start],
			"id": str(id) if _is_text(id) or typeof(id) in [TYPE_INT, TYPE_FLOAT] else null
		}
	)


## The offset after the end of the line that holds offset `at`.
func _line_end(at: int) -> int:
	var newline: int = _bytes.find(10, at)
	return _size if newline < 0 else newline + 1


## Read a .tres or .tscn file: its classes, the files it loads, where it sets a script.
func resource_file() -> void:
	if not _holds_nul():
		_header()
		_sections("the header")


## Whether the file holds a NUL byte, which the engine's parser stops at (the scan is failed then).
func _holds_nul() -> bool:
	if _bytes.has(0):
		_scan.fail_corrupt("it holds a NUL byte, where the engine's parser stops reading")
	return _bytes.has(0)


## Read the sections from _pos, `section` being the one read: to the end, or up to a tag that starts
## at an offset in _stop_at (that offset; else -1).
func _sections(section: String) -> int:
	while not _failed():
		var event: Dictionary = _tag_or_assignment()
		if _failed():
			return -1
		if event.is_empty():
			_scan.finish()
			return -1
		if event.has("stop"):
			return _event_start
		if event.has("tag"):
			var tag: Dictionary = event["tag"]
			section = _describe(tag)
			_note_section(tag, _event_start)
			_tag_classes(tag, section)
			# The loader makes the main resource of the header's type, whatever a [resource] tag says (a
			# red-team read: `[resource type="Resource"]` under a CompressedTexture2D header hid its
			# load_path from the path checks, and the engine opened the file named).
			var type: Variant = _main_type if tag["name"] == "resource" else tag["fields"].get("type", "")
			_section_type = type if _is_text(type) else ""
			# The first tag after the header was read without reference handlers (see the file
			# comment); the loader installs them only then.
			_generic_refs = false
			continue
		if event["name"].is_empty():
			# The loader then takes the section's tag for the next one, read once more (a second node
			# of the same path, a second sub_resource of the same id), where this reader would go on.
			_fail(
				"line %d: a property has no name, which the engine's loader reads as its section begun again" % _line()
			)
			return -1
		if _outlining and not _outline.is_empty():
			_outline[-1]["props"][event["name"]] = [_event_start, _line_end(_pos - 1)]
			_outline[-1]["events"].append_array([_event_start - _outline[-1]["start"], _pos - _outline[-1]["start"]])
		if event["name"] == "script" and event["value"] != null:
			_scan.mark_script("%s (line %d)" % [section, _line()])
			_scan.lined += 1
		else:
			_scan.add_value(_section_type, event["name"], event["value"], section)
	return -1


## The header tag of a text resource or scene as the engine reads it (a tag as _tag() gives it, or
## {} when the file starts with none it can read): for the callers that look at the header only.
func header() -> Dictionary:
	_next()
	if _tok != Tok.BRACKET_OPEN:
		return {}
	var tag: Dictionary = _tag()
	return {} if _failed() else tag


## Read the header tag and note the class it makes (and a script_class it names).
func _header() -> void:
	_next()
	if _tok != Tok.BRACKET_OPEN:
		_corrupt("it does not start with a [gd_resource] or [gd_scene] header")
		return
	var start: int = _tok_start
	_found_before_tag = _scan.progress()
	var header: Dictionary = _tag()
	if _failed():
		return
	_note_section(header, start)
	var fields: Dictionary = header["fields"]
	match header["name"]:
		"gd_resource":
			var type: Variant = fields.get("type")
			if not _is_text(type):
				_fail("its [gd_resource] header names no type")
				return
			_scan.add_class(type, "the main resource")
			_main_type = type
			var script_class: Variant = fields.get("script_class")
			if script_class != null and str(script_class) != "":
				_scan.mark_script("the header's script_class %s" % JSON.stringify(script_class))
		"gd_scene":
			_scene = true
			_scan.add_class("PackedScene", "the scene")
		_:
			_corrupt("its header [%s] is neither gd_resource nor gd_scene" % header["name"])


## Read a file in the engine's config syntax (.import, .remap): its sections, each
## {"name": String, "values": {key: value}}, a value being a String, a number, a bool, null or
## OTHER. Constructs that make the engine load or create objects are reported in the scan.
func config_file() -> Array[Dictionary]:
	var sections: Array[Dictionary] = []
	if _holds_nul():
		return sections
	_generic_refs = true
	# Keys before any section header (an import's .md5 record has only those) go in a section "".
	var values: Dictionary = {}
	sections.append({"name": "", "values": values})
	while not _failed():
		var event: Dictionary = _tag_or_assignment()
		if _failed():
			break
		if event.is_empty():
			_scan.finish()
			break
		if event.has("tag"):
			values = {}
			sections.append({"name": event["tag"]["name"], "values": values})
		else:
			values[event["name"]] = event["value"]
	return sections


## The classes a tag makes the engine instantiate, and the files an ext_resource tag loads.
func _tag_classes(tag: Dictionary, where: String) -> void:
	var fields: Dictionary = tag["fields"]
	match tag["name"]:
		"ext_resource":
			var path: Variant = fields.get("path")
			var uid: Variant = fields.get("uid", "")
			var type: Variant = fields.get("type", "")
			# The engine converts any value to a String here (a StringName or NodePath too), so
			# only a plain string is taken at its word.
			if not _is_text(path) or not _is_text(uid) or not _is_text(type):
				_fail("%s has a path, uid or type that is not a plain string" % where)
				return
			_scan.add_class(type, where)
			_scan.add_load(path, uid, where, "file")
		"sub_resource":
			var sub_type: Variant = fields.get("type")
			if not _is_text(sub_type):
				_fail("%s names no type as a plain string" % where)
				return
			_scan.add_class(sub_type, where)
		"resource":
			if _scene:
				_corrupt("%s is in a scene, where the engine's loader refuses it" % where)
		"node", "connection", "editable":
			pass
		_:
			_corrupt("%s is not a tag the engine's loader knows" % where)


## Whether a value read by _value() is a plain string (not OTHER, which is a String too).
static func _is_text(value: Variant) -> bool:
	return typeof(value) == TYPE_STRING and value != OTHER


static func _describe(tag: Dictionary) -> String:
	var fields: Dictionary = tag["fields"]
	for key: String in ["id", "name", "path"]:
		if fields.has(key):
			return '[%s %s="%s"]' % [tag["name"], key, str(fields[key]).left(80)]
	return "[%s]" % tag["name"]


# ----- the tag / assignment loop (VariantParser::parse_tag_assign_eof) -----------------------------


## The next tag ({"tag": {name, fields}}) or assignment ({"name", "value"}), or {} at the end.
func _tag_or_assignment() -> Dictionary:
	var name: String = ""
	while true:
		if _pos >= _size:
			return {}
		var c: int = _bytes[_pos]
		_pos += 1
		if c == 59:  # ;
			_skip_comment()
			continue
		if name.is_empty() and c > 32:
			_event_start = _pos - 1
		if c == 91 and name.is_empty():  # [
			if _stop_at.has(_event_start):
				return {"stop": true}
			if _outlining:
				_found_before_tag = _scan.progress()
			var tag: Dictionary = _simple_tag() if _simple_tags else _tag()
			return {} if _failed() else {"tag": tag}
		if c <= 32:
			continue
		if c == 34:  # "
			_pos -= 1
			_next()
			if _tok != Tok.STRING:
				_corrupt("a quoted property name is not a valid string")
				return {}
			name = _text
		elif c != 61:  # =
			name += char(c)
		else:
			_next()
			var value: Variant = _value()
			return {} if _failed() else {"name": name, "value": value}
	return {}


## A tag after its `[`: name (with `.`/`:` parts), fields (field -> value, as _value() gives it), raw
## (field -> the value as written) and spans (field -> [start, end], the byte offsets of the value as
## written) (VariantParser::_parse_tag).
func _tag() -> Dictionary:
	_next()
	if _tok != Tok.IDENTIFIER:
		_corrupt("a tag has no name")
		return {}
	var name: String = _text
	var fields: Dictionary = {}
	var raw: Dictionary = {}
	var spans: Dictionary = {}
	var naming: bool = true
	while true:
		if _pos >= _size:
			_corrupt("the file ends inside the tag [%s" % name)
			return {}
		_next()
		if _tok == Tok.BRACKET_CLOSE:
			break
		if naming and (_tok == Tok.PERIOD or _tok == Tok.COLON):
			name += "." if _tok == Tok.PERIOD else ":"
			_next()
		else:
			naming = false
		if _tok != Tok.IDENTIFIER:
			_corrupt("the tag [%s has something other than a field name" % name)
			return {}
		var field: String = _text
		if naming:
			name += field
			continue
		_next()
		if _tok != Tok.EQUAL:
			_corrupt("the field %s of [%s has no =" % [field, name])
			return {}
		_next()
		var start: int = _tok_start
		fields[field] = _value()
		raw[field] = _bytes.slice(start, _pos).get_string_from_utf8()
		spans[field] = [start, _pos]
		if _failed():
			return {}
	return {"name": name, "fields": fields, "raw": raw, "spans": spans}


## A "simple" tag, as config files have them: everything up to an unescaped `]`.
func _simple_tag() -> Dictionary:
	var start: int = _pos
	var escaping: bool = false
	while _pos < _size:
		var c: int = _bytes[_pos]
		_pos += 1
		if c == 93 and not escaping:  # ]
			var name: String = _bytes.slice(start, _pos - 1).get_string_from_utf8().strip_edges()
			return {"name": name, "fields": {}}
		escaping = c == 92 and not escaping  # backslash
	_corrupt("the file ends inside a section header")
	return {}


# ----- values (VariantParser::parse_value) ---------------------------------------------------------


## Read the value whose first token is the current one. Return it for a string, number, bool or
## null; OTHER for anything else.
func _value() -> Variant:
	match _tok:
		Tok.STRING, Tok.STRING_NAME:
			# Where the loader wants a String (a tag's type, path or id) it converts a StringName
			# to the same text, so &"GDScript" names the class that "GDScript" does.
			return _text
		Tok.NUMBER:
			return (
				_text.to_float()
				if _text.contains(".") or _text.contains("e") or _text.contains("E")
				else _text.to_int()
			)
		Tok.BRACKET_OPEN:
			return _array()
		Tok.IDENTIFIER:
			return _identifier_value()
		Tok.CURLY_OPEN:
			_dictionary()
		Tok.COLOR:
			pass
		_:
			_corrupt("a value is missing or malformed")
			return null
	return OTHER


func _identifier_value() -> Variant:
	var id: String = _text
	if id in _SCALARS:
		match id:
			"true":
				return true
			"false":
				return false
			"null", "nil":
				return null
		return OTHER
	if id in _CONSTRUCTORS.data["numeric"]:
		_numbers(id)
	elif id in _BYTES:
		_arguments(id, [Tok.STRING, Tok.NUMBER])
	elif id in _STRINGS:
		_arguments(id, [Tok.STRING])
	elif id == "NodePath":
		_arguments(id, [Tok.STRING])
	elif id == "RID":
		_arguments(id, [Tok.NUMBER])
	elif id == "Signal" or id == "Callable":
		_arguments(id, [])
	elif id in _REFERENCES:
		_reference(id)
	elif id == "Array":
		_typed_container(id, 1)
	elif id == "Dictionary":
		_typed_container(id, 2)
	elif id == "Object":
		_inline_object()
	else:
		_corrupt("line %d has a value the engine does not know (%s)" % [_line(), id.left(60)])
	return OTHER


## An array after its `[`. In a config file (an import's dest_files) its items come back, each as
## _value() gives it; elsewhere OTHER, so a mesh's array is not built up for nothing.
func _array() -> Variant:
	if not _deeper():
		return OTHER
	var items: Array = []
	var need_comma: bool = false
	while true:
		if _pos >= _size:
			_corrupt("the file ends inside an array")
			return OTHER
		_next()
		if _tok == Tok.BRACKET_CLOSE:
			_depth -= 1
			return items if _simple_tags else OTHER
		if need_comma:
			if _tok != Tok.COMMA:
				_corrupt("line %d: an array is missing a comma" % _line())
				return OTHER
			need_comma = false
			continue
		var item: Variant = _value()
		if _failed():
			return OTHER
		if _simple_tags:
			items.append(item)
		need_comma = true
	return OTHER


func _dictionary() -> void:
	if not _deeper():
		return
	var need_comma: bool = false
	while true:
		if _pos >= _size:
			_corrupt("the file ends inside a dictionary")
			return
		_next()
		if _tok == Tok.CURLY_CLOSE:
			_depth -= 1
			return
		if need_comma:
			if _tok != Tok.COMMA:
				_corrupt("line %d: a dictionary is missing a comma" % _line())
				return
			need_comma = false
			continue
		_entry()
		if _failed():
			return
		need_comma = true


## A dictionary's `key: value`, from the key's first token.
func _entry() -> void:
	_value()
	if _failed():
		return
	_next()
	if _tok != Tok.COLON:
		_corrupt("line %d: a dictionary key has no colon" % _line())
		return
	_next()
	_value()


## Count one more level of nesting; false (after failing) past the limit.
func _deeper() -> bool:
	_depth += 1
	if _depth > _MAX_DEPTH:
		_fail("line %d: values nest deeper than %d levels" % [_line(), _MAX_DEPTH])
		return false
	return true


## `Name(` numbers `)`. Long runs (a mesh's vertices) are checked in one pass: when everything up
## to the next `)` is digits, letters, `_`, `.`, `,`, `+`, `-` and whitespace, the engine either
## reads exactly that far or stops with an error, so nothing in between needs a token of its own.
func _numbers(id: String) -> void:
	_next()
	if _tok != Tok.PAREN_OPEN:
		_corrupt("line %d: %s has no (" % [_line(), id])
		return
	var close: int = _bytes.find(41, _pos)
	if close >= 0 and _plain_numbers(_pos, close):
		_pos = close + 1
		return
	_arguments_after_paren(id, [Tok.NUMBER])


func _plain_numbers(from: int, to: int) -> bool:
	return _not_numeric.search(_bytes.slice(from, to).get_string_from_ascii()) == null


## `Name(` arguments of the kinds in `allowed`, separated by commas `)`.
func _arguments(id: String, allowed: Array) -> void:
	_judged_arguments(id, "its arguments", _of_kinds(allowed))


func _arguments_after_paren(id: String, allowed: Array) -> void:
	_argument_list(id, "its arguments", _of_kinds(allowed))


## Whether the current token is an argument of the kinds in `allowed` (a NUMBER may be inf or nan).
func _of_kinds(allowed: Array) -> Callable:
	return func() -> bool:
		return _tok in allowed or (Tok.NUMBER in allowed and _tok == Tok.IDENTIFIER and _text in _STOR_FIX)


## `Name(` arguments, each judged by `take` (called with the argument as the current token; false
## for one the engine does not take), separated by commas `)`; `what` names them in the error.
func _judged_arguments(id: String, what: String, take: Callable) -> void:
	_next()
	if _tok != Tok.PAREN_OPEN:
		_corrupt("line %d: %s has no (" % [_line(), id])
		return
	_argument_list(id, what, take)


func _argument_list(id: String, what: String, take: Callable) -> void:
	var need_comma: bool = false
	while true:
		_next()
		if _tok == Tok.PAREN_CLOSE:
			return
		if need_comma:
			if _tok != Tok.COMMA:
				_corrupt("line %d: %s(...) is missing a comma" % [_line(), id])
				return
			need_comma = false
			continue
		if not take.call():
			_corrupt("line %d: %s(...) holds something other than %s" % [_line(), id, what])
			return
		need_comma = true


## `Object(Class, "property": value, ...)`: the engine instantiates Class and sets each property,
## `script` included, so the class counts as instantiated and a script set here as set.
func _inline_object() -> void:
	var line: int = _line()
	_next()
	if _tok != Tok.PAREN_OPEN:
		_corrupt("line %d: Object has no (" % line)
		return
	_next()
	if _tok != Tok.IDENTIFIER:
		_corrupt("line %d: Object(...) names no class" % line)
		return
	var type: String = _text
	var where: String = "an inline Object(%s, ...) on line %d" % [type, line]
	_scan.lined += 1
	_scan.add_class(type, where)
	_next()
	if _tok != Tok.COMMA:
		_corrupt("line %d: Object(...) has no comma after its class" % line)
		return
	_object_properties(type, where)


## An inline Object's `"name": value` pairs, up to its `)`; `where` describes the object.
func _object_properties(type: String, where: String) -> void:
	var need_comma: bool = false
	while not _failed():
		_next()
		if _tok == Tok.PAREN_CLOSE:
			return
		if need_comma:
			if _tok != Tok.COMMA:
				_corrupt("line %d: Object(...) is missing a comma" % _line())
				return
			need_comma = false
			continue
		if _tok != Tok.STRING:
			_corrupt("line %d: Object(...) has a property name that is not a string" % _line())
			return
		var property: String = _text
		_next()
		if _tok != Tok.COLON:
			_corrupt("line %d: Object(...) has a property without a colon" % _line())
			return
		_next()
		var value: Variant = _value()
		if property == "script" and value != null:
			_scan.mark_script(where)
		else:
			_scan.add_value(type, property, value, where)
		need_comma = true


## Resource / ExtResource / SubResource: each string argument is a path (or uid) that the engine
## loads where it has no handler for the reference (always for Resource).
func _reference(id: String) -> void:
	var loads: bool = id == "Resource" or _generic_refs
	_judged_arguments(
		id,
		"an id or a path",
		func() -> bool:
			if _tok == Tok.STRING and loads:
				var where: String = "%s(%s) on line %d" % [id, JSON.stringify(_text.left(200)), _line()]
				_scan.lined += 1
				if id == "Resource" and _scan.inline_load.is_empty():
					_scan.inline_load = where
				if _text.begins_with("uid://"):
					_scan.add_load("", _text, where, "both")
				else:
					_scan.add_load(_text, "", where, "both")
			return _tok == Tok.STRING or _tok == Tok.NUMBER
	)


## Array[Type]([...]) and Dictionary[Key, Value]({...}). A type is a built-in type name, a class
## name, or a reference to a script (ExtResource/SubResource/Resource(...)).
func _typed_container(id: String, types: int) -> void:
	_next()
	if _tok != Tok.BRACKET_OPEN:
		_corrupt("line %d: %s has no [" % [_line(), id])
		return
	_element_types(id, types)
	if _failed():
		return
	_next()
	if _tok != Tok.BRACKET_CLOSE:
		_corrupt("line %d: %s[...] is not closed" % [_line(), id])
		return
	_next()
	if _tok != Tok.PAREN_OPEN:
		_corrupt("line %d: %s[...] has no (" % [_line(), id])
		return
	_next()
	if id == "Array" and _tok == Tok.BRACKET_OPEN:
		_array()
	elif id == "Dictionary" and _tok == Tok.CURLY_OPEN:
		_dictionary()
	else:
		_corrupt("line %d: %s[...](...) holds no %s" % [_line(), id, "array" if id == "Array" else "dictionary"])
	if _failed():
		return
	_next()
	if _tok != Tok.PAREN_CLOSE:
		_corrupt("line %d: %s[...](...) is not closed" % [_line(), id])


## The element types of `Array[` or `Dictionary[`, after the `[`: `types` names, comma-separated;
## a reference type is read in full.
func _element_types(id: String, types: int) -> void:
	for i: int in types:
		if i > 0:
			_next()
			if _tok != Tok.COMMA:
				_corrupt("line %d: %s[...] is missing a comma" % [_line(), id])
				return
		_next()
		if _tok != Tok.IDENTIFIER:
			_corrupt("line %d: %s[...] has no element type" % [_line(), id])
			return
		if _text in _REFERENCES and _peek_byte() == 40:  # (
			_reference(_text)
			if _failed():
				return


## The next byte that is not whitespace or a comment, without consuming anything; -1 at the end.
func _peek_byte() -> int:
	var at: int = _pos
	while at < _size:
		var c: int = _bytes[at]
		if c == 59:
			var end: int = _bytes.find(10, at)
			if end < 0:
				return -1
			at = end + 1
		elif c <= 32:
			at += 1
		else:
			return c
	return -1
