extends SceneTree
## What ClassDB says of each class named on the command line, as one JSON line, for
## tests/engine/test_class_info.py to hold class_info's replies against: the ancestry, every inheritor,
## and each stored property ClassDB lists (type name, default, enum constants, range).
## Run: godot --headless -s tests/gdscript/class_db_dump.gd -- Class...


func _initialize() -> void:
	var out: Dictionary = {}
	for name: String in OS.get_cmdline_user_args():
		var inherits: Array = []
		var parent: String = ClassDB.get_parent_class(name)
		while parent != "":
			inherits.append(parent)
			parent = ClassDB.get_parent_class(parent)
		var properties: Array = []
		for info: Dictionary in ClassDB.class_get_property_list(name):
			if info["usage"] & PROPERTY_USAGE_STORAGE == 0:
				continue
			properties.append(_property(name, info))
		out[name] = {
			"inherits": inherits,
			"inheritors": Array(ClassDB.get_inheriters_from_class(name)),
			"properties": properties,
		}
	print(JSON.stringify(out))
	quit()


func _property(cls: String, info: Dictionary) -> Dictionary:
	# A property of no fixed type (TYPE_NIL) takes any Variant.
	var type: String = type_string(info["type"]) if info["type"] != TYPE_NIL else "Variant"
	if info["type"] == TYPE_OBJECT:
		type = info["hint_string"] if info["hint"] == PROPERTY_HINT_RESOURCE_TYPE else str(info["class_name"])
	var default: Variant = ClassDB.class_get_property_default_value(cls, info["name"])
	var entry: Dictionary = {
		"name": info["name"], "type": type, "has_default": _plain(default) != null, "default": _plain(default)
	}
	var named: Dictionary = {}
	var setter: String = ClassDB.class_get_property_setter(cls, info["name"])
	for method: Dictionary in ClassDB.class_get_method_list(cls):
		if method["name"] == setter and not method["args"].is_empty():
			var qualified: String = method["args"][-1]["class_name"]
			if qualified.contains("."):
				var owner: String = qualified.get_slice(".", 0)
				for constant: String in ClassDB.class_get_enum_constants(owner, qualified.get_slice(".", 1)):
					if not constant.ends_with("_MAX"):
						named[constant] = ClassDB.class_get_integer_constant(owner, constant)
	if named.is_empty() and info["hint"] in [PROPERTY_HINT_ENUM, PROPERTY_HINT_FLAGS]:
		# Constants named by the hint only ("Read,Write,Write Depth Fail", "Low:1,High:4").
		var flags: bool = info["hint"] == PROPERTY_HINT_FLAGS
		var next: int = 0
		var entries: PackedStringArray = info["hint_string"].split(",", false)
		for i: int in entries.size():
			var label: String = entries[i].strip_edges()
			var number: int = label.get_slice(":", 1).to_int() if label.contains(":") else (1 << i if flags else next)
			named[label.get_slice(":", 0)] = number
			next = number + 1
	entry["enum"] = named
	if info["hint"] == PROPERTY_HINT_RANGE:
		var parts: PackedStringArray = info["hint_string"].split(",")
		entry["range"] = [parts[0].to_float(), parts[1].to_float()]
	return entry


## A default as JSON numbers: a colour or vector as its components, other plain values as they
## are, anything else (a resource, a packed array) as null.
func _plain(value: Variant) -> Variant:
	match typeof(value):
		TYPE_BOOL, TYPE_INT, TYPE_FLOAT, TYPE_STRING:
			return value
		TYPE_COLOR:
			return [value.r, value.g, value.b, value.a]
		TYPE_VECTOR2, TYPE_VECTOR2I:
			return [value.x, value.y]
		TYPE_VECTOR3, TYPE_VECTOR3I:
			return [value.x, value.y, value.z]
	return null
