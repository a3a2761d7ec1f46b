extends RefCounted
## What loading one resource file would make the engine do, found without loading it: the classes
## it would instantiate, the files it would load, and whether it sets a `script` anywhere.
## text_format.gd and binary_format.gd fill one in; gate.gd judges it.

## The property hints under which the engine treats a String as a file or folder path. 44 is
## PROPERTY_HINT_FILE_PATH (Godot 4.4 on), by number so that the script compiles on older engines.
const PATH_HINTS: Array[int] = [
	PROPERTY_HINT_FILE,
	PROPERTY_HINT_DIR,
	PROPERTY_HINT_GLOBAL_FILE,
	PROPERTY_HINT_GLOBAL_DIR,
	PROPERTY_HINT_SAVE_FILE,
	PROPERTY_HINT_GLOBAL_SAVE_FILE,
	44,
]

## The most entries an array of properties may be given (Curve.point_count, Gradient's): far above
## what a resource holds, far below what holds an engine for minutes. props.gd holds requests to it.
const MAX_COUNT: int = 100000
## What the text reader gives for a value that is neither a string, a number nor null (text_format.gd).
const OTHER: String = "\u0001(a composite value)"
const _PATH: String = "path"
const _COUNT: String = "count"
const _CODE: String = "code"
## The classes whose property holds shader source, which the engine preprocesses when it is set (its
## `#include`s loaded then, each with its `.remap` read first): class -> that property.
const _SHADER_SOURCES: Dictionary = {
	"Shader": "code", "ShaderInclude": "code", "VisualShaderNodeExpression": "expression"
}

## Class -> {name of each of its path and count properties: _PATH or _COUNT}, filled as classes are met.
static var _special_properties: Dictionary = {}

## Why the file cannot be vouched for although the engine might load it: a layout or construct the
## reader does not understand ("" when it was understood).
var unreadable: String = ""
## Why the file is broken: the engine's own loader would refuse it too ("" when it is not).
var corrupt: String = ""
## Classes the engine would instantiate: [{"type": String, "where": String}].
var classes: Array[Dictionary] = []
## Files the engine would load: [{"path": String, "uid": String, "where": String, "base": String}].
## `path` as the file writes it ("" when only a uid names the file); `base` is "file" when a
## relative path is relative to this file's folder (ext_resource), "root" when it is relative to
## the project (an inline Resource("...")), "both" when either may apply.
var loads: Array[Dictionary] = []
## Where the first file named inline is (a text file's Resource("..."), a binary file's old inline
## reference; "" if none): the engine loads those with its cache reused, which a scene read with
## script stand-ins (safety/gate.gd) may not take.
var inline_load: String = ""
## Where a `script` property is set to something other than null ("" if nowhere), and how often.
var script_set: String = ""
var scripts: int = 0
## Values of properties the engine treats as file or folder paths, which it opens itself, not through
## ResourceLoader (CompressedTexture2D.load_path): [{"path": String, "where": String}].
var file_values: Array[Dictionary] = []
## Shader source the file sets, which the engine preprocesses as it loads: [{"code": String, "where": String}].
var shader_code: Array[Dictionary] = []
## How many findings name a line of the file in their `where` (a script set on a line, an inline
## Object or Resource(...)): findings that hold no line stay true wherever the text they were read
## from moves (scene_text.gd takes those of a scene's unedited end from its last read).
var lined: int = 0
## Whether the reader got to the end of the file. A GDScript runtime error aborts the function it
## happens in and lets the caller go on, so a scan that neither finished nor stopped with a reason
## proves nothing, and gate.gd refuses it.
var finished: bool = false


## Give up on a file the reader does not understand: the first reason wins.
func fail(reason: String) -> void:
	if unreadable.is_empty() and corrupt.is_empty():
		unreadable = reason


## Give up on a broken file: the first reason wins.
func fail_corrupt(reason: String) -> void:
	if unreadable.is_empty() and corrupt.is_empty():
		corrupt = reason


## How much was found so far: [classes, loads, file values, scripts, lined findings, 1 once a file
## was named inline] (text_format.gd notes it where each section starts).
func progress() -> PackedInt64Array:
	return PackedInt64Array(
		[classes.size(), loads.size(), file_values.size(), scripts, lined, int(not inline_load.is_empty())]
	)


## Whether reading stopped (either way).
func stopped() -> bool:
	return not unreadable.is_empty() or not corrupt.is_empty()


func add_class(type: String, where: String) -> void:
	classes.append({"type": type, "where": where})


func add_load(path: String, uid: String, where: String, base: String = "file") -> void:
	loads.append({"path": path, "uid": uid, "where": where, "base": base})


func mark_script(where: String) -> void:
	scripts += 1
	if script_set.is_empty():
		script_set = where


## Note the value of property `name` of class `type`: a path the engine opens (ClassDB hints it as a
## file or a folder) is kept for gate.gd to confine when it is a plain string and refused otherwise
## (OTHER, a StringName); a count of entries (an array count in ClassDB, Curve.point_count) beyond
## MAX_COUNT is refused: the engine would allocate that many before anything else.
func add_value(type: String, name: String, value: Variant, where: String) -> void:
	var kind: String = property_kind(type, name)
	if kind == _COUNT and typeof(value) == TYPE_INT and (value < 0 or value > MAX_COUNT):
		fail(
			"%s sets %s to %d entries, more than the bridge lets the engine make (%d)" % [where, name, value, MAX_COUNT]
		)
	if kind not in [_PATH, _CODE] or value == null:
		return
	if typeof(value) != TYPE_STRING or value == OTHER:
		fail(
			(
				"%s sets %s, a %s, to a value that is not a plain string"
				% [where, name, "file path" if kind == _PATH else "shader's source"]
			)
		)
	elif kind == _CODE:
		shader_code.append({"code": value, "where": "%s, %s" % [where, name]})
	else:
		file_values.append({"path": value, "where": "%s, %s" % [where, name]})


## Whether property `name` of class `type` holds shader source (which the engine preprocesses when set).
static func is_shader_source(type: String, name: String) -> bool:
	return property_kind(type, name) == _CODE


## Whether property `name` of class `type` is a path the engine opens (ClassDB hints it so) or shader
## source the engine preprocesses: a value read for add_value().
static func is_read_property(type: String, name: String) -> bool:
	return property_kind(type, name) in [_PATH, _CODE]


## "path" for a property of `type` that ClassDB hints as a file or folder, "count" for an array's
## count of entries, "code" for shader source, "" for any other (found from ClassDB once per class).
static func property_kind(type: String, name: String) -> String:
	if not _special_properties.has(type):
		var kinds: Dictionary = {}
		if ClassDB.class_exists(type):
			for info: Dictionary in ClassDB.class_get_property_list(type):
				if info["type"] == TYPE_STRING and info["hint"] in PATH_HINTS:
					kinds[info["name"]] = _PATH
				elif info["type"] == TYPE_INT and info["usage"] & PROPERTY_USAGE_ARRAY:
					kinds[info["name"]] = _COUNT
			for source: String in _SHADER_SOURCES:
				if ClassDB.is_parent_class(type, source):
					kinds[_SHADER_SOURCES[source]] = _CODE
		_special_properties[type] = kinds
	return _special_properties[type].get(name, "")


## Record that the file was read to its end (only then is an empty scan a clean one).
func finish() -> void:
	finished = not stopped()
