extends RefCounted
## The state of one request: the first failure wins, and every step checks `failed()` before going on.

const INVALID_JSON: String = "invalid_json"
const INVALID_REQUEST: String = "invalid_request"
const INVALID_PATH: String = "invalid_path"
const PATH_OUTSIDE_PROJECT: String = "path_outside_project"
const NOT_FOUND: String = "not_found"
const NOT_IMPORTED: String = "not_imported"
const INVALID_TYPE: String = "invalid_type"
const UNKNOWN_PROPERTY: String = "unknown_property"
const FORBIDDEN_PROPERTY: String = "forbidden_property"
const INVALID_VALUE: String = "invalid_value"
const NODE_NOT_FOUND: String = "node_not_found"
const INCOMPATIBLE_NODE: String = "incompatible_node"
const UNSAFE_RESOURCE: String = "unsafe_resource"
const LOAD_FAILED: String = "load_failed"
const SAVE_FAILED: String = "save_failed"
const CONFLICT: String = "conflict"

const _ERROR_NAMES: Dictionary = {
	FAILED: "FAILED",
	ERR_UNAVAILABLE: "ERR_UNAVAILABLE",
	ERR_UNAUTHORIZED: "ERR_UNAUTHORIZED",
	ERR_OUT_OF_MEMORY: "ERR_OUT_OF_MEMORY",
	ERR_FILE_NOT_FOUND: "ERR_FILE_NOT_FOUND",
	ERR_FILE_BAD_DRIVE: "ERR_FILE_BAD_DRIVE",
	ERR_FILE_BAD_PATH: "ERR_FILE_BAD_PATH",
	ERR_FILE_NO_PERMISSION: "ERR_FILE_NO_PERMISSION",
	ERR_FILE_ALREADY_IN_USE: "ERR_FILE_ALREADY_IN_USE",
	ERR_FILE_CANT_OPEN: "ERR_FILE_CANT_OPEN",
	ERR_FILE_CANT_WRITE: "ERR_FILE_CANT_WRITE",
	ERR_FILE_CANT_READ: "ERR_FILE_CANT_READ",
	ERR_FILE_UNRECOGNIZED: "ERR_FILE_UNRECOGNIZED",
	ERR_FILE_CORRUPT: "ERR_FILE_CORRUPT",
	ERR_FILE_MISSING_DEPENDENCIES: "ERR_FILE_MISSING_DEPENDENCIES",
	ERR_FILE_EOF: "ERR_FILE_EOF",
	ERR_CANT_OPEN: "ERR_CANT_OPEN",
	ERR_CANT_CREATE: "ERR_CANT_CREATE",
	ERR_ALREADY_IN_USE: "ERR_ALREADY_IN_USE",
	ERR_LOCKED: "ERR_LOCKED",
	ERR_BUSY: "ERR_BUSY",
	ERR_INVALID_DATA: "ERR_INVALID_DATA",
	ERR_INVALID_PARAMETER: "ERR_INVALID_PARAMETER",
	ERR_ALREADY_EXISTS: "ERR_ALREADY_EXISTS",
	ERR_DOES_NOT_EXIST: "ERR_DOES_NOT_EXIST",
	ERR_PARSE_ERROR: "ERR_PARSE_ERROR",
	ERR_CANT_RESOLVE: "ERR_CANT_RESOLVE",
	ERR_BUG: "ERR_BUG",
}

## GDScript runtime errors the engine has reported so far (safety/script_errors.gd counts them).
static var script_errors: int = 0

var code: String = ""
var message: String = ""
var field: String = ""
## Whether resources that carry scripts may be loaded (the request's allow_scripts).
var allow_scripts: bool = false
## Whether a script the request's loads name comes as a stand-in (a plain Resource that names it)
## instead of failing the request: set by the scene operations (never by a request) while they load
## a scene to read its nodes. A PackedScene's loader only stores a node's script; the script would
## run only once the scene is instantiated, which the bridge never does (safety/gate.gd).
var script_stand_ins: bool = false
## Whether the request is a dry run: its writes are staged and proven, then described in
## `changes` (Saving.commit) instead of made.
var dry_run: bool = false
## A dry run's writes: {path (project-relative), action ("create" | "modify"), before (the old text, or
## null), after}, or for a binary file {path, action, binary: true}. The bridge makes the diffs.
var changes: Array[Dictionary] = []
## The atomic batch's journal (an absolute path), where every change to the project is noted
## before it is made (Saving); "" outside an atomic batch. Set by the bridge, never by a request.
var journal: String = ""
## The imported assets the request met that are not imported (res:// paths, in the order met): the
## bridge imports these, and only these, before it serves the request again
## (gdres/serving/imports.py). The load goes on past each (the gate hands the engine a
## placeholder), so one reply names every asset the request's files need.
var unimported: PackedStringArray = []
## What a request that wrote before it met an asset to import carries to its next pass, served
## once the asset is imported (the bridge sends it back as the message's "carried").
var carried: Dictionary = {}
## The etag (sha256 of its bytes, hex) each file the request is about must still have when it is written
## ({res:// path: etag}, from the request's if_match); one that has changed is a conflict (Saving).
var if_match: Dictionary = {}
## The etag of each file the request read (taken before it was loaded: a change meanwhile makes a later
## if_match fail, never pass) or wrote (of the bytes written), by res:// path: the bridge gives the
## reply the one of the file the request is about.
var etags: Dictionary = {}
## The request's own names for members it gave under another spelling (the bridge sends them:
## {"resource_path": "path"}), so that errors speak the request's language.
var _names: Dictionary = {}
var _script_errors_before: int = script_errors


func _init(request: Dictionary = {}) -> void:
	allow_scripts = request.get("allow_scripts", false) == true
	dry_run = request.get("dry_run", false) == true
	journal = str(request.get("journal", ""))
	var guards: Variant = request.get("if_match", {})
	if typeof(guards) == TYPE_DICTIONARY:
		if_match = guards
	var names: Variant = request.get("names", {})
	if typeof(names) == TYPE_DICTIONARY:
		_names = names


## The name the request gave `member` under: the member's own, unless it used another spelling.
func named(member: String) -> String:
	return _names.get(member, member)


func fail(p_code: String, p_message: String, p_field: String = "") -> void:
	if code.is_empty():
		code = p_code
		message = p_message
		# The field is the request member at fault: "properties", not "properties.size[2]".
		field = p_field.get_slice(".", 0).get_slice("[", 0)


func failed() -> bool:
	return not code.is_empty()


## Whether a GDScript runtime error was reported since this request began. Such an error ends the
## function it happens in with its type's default and lets the caller go on (see Gate.MAY), so what
## the request did is not known to be what it meant. Always false on Godot 4.4, which has no Logger.
func hit_script_error() -> bool:
	return script_errors != _script_errors_before


func to_wire() -> Dictionary:
	var wire: Dictionary = {"code": code, "message": message}
	if not field.is_empty():
		wire["field"] = field
	if code == NOT_IMPORTED and not unimported.is_empty():
		wire["assets"] = unimported
		if not carried.is_empty():
			wire["carried"] = carried
	return wire


## The engine's name of an error ("ERR_FILE_CANT_OPEN"), as error messages carry it.
static func error_name(err: Error) -> String:
	return _ERROR_NAMES.get(err, "error %d" % err)
