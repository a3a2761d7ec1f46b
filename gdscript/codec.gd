extends RefCounted
## JSON <-> engine values, driven by the type the engine reports for a property.
##
## decode() turns a JSON value into the Variant a property of the given type takes, or fails the
## job with invalid_value; encode() turns a Variant into JSON that decode() accepts back unchanged.

const Job = preload("job.gd")
const Resources = preload("resources.gd")

static var _enums: Dictionary = {}

const _VECTOR_KEYS: Array[String] = ["x", "y", "z", "w"]
const _WIDTHS: Dictionary = {
	TYPE_VECTOR2: 2, TYPE_VECTOR2I: 2, TYPE_VECTOR3: 3, TYPE_VECTOR3I: 3,
	TYPE_VECTOR4: 4, TYPE_VECTOR4I: 4, TYPE_RECT2: 4, TYPE_RECT2I: 4,
	TYPE_QUATERNION: 4, TYPE_PLANE: 4, TYPE_AABB: 6,
}
const _PACKED_ELEMENT: Dictionary = {
	TYPE_PACKED_BYTE_ARRAY: TYPE_INT, TYPE_PACKED_INT32_ARRAY: TYPE_INT,
	TYPE_PACKED_INT64_ARRAY: TYPE_INT, TYPE_PACKED_FLOAT32_ARRAY: TYPE_FLOAT,
	TYPE_PACKED_FLOAT64_ARRAY: TYPE_FLOAT, TYPE_PACKED_STRING_ARRAY: TYPE_STRING,
	TYPE_PACKED_VECTOR2_ARRAY: TYPE_VECTOR2, TYPE_PACKED_VECTOR3_ARRAY: TYPE_VECTOR3,
	TYPE_PACKED_COLOR_ARRAY: TYPE_COLOR, TYPE_PACKED_VECTOR4_ARRAY: TYPE_VECTOR4,
}


# ----- JSON -> Variant -------------------------------------------------------------------------

## Convert `value` for a property described by `info` (an entry of get_property_list()).
## `owner` is the class that has the property; it names the enum of an integer property.
static func decode(value: Variant, info: Dictionary, owner: String, job: Job, where: String) -> Variant:
	var type: int = info.get("type", TYPE_NIL)
	if type == TYPE_OBJECT:
		return Resources.from_value(value, info.get("hint_string", ""), job, where)
	if type == TYPE_INT and typeof(value) == TYPE_STRING:
		return _constant(value, enum_of(owner, info), job, where)
	return decode_type(value, type, job, where)


static func decode_type(value: Variant, type: int, job: Job, where: String) -> Variant:
	match type:
		TYPE_NIL:
			return value
		TYPE_BOOL:
			if typeof(value) == TYPE_BOOL:
				return value
		TYPE_INT:
			if _is_number(value) and is_finite(value) and float(value) == floorf(value):
				return int(value)
		TYPE_FLOAT:
			return _float(value, job, where)
		TYPE_STRING, TYPE_STRING_NAME, TYPE_NODE_PATH:
			if typeof(value) == TYPE_STRING:
				return type_convert(value, type)
		TYPE_COLOR:
			return _color(value, job, where)
		TYPE_VECTOR2, TYPE_VECTOR2I, TYPE_VECTOR3, TYPE_VECTOR3I, TYPE_VECTOR4, TYPE_VECTOR4I, \
		TYPE_RECT2, TYPE_RECT2I, TYPE_QUATERNION, TYPE_PLANE, TYPE_AABB:
			return _fixed(value, type, job, where)
		TYPE_TRANSFORM2D, TYPE_BASIS, TYPE_TRANSFORM3D, TYPE_PROJECTION:
			return _matrix(value, type, job, where)
		TYPE_ARRAY:
			if typeof(value) == TYPE_ARRAY:
				return value
		TYPE_DICTIONARY:
			if typeof(value) == TYPE_DICTIONARY:
				return value
		_:
			if _PACKED_ELEMENT.has(type):
				return _packed(value, type, job, where)
	job.fail(Job.INVALID_VALUE, "%s: %s is not a valid %s" % [where, _shown(value), type_string(type)], where)
	return null


## The "Class.Enum" of an integer property, or "". Property info leaves it out, but the
## setter's value argument carries it.
static func enum_of(owner: String, info: Dictionary) -> String:
	var qualified: String = str(info.get("class_name", ""))
	var key: String = owner + "." + str(info["name"])
	if qualified.contains(".") or owner.is_empty():
		return qualified
	if not _enums.has(key):
		var setter: StringName = ClassDB.class_get_property_setter(owner, info["name"])
		_enums[key] = ""
		for method: Dictionary in ClassDB.class_get_method_list(owner):
			if method["name"] == setter and not method["args"].is_empty():
				_enums[key] = str(method["args"][-1]["class_name"])
				break
	return _enums[key]


## An enum constant by name ("TRANSPARENCY_ALPHA"), or flags joined by "|".
static func _constant(name: String, qualified: String, job: Job, where: String) -> Variant:
	var owner: String = qualified.get_slice(".", 0)
	var total: int = 0
	for part: String in name.split("|"):
		var constant: String = part.strip_edges()
		if owner.is_empty() or not ClassDB.class_has_integer_constant(owner, constant):
			var known: PackedStringArray = PackedStringArray()
			if qualified.contains("."):
				known = ClassDB.class_get_enum_constants(owner, qualified.get_slice(".", 1))
			var hint: String = (" (one of %s)" % ", ".join(known)) if not known.is_empty() else ""
			job.fail(Job.INVALID_VALUE, "%s: %s is not a constant of this property%s" % [where, JSON.stringify(constant), hint], where)
			return null
		total |= ClassDB.class_get_integer_constant(owner, constant)
	return total


static func _float(value: Variant, job: Job, where: String) -> Variant:
	if _is_number(value):
		return float(value)
	match value:
		"inf":
			return INF
		"-inf":
			return -INF
		"nan":
			return NAN
	job.fail(Job.INVALID_VALUE, "%s: %s is not a number" % [where, _shown(value)], where)
	return null


static func _color(value: Variant, job: Job, where: String) -> Variant:
	var parts: Array = []
	if typeof(value) == TYPE_STRING:
		var text: String = value
		var digits: String = text.substr(1)
		if text.begins_with("#") and (digits.length() == 6 or digits.length() == 8) and digits.is_valid_hex_number():
			return Color.html(text)
	elif typeof(value) == TYPE_DICTIONARY and _has_only(value, ["r", "g", "b"], ["a"]):
		parts = [value["r"], value["g"], value["b"], value.get("a", 1.0)]
	elif typeof(value) == TYPE_ARRAY and (value.size() == 3 or value.size() == 4):
		parts = value.duplicate()
		if parts.size() == 3:
			parts.append(1.0)
	if parts.size() == 4 and parts.all(_is_number):
		return Color(parts[0], parts[1], parts[2], parts[3])
	job.fail(Job.INVALID_VALUE, "%s: %s is not a color; give \"#rrggbb\", \"#rrggbbaa\", {\"r\", \"g\", \"b\"[, \"a\"]} or [r, g, b[, a]]" % [where, _shown(value)], where)
	return null


static func _fixed(value: Variant, type: int, job: Job, where: String) -> Variant:
	var width: int = _WIDTHS[type]
	var numbers: Array = []
	if typeof(value) == TYPE_ARRAY:
		numbers = value
	elif typeof(value) == TYPE_DICTIONARY and width <= 4 and type not in [TYPE_RECT2, TYPE_RECT2I, TYPE_PLANE]:
		var keys: Array[String] = _VECTOR_KEYS.slice(0, width)
		if _has_only(value, keys, []):
			for key: String in keys:
				numbers.append(value[key])
	var integral: bool = type in [TYPE_VECTOR2I, TYPE_VECTOR3I, TYPE_VECTOR4I, TYPE_RECT2I]
	if numbers.size() != width or not numbers.all(_is_number) or (integral and not numbers.all(_is_integral)):
		job.fail(Job.INVALID_VALUE, "%s: %s is not a %s; give an array of %d %s" % [where, _shown(value), type_string(type), width, "integers" if integral else "numbers"], where)
		return null
	var n: Array = numbers
	match type:
		TYPE_VECTOR2:
			return Vector2(n[0], n[1])
		TYPE_VECTOR2I:
			return Vector2i(n[0], n[1])
		TYPE_VECTOR3:
			return Vector3(n[0], n[1], n[2])
		TYPE_VECTOR3I:
			return Vector3i(n[0], n[1], n[2])
		TYPE_VECTOR4:
			return Vector4(n[0], n[1], n[2], n[3])
		TYPE_VECTOR4I:
			return Vector4i(n[0], n[1], n[2], n[3])
		TYPE_RECT2:
			return Rect2(n[0], n[1], n[2], n[3])
		TYPE_RECT2I:
			return Rect2i(n[0], n[1], n[2], n[3])
		TYPE_QUATERNION:
			return Quaternion(n[0], n[1], n[2], n[3])
		TYPE_PLANE:
			return Plane(n[0], n[1], n[2], n[3])
	return AABB(Vector3(n[0], n[1], n[2]), Vector3(n[3], n[4], n[5]))


static func _matrix(value: Variant, type: int, job: Job, where: String) -> Variant:
	var shapes: Dictionary = {
		TYPE_TRANSFORM2D: [3, 2], TYPE_BASIS: [3, 3], TYPE_TRANSFORM3D: [4, 3], TYPE_PROJECTION: [4, 4],
	}
	var columns: int = shapes[type][0]
	var rows: int = shapes[type][1]
	var ok: bool = typeof(value) == TYPE_ARRAY and value.size() == columns
	if ok:
		for column: Variant in value:
			ok = ok and typeof(column) == TYPE_ARRAY and column.size() == rows and column.all(_is_number)
	if not ok:
		job.fail(Job.INVALID_VALUE, "%s: %s is not a %s; give %d column arrays of %d numbers" % [where, _shown(value), type_string(type), columns, rows], where)
		return null
	var c: Array = value
	match type:
		TYPE_TRANSFORM2D:
			return Transform2D(Vector2(c[0][0], c[0][1]), Vector2(c[1][0], c[1][1]), Vector2(c[2][0], c[2][1]))
		TYPE_BASIS:
			return Basis(_v3(c[0]), _v3(c[1]), _v3(c[2]))
		TYPE_TRANSFORM3D:
			return Transform3D(Basis(_v3(c[0]), _v3(c[1]), _v3(c[2])), _v3(c[3]))
	return Projection(_v4(c[0]), _v4(c[1]), _v4(c[2]), _v4(c[3]))


static func _packed(value: Variant, type: int, job: Job, where: String) -> Variant:
	if typeof(value) != TYPE_ARRAY:
		job.fail(Job.INVALID_VALUE, "%s: %s is not an array for a %s" % [where, _shown(value), type_string(type)], where)
		return null
	var element: int = _PACKED_ELEMENT[type]
	var items: Array = []
	for i: int in value.size():
		items.append(decode_type(value[i], element, job, "%s[%d]" % [where, i]))
		if job.failed():
			return null
	return type_convert(items, type)


# ----- Variant -> JSON -------------------------------------------------------------------------

## Convert `value` to JSON. Resources are expanded `depth` levels deep, then given as paths.
static func encode(value: Variant, depth: int, stack: Array = []) -> Variant:
	match typeof(value):
		TYPE_NIL, TYPE_BOOL, TYPE_INT, TYPE_STRING:
			return value
		TYPE_FLOAT:
			return _finite(value)
		TYPE_STRING_NAME, TYPE_NODE_PATH:
			return str(value)
		TYPE_COLOR:
			return _numbers([value.r, value.g, value.b, value.a])
		TYPE_VECTOR2, TYPE_VECTOR2I:
			return _numbers([value.x, value.y])
		TYPE_VECTOR3, TYPE_VECTOR3I:
			return _numbers([value.x, value.y, value.z])
		TYPE_VECTOR4, TYPE_VECTOR4I, TYPE_QUATERNION:
			return _numbers([value.x, value.y, value.z, value.w])
		TYPE_RECT2, TYPE_RECT2I:
			return _numbers([value.position.x, value.position.y, value.size.x, value.size.y])
		TYPE_PLANE:
			return _numbers([value.normal.x, value.normal.y, value.normal.z, value.d])
		TYPE_AABB:
			return _numbers([value.position.x, value.position.y, value.position.z, value.size.x, value.size.y, value.size.z])
		TYPE_TRANSFORM2D:
			return [encode(value.x, 0), encode(value.y, 0), encode(value.origin, 0)]
		TYPE_BASIS:
			return [encode(value.x, 0), encode(value.y, 0), encode(value.z, 0)]
		TYPE_TRANSFORM3D:
			return [encode(value.basis.x, 0), encode(value.basis.y, 0), encode(value.basis.z, 0), encode(value.origin, 0)]
		TYPE_PROJECTION:
			return [encode(value.x, 0), encode(value.y, 0), encode(value.z, 0), encode(value.w, 0)]
		TYPE_DICTIONARY:
			var out: Dictionary = {}
			for key: Variant in value:
				out[str(key)] = encode(value[key], depth, stack)
			return out
		TYPE_OBJECT:
			return Resources.to_value(value, depth, stack)
	if typeof(value) == TYPE_ARRAY or _PACKED_ELEMENT.has(typeof(value)):
		var items: Array = []
		for item: Variant in value:
			items.append(encode(item, depth, stack))
		return items
	return null


static func _finite(number: float) -> Variant:
	if is_nan(number):
		return "nan"
	if is_inf(number):
		return "inf" if number > 0 else "-inf"
	return number


static func _numbers(values: Array) -> Array:
	return values.map(func(v: Variant) -> Variant: return _finite(v) if typeof(v) == TYPE_FLOAT else v)


# ----- helpers ---------------------------------------------------------------------------------

static func _is_number(value: Variant) -> bool:
	return typeof(value) == TYPE_FLOAT or typeof(value) == TYPE_INT


static func _is_integral(value: Variant) -> bool:
	return _is_number(value) and is_finite(value) and float(value) == floorf(value)


static func _has_only(value: Dictionary, required: Array, optional: Array) -> bool:
	for key: Variant in required:
		if not value.has(key):
			return false
	for key: Variant in value:
		if key not in required and key not in optional:
			return false
	return true


static func _v3(c: Array) -> Vector3:
	return Vector3(c[0], c[1], c[2])


static func _v4(c: Array) -> Vector4:
	return Vector4(c[0], c[1], c[2], c[3])


static func _shown(value: Variant) -> String:
	var text: String = JSON.stringify(value)
	return text if text.length() <= 80 else text.substr(0, 77) + "..."
