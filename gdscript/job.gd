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

var code: String = ""
var message: String = ""
var field: String = ""
## Whether resources that carry scripts may be loaded (the request's allow_scripts).
var allow_scripts: bool = false


func _init(request: Dictionary = {}) -> void:
	allow_scripts = request.get("allow_scripts", false) == true


func fail(p_code: String, p_message: String, p_field: String = "") -> void:
	if code.is_empty():
		code = p_code
		message = p_message
		# The field is the request member at fault: "properties", not "properties.size[2]".
		field = p_field.get_slice(".", 0).get_slice("[", 0)


func failed() -> bool:
	return not code.is_empty()


func to_wire() -> Dictionary:
	var wire: Dictionary = {"code": code, "message": message}
	if not field.is_empty():
		wire["field"] = field
	return wire
