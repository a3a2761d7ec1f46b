extends RefCounted
## JSON <-> engine values, driven by the type the engine reports for a property.
##
## decode() turns a JSON value into the Variant a property of the given type takes, or fails the
## job with invalid_value; encode() turns a Variant into JSON that decode() accepts back unchanged.
## A value may be a resource, whose properties are values in turn: apply() sets them on an object
## (checked by props.gd), stored() reads them back. The recursion lives in this one file, so every
## tie it has is a preload (props.gd and creating.gd know nothing of JSON).

const Job = preload("../job.gd")
const Creating = preload("creating.gd")
const Paths = preload("../safety/paths.gd")
const Props = preload("props.gd")
const Resources = preload("resources.gd")

const _VECTOR_KEYS: Array[String] = ["x", "y", "z", "w"]
const _WIDTHS: Dictionary = {
	TYPE_VECTOR2: 2,
	TYPE_VECTOR2I: 2,
	TYPE_VECTOR3: 3,
	TYPE_VECTOR3I: 3,
	TYPE_VECTOR4: 4,
	TYPE_VECTOR4I: 4,
	TYPE_RECT2: 4,
	TYPE_RECT2I: 4,
	TYPE_QUATERNION: 4,
	TYPE_PLANE: 4,
	TYPE_AABB: 6,
}
const _PACKED_ELEMENT: Dictionary = {
	TYPE_PACKED_BYTE_ARRAY: TYPE_INT,
	TYPE_PACKED_INT32_ARRAY: TYPE_INT,
	TYPE_PACKED_INT64_ARRAY: TYPE_INT,
	TYPE_PACKED_FLOAT32_ARRAY: TYPE_FLOAT,
	TYPE_PACKED_FLOAT64_ARRAY: TYPE_FLOAT,
	TYPE_PACKED_STRING_ARRAY: TYPE_STRING,
	TYPE_PACKED_VECTOR2_ARRAY: TYPE_VECTOR2,
	TYPE_PACKED_VECTOR3_ARRAY: TYPE_VECTOR3,
	TYPE_PACKED_COLOR_ARRAY: TYPE_COLOR,
	TYPE_PACKED_VECTOR4_ARRAY: TYPE_VECTOR4,
}
## A colour whose components are all whole numbers and one at least this large was written in 0-255.
const _BYTE_LIKE: float = 16.0

static var _enums: Dictionary = {}


## Convert `value` for a property described by `info` (an entry of get_property_list()).
## `owner` is the class that has the property; it names the enum of an integer property.
static func decode(value: Variant, info: Dictionary, owner: String, job: Job, where: String) -> Variant:
	var type: int = info.get("type", TYPE_NIL)
	var hint: int = info.get("hint", PROPERTY_HINT_NONE)
	var hint_string: String = info.get("hint_string", "")
	if type == TYPE_OBJECT:
		return from_value(value, hint_string, job, where)
	if type == TYPE_INT:
		return _integer(value, owner, info, job, where)
	var typed: bool = (
		hint in [PROPERTY_HINT_ARRAY_TYPE, PROPERTY_HINT_TYPE_STRING, PROPERTY_HINT_DICTIONARY_TYPE]
		and not hint_string.is_empty()
	)
	if type == TYPE_ARRAY and typed and typeof(value) == TYPE_ARRAY:
		return _typed_array(value, element_info(hint_string), job, where)
	if type == TYPE_ARRAY and not typed:
		type = _packed_setter_type(owner, info["name"], type)
	if type == TYPE_DICTIONARY and typed and hint_string.contains(";") and typeof(value) == TYPE_DICTIONARY:
		return _typed_dictionary(value, hint_string, job, where)
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
		TYPE_TRANSFORM2D, TYPE_BASIS, TYPE_TRANSFORM3D, TYPE_PROJECTION:
			return _matrix(value, type, job, where)
		TYPE_ARRAY:
			if typeof(value) == TYPE_ARRAY:
				return value
		TYPE_DICTIONARY:
			if typeof(value) == TYPE_DICTIONARY:
				return value
		_:
			if _WIDTHS.has(type):  # vectors, rects, quaternions, planes, AABBs
				return _fixed(value, type, job, where)
			if _PACKED_ELEMENT.has(type):
				return _packed(value, type, job, where)
	job.fail(Job.INVALID_VALUE, "%s: %s is not a valid %s" % [where, shown(value), type_string(type)], where)
	return null


## An integer: a number, or a constant's name ("TRANSPARENCY_ALPHA"; flags joined by "|").
## Where the engine names the allowed constants (the property's enum, or its enum/flags hint),
## a number outside them is refused too: the engine would store it and misbehave later.
static func _integer(value: Variant, owner: String, info: Dictionary, job: Job, where: String) -> Variant:
	var named: Dictionary = choices(owner, info)
	var flags: bool = is_flags(owner, info)
	var number: Variant = null
	if typeof(value) == TYPE_STRING:
		number = _by_name(value, named, flags, job, where)
	else:
		number = decode_type(value, TYPE_INT, job, where)
	if job.failed() or named.is_empty() or _allowed(number, named.values(), flags):
		return number
	job.fail(Job.INVALID_VALUE, "%s: %s is not %s" % [where, shown(value), _listed(named, flags)], where)
	return null


## The named constants an integer property takes, name -> value: those of its enum (from the
## setter's argument), else those of its enum/flags hint (how shader uniforms name them).
static func choices(owner: String, info: Dictionary) -> Dictionary:
	var out: Dictionary = {}
	var qualified: String = enum_of(owner, info)
	if qualified.contains("."):
		var cls: String = qualified.get_slice(".", 0)
		for constant: String in ClassDB.class_get_enum_constants(cls, qualified.get_slice(".", 1)):
			if not constant.ends_with("_MAX"):
				out[constant] = ClassDB.class_get_integer_constant(cls, constant)
	var hint: int = info.get("hint", PROPERTY_HINT_NONE)
	if not out.is_empty() or hint != PROPERTY_HINT_ENUM and hint != PROPERTY_HINT_FLAGS:
		return out
	var entries: PackedStringArray = str(info.get("hint_string", "")).split(",", false)
	var next: int = 0
	for i: int in entries.size():
		var entry: String = entries[i].strip_edges()
		var implied: int = (1 << i) if hint == PROPERTY_HINT_FLAGS else next
		var number: int = entry.get_slice(":", 1).to_int() if entry.contains(":") else implied
		next = number + 1
		out[entry.get_slice(":", 0)] = number
	return out


## Whether an integer property holds flags (several constants joined by "|").
static func is_flags(owner: String, info: Dictionary) -> bool:
	if info.get("hint", PROPERTY_HINT_NONE) == PROPERTY_HINT_FLAGS:
		return true
	var qualified: String = enum_of(owner, info)
	return (
		qualified.contains(".")
		and ClassDB.is_class_enum_bitfield(qualified.get_slice(".", 0), qualified.get_slice(".", 1))
	)


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


## Some properties (ConvexPolygonShape3D.points) are listed as untyped Arrays although their
## setter takes a packed array; an Array of JSON arrays would reach it as zero vectors.
static func _packed_setter_type(owner: String, name: String, listed: int) -> int:
	if owner.is_empty() or not ClassDB.class_exists(owner):
		return listed
	var setter: StringName = ClassDB.class_get_property_setter(owner, name)
	for method: Dictionary in ClassDB.class_get_method_list(owner):
		if method["name"] == setter and not method["args"].is_empty():
			var argument: int = method["args"][-1]["type"]
			return argument if _PACKED_ELEMENT.has(argument) else listed
	return listed


static func _by_name(text: String, named: Dictionary, flags: bool, job: Job, where: String) -> Variant:
	var total: int = 0
	for part: String in text.split("|") if flags else PackedStringArray([text]):
		var constant: String = part.strip_edges()
		if not named.has(constant):
			var hint: String = (
				"; it takes " + _listed(named, flags) if not named.is_empty() else "; it takes plain integers"
			)
			job.fail(
				Job.INVALID_VALUE,
				"%s: %s is not a constant of this property%s" % [where, JSON.stringify(constant), hint],
				where
			)
			return null
		total |= named[constant]
	return total


static func _allowed(number: int, values: Array, flags: bool) -> bool:
	if not flags:
		return number in values
	var mask: int = 0
	for bit: int in values:
		mask |= bit
	return number & ~mask == 0


static func _listed(named: Dictionary, flags: bool) -> String:
	var names: String = ", ".join(named.keys().map(func(n: String) -> String: return "%s (%d)" % [n, named[n]]))
	return ("a combination of " if flags else "one of ") + names


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
	job.fail(Job.INVALID_VALUE, "%s: %s is not a number" % [where, shown(value)], where)
	return null


static func _color(value: Variant, job: Job, where: String) -> Variant:
	var parts: Array = []
	if typeof(value) == TYPE_STRING:
		# As the engine reads a colour from text: "#rgb", "#rgba", "#rrggbb", "#rrggbbaa", or one of
		# its named colours ("red", "dark_olive_green", any case).
		var text: String = value
		if text.begins_with("#") and Color.html_is_valid(text):
			return Color.html(text)
		# Color.from_string() gives its fallback for a name it does not know, so a name it knows gives
		# the same colour whatever the fallback (find_named_color() is not exposed to scripts).
		# Text that would read as hex without its "#" ("bad") is not taken for a name.
		var named: Color = Color.from_string(text, Color.BLACK)
		if not Color.html_is_valid(text) and named == Color.from_string(text, Color.WHITE):
			return named
	elif typeof(value) == TYPE_DICTIONARY and _has_only(value, ["r", "g", "b"], ["a"]):
		parts = [value["r"], value["g"], value["b"], value.get("a", 1.0)]
	elif typeof(value) == TYPE_ARRAY and (value.size() == 3 or value.size() == 4):
		parts = value.duplicate()
		if parts.size() == 3:
			parts.append(1.0)
	if parts.size() == 4 and parts.all(_is_number):
		if parts.all(_is_integral) and parts.max() >= _BYTE_LIKE:
			# [255, 128, 0] is a colour written in 0-255; the engine would keep it as a very bright HDR
			# colour. A real HDR colour that bright is rare, and has a fraction or a "#" form.
			job.fail(Job.INVALID_VALUE, _byte_components(value, parts, where), where)
			return null
		return Color(parts[0], parts[1], parts[2], parts[3])
	job.fail(
		Job.INVALID_VALUE,
		(
			'%s: %s is not a color; give "#rrggbb", "#rrggbbaa", {"r", "g", "b"[, "a"]} or [r, g, b[, a]]'
			% [where, shown(value)]
		),
		where
	)
	return null


## Why a colour given in 0-255 components is refused, with what it probably meant.
static func _byte_components(value: Variant, parts: Array, where: String) -> String:
	var scaled: Array = parts.slice(0, 3).map(func(part: float) -> String: return String.num(part / 255.0, 3))
	var html: String = Color(parts[0] / 255.0, parts[1] / 255.0, parts[2] / 255.0).to_html(false)
	return (
		"%s: %s looks like 0-255 components, but a color's go from 0 to 1: " % [where, shown(value)]
		+ 'write [%s] or "#%s" (for a bright HDR color, give fractions, e.g. 16.5)' % [", ".join(scaled), html]
	)


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
		job.fail(
			Job.INVALID_VALUE,
			(
				"%s: %s is not a %s; give an array of %d %s"
				% [where, shown(value), type_string(type), width, "integers" if integral else "numbers"]
			),
			where
		)
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
		TYPE_TRANSFORM2D: [3, 2],
		TYPE_BASIS: [3, 3],
		TYPE_TRANSFORM3D: [4, 3],
		TYPE_PROJECTION: [4, 4],
	}
	var columns: int = shapes[type][0]
	var rows: int = shapes[type][1]
	var ok: bool = typeof(value) == TYPE_ARRAY and value.size() == columns
	if ok:
		for column: Variant in value:
			ok = ok and typeof(column) == TYPE_ARRAY and column.size() == rows and column.all(_is_number)
	if not ok:
		job.fail(
			Job.INVALID_VALUE,
			(
				"%s: %s is not a %s; give %d column arrays of %d numbers"
				% [where, shown(value), type_string(type), columns, rows]
			),
			where
		)
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
		job.fail(Job.INVALID_VALUE, "%s: %s is not an array for a %s" % [where, shown(value), type_string(type)], where)
		return null
	var element: int = _PACKED_ELEMENT[type]
	var items: Array = []
	for i: int in value.size():
		items.append(decode_type(value[i], element, job, "%s[%d]" % [where, i]))
		if job.failed():
			return null
	return type_convert(items, type)


## The property info of one element, from the hint of an Array or one side of a Dictionary:
## a type name ("int", "Color"), a class name ("Texture2D"), or "type/hint:hint_string".
static func element_info(spec: String) -> Dictionary:
	var info: Dictionary = {"name": "", "type": TYPE_NIL, "hint": PROPERTY_HINT_NONE, "hint_string": ""}
	if spec.contains(":"):
		var head: String = spec.get_slice(":", 0)
		info["type"] = head.get_slice("/", 0).to_int()
		info["hint"] = head.get_slice("/", 1).to_int() if head.contains("/") else PROPERTY_HINT_NONE
		info["hint_string"] = spec.substr(spec.find(":") + 1)
		return info
	if spec == "Variant":
		return info
	for type: int in TYPE_MAX:
		if type_string(type) == spec:
			info["type"] = type
			return info
	info["type"] = TYPE_OBJECT
	info["hint"] = PROPERTY_HINT_RESOURCE_TYPE
	info["hint_string"] = spec
	return info


## The engine stores whatever array it is given, so each element is converted and checked here.
static func _typed_array(value: Array, element: Dictionary, job: Job, where: String) -> Variant:
	var items: Array = []
	for i: int in value.size():
		items.append(decode(value[i], element, "", job, "%s[%d]" % [where, i]))
		if job.failed():
			return null
	if element["type"] == TYPE_NIL:
		return items
	var cls: StringName = (
		StringName(str(element["hint_string"]).get_slice(",", 0)) if element["type"] == TYPE_OBJECT else &""
	)
	return Array(items, element["type"], cls, null)


## JSON keys are strings; each is converted like a value of the key type ("3" for an int key).
static func _typed_dictionary(value: Dictionary, spec: String, job: Job, where: String) -> Variant:
	var key_info: Dictionary = element_info(spec.get_slice(";", 0))
	var value_info: Dictionary = element_info(spec.get_slice(";", 1))
	var out: Dictionary = {}
	for key: Variant in value:
		var raw_key: Variant = key
		if key_info["type"] in [TYPE_INT, TYPE_FLOAT] and str(key).is_valid_float():
			raw_key = str(key).to_float()
		var decoded_key: Variant = decode(raw_key, key_info, "", job, "%s[%s]" % [where, JSON.stringify(key)])
		var decoded: Variant = decode(value[key], value_info, "", job, "%s[%s]" % [where, JSON.stringify(key)])
		if job.failed():
			return null
		out[decoded_key] = decoded
	return out


# ----- Variant -> JSON -------------------------------------------------------------------------


## Convert `value` to JSON. Resources are expanded `depth` levels deep, then given as paths; each
## only once per reply: `expanded` holds those expanded already (see to_value()).
static func encode(value: Variant, depth: int, expanded: Dictionary = {}) -> Variant:
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
			return _numbers(
				[value.position.x, value.position.y, value.position.z, value.size.x, value.size.y, value.size.z]
			)
		TYPE_TRANSFORM2D:
			return [encode(value.x, 0), encode(value.y, 0), encode(value.origin, 0)]
		TYPE_BASIS:
			return [encode(value.x, 0), encode(value.y, 0), encode(value.z, 0)]
		TYPE_TRANSFORM3D:
			return [
				encode(value.basis.x, 0), encode(value.basis.y, 0), encode(value.basis.z, 0), encode(value.origin, 0)
			]
		TYPE_PROJECTION:
			return [encode(value.x, 0), encode(value.y, 0), encode(value.z, 0), encode(value.w, 0)]
		TYPE_DICTIONARY:
			var out: Dictionary = {}
			for key: Variant in value:
				out[str(key)] = encode(value[key], depth, expanded)
			return out
		TYPE_OBJECT:
			return to_value(value, depth, expanded)
	if typeof(value) == TYPE_ARRAY or _PACKED_ELEMENT.has(typeof(value)):
		var items: Array = []
		for item: Variant in value:
			items.append(encode(item, depth, expanded))
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


## `value` as JSON for a message; a whole number without the ".0" that JSON parsing added.
static func shown(value: Variant) -> String:
	var whole: bool = typeof(value) == TYPE_FLOAT and is_finite(value) and value == floorf(value) and absf(value) < 1e15
	var text: String = str(int(value)) if whole else JSON.stringify(value)
	return text if text.length() <= 80 else text.substr(0, 77) + "..."


# ----- Resources, and the properties of objects ------------------------------------------------
## A value is null, a path to a resource file (confined to the project and loaded fresh by
## resources.gd), "res://file.tres::ID" for a sub-resource embedded in a file, or a new resource to
## embed, {"type", "properties"} (made by make()). Read back, a resource is its path, or
## {"type", "path", "properties"} while the reply's depth lasts. A resource's properties are values
## too: the conversion is recursive, and all of it lives in this file.


## Convert and set every entry of `values` on `target`; `member` names the request member.
## Return the values as set (name -> value), each read back once all are set, since setting one
## property can reset another. Whether the engine will also save them is for check_stored() to
## confirm, or for Saving.save(), which loads back the file it writes.
static func apply(target: Object, values: Dictionary, job: Job, member: String) -> Dictionary:
	var values_set: Dictionary = _apply(target, values, job, member)
	if values_set.size() != values.size() and not job.failed():
		# _apply() was cut short by a runtime error, which ends a function with its type's default
		# ({} here) and lets the caller go on (see Gate.MAY): a value not set must not pass as set.
		job.fail(
			Job.INVALID_VALUE,
			"%s: setting the values was cut short by an error in the bridge (see the engine's output)" % member,
			member
		)
	return values_set


static func _apply(target: Object, values: Dictionary, job: Job, member: String) -> Dictionary:
	var values_set: Dictionary = {}
	if values.is_empty():
		return values_set
	var known: Dictionary = Props.class_infos(target)
	var asked_object: bool = false
	for name: Variant in values:
		if typeof(name) != TYPE_STRING:
			job.fail(Job.INVALID_REQUEST, "%s has a key that is not a string" % member, member)
			return {}
		if name in Props.FORBIDDEN:
			job.fail(
				Job.FORBIDDEN_PROPERTY,
				"%s may not set %s: it would attach code or move the file" % [member, name],
				member
			)
			return {}
		if not known.has(name) and not asked_object:
			known = Props.infos(target)
			asked_object = true
		if not known.has(name) and target is Theme:
			var item: Dictionary = Props.theme_item(name)
			if not item.is_empty():
				known[name] = item
		if not known.has(name) and target is Animation and name == "tracks/%d/type" % target.get_track_count():
			# A track is made by naming its type; its other tracks/N/* properties exist from then on.
			known[name] = {
				"name": name,
				"type": TYPE_STRING,
				"hint": PROPERTY_HINT_NONE,
				"hint_string": "",
				"usage": PROPERTY_USAGE_DEFAULT
			}
			asked_object = false
		if not known.has(name):
			job.fail(
				Job.UNKNOWN_PROPERTY,
				(
					"%s has no property %s%s"
					% [target.get_class(), JSON.stringify(name), Props.suggest(name, known.keys())]
				),
				member
			)
			return {}
		var where: String = "%s.%s" % [member, name]
		var info: Dictionary = known[name]
		if target is Animation and typeof(target.get(name)) not in [TYPE_NIL, info["type"]]:
			# Animation lists every track's keys as an Array, but a value track's are a Dictionary.
			info = info.merged({"type": typeof(target.get(name))}, true)
		var value: Variant = null
		if target is Curve and name == "_data" and typeof(values[name]) == TYPE_ARRAY:
			value = _curve_points(values[name], job, where)
		else:
			value = decode(values[name], info, target.get_class(), job, where)
		if job.failed():
			return {}
		if not Props.settable(target, info, value, job, where, member):
			return {}
		target.set(name, value)
		if not Props.same(target.get(name), value):
			job.fail(
				Job.INVALID_VALUE,
				(
					"%s: the engine did not accept %s for %s.%s (it reads back %s)"
					% [
						where,
						shown(values[name]),
						target.get_class(),
						name,
						JSON.stringify(encode(target.get(name), 0))
					]
				),
				member
			)
			return {}
		values_set[name] = value
	for name: String in values_set:
		if not Props.same(target.get(name), values_set[name]):
			job.fail(
				Job.INVALID_VALUE,
				(
					"%s.%s: %s.%s would not keep this value: another property reset it"
					% [member, name, target.get_class(), name]
				),
				member
			)
			return {}
	return values_set


## Curve._data from JSON: an untyped array of 5-tuples (position, left tangent, right tangent, left
## mode, right mode), whose positions JSON gives as [x, y]; the engine wants a Vector2 there (and
## its property list calls `_data` an int, so the codec cannot be asked).
static func _curve_points(data: Array, job: Job, where: String) -> Array:
	var points: Array = []
	var kinds: Array[int] = [TYPE_VECTOR2, TYPE_FLOAT, TYPE_FLOAT, TYPE_INT, TYPE_INT]
	for i: int in data.size():
		points.append(decode_type(data[i], kinds[i % 5], job, "%s[%d]" % [where, i]))
		if job.failed():
			return []
	return points


## [a new resource of class `type` with `properties` set (converted like any request's values),
## the values as set (for Saving.save to prove)]; [null, {}] after failing `job`. `where` names the
## member that gave the class, `member` the one that gave the values; a class that cannot be
## created fails the job with `refused`.
static func make(
	type: String, properties: Dictionary, job: Job, where: String, member: String, refused: String = Job.INVALID_TYPE
) -> Array:
	var why: String = Creating.refusal(type)
	if not why.is_empty():
		job.fail(refused, "%s %s cannot be created: %s" % [where, JSON.stringify(type), why], where)
		return [null, {}]
	var made: Resource = ClassDB.instantiate(type)
	var values: Dictionary = apply(made, properties, job, member)
	return [null, {}] if job.failed() else [made, values]


## The stored properties of `target` that differ from their defaults (all of them with `everything`),
## as JSON: resources expanded while `depth` lasts, each once (`expanded`, see to_value()).
static func stored(target: Object, depth: int, expanded: Dictionary, everything: bool) -> Dictionary:
	var out: Dictionary = Props.stored(target, everything)
	for name: String in out:
		out[name] = encode(out[name], depth, expanded)
	return out


## Exactly the properties named, defaults included, as JSON.
static func pick(target: Object, names: Array, depth: int, job: Job) -> Dictionary:
	var out: Dictionary = Props.pick(target, names, job)
	var expanded: Dictionary = {target: true}
	for name: String in out:
		out[name] = encode(out[name], depth, expanded)
	return out


## A Resource value from JSON: null, or a path to an existing resource of a class in `hint`.
## Also what resource_read prints for one: "res://file.tres::ID" for a sub-resource embedded in
## another file, or the expanded {"type", "path", "properties"} (named by its path).
static func from_value(value: Variant, hint: String, job: Job, where: String) -> Resource:
	if value == null:
		return null
	if typeof(value) == TYPE_DICTIONARY and not value.has("path") and typeof(value.get("type")) == TYPE_STRING:
		return _made(value, hint, job, where)
	var named: Variant = value
	if typeof(value) == TYPE_DICTIONARY and typeof(value.get("path")) == TYPE_STRING:
		named = value["path"]
	if typeof(named) != TYPE_STRING:
		job.fail(
			Job.INVALID_VALUE,
			"%s: give a resource as a path string or null, not %s" % [where, JSON.stringify(value)],
			where
		)
		return null
	var text: String = named
	var path: String = Paths.confine(text.get_slice("::", 0), job, where)
	if job.failed():
		return null
	var loaded: Resource = Resources.load_fresh(path, job, where)
	if not job.failed() and text.contains("::"):
		loaded = _embedded(loaded, path + "::" + text.get_slice("::", 1), {})
		if loaded == null:
			job.fail(
				Job.NOT_FOUND,
				"%s: %s has no sub-resource %s" % [where, path, JSON.stringify(text.get_slice("::", 1))],
				where
			)
	if job.failed():
		return null
	if typeof(value) == TYPE_DICTIONARY and value.get("type") != loaded.get_class():
		job.fail(
			Job.INVALID_VALUE,
			"%s: %s is a %s, not a %s" % [where, text, loaded.get_class(), JSON.stringify(value.get("type"))],
			where
		)
		return null
	var accepted: PackedStringArray = hint.split(",", false)
	for cls: String in accepted:
		if loaded.is_class(cls.strip_edges()):
			return loaded
	if accepted.is_empty():
		return loaded
	job.fail(
		Job.INVALID_VALUE,
		"%s: %s is a %s, but this property takes %s" % [where, text, loaded.get_class(), " or ".join(accepted)],
		where
	)
	return null


## A new embedded resource from the object form {"type", "properties"?} (what resource_read prints).
static func _made(value: Dictionary, hint: String, job: Job, where: String) -> Resource:
	for key: Variant in value:
		if key not in ["type", "properties"]:
			job.fail(
				Job.INVALID_VALUE,
				'%s: a new resource is {"type", "properties"}, not %s' % [where, JSON.stringify(key)],
				where
			)
			return null
	var properties: Variant = value.get("properties", {})
	if typeof(properties) != TYPE_DICTIONARY:
		job.fail(Job.INVALID_VALUE, "%s.properties must be an object" % where, where)
		return null
	var accepted: PackedStringArray = hint.split(",", false)
	if not accepted.is_empty() and not _is_one_of(value["type"], accepted):
		job.fail(
			Job.INVALID_VALUE,
			(
				"%s: a %s cannot go here: this property takes %s"
				% [where, JSON.stringify(value["type"]), " or ".join(accepted)]
			),
			where
		)
		return null
	# A class refused here is a bad value, not a bad type member of the request.
	return make(value["type"], properties, job, where, where + ".properties", Job.INVALID_VALUE)[0]


## Whether `type` names a class that is (or inherits) one of `classes`.
static func _is_one_of(type: Variant, classes: PackedStringArray) -> bool:
	for cls: String in classes:
		if ClassDB.class_exists(type) and ClassDB.is_parent_class(type, cls.strip_edges()):
			return true
	return false


## The resource with resource_path `path` among those nested in `owner`, or null.
static func _embedded(owner: Resource, path: String, seen: Dictionary) -> Resource:
	if owner == null or seen.has(owner):
		return null
	seen[owner] = true
	if owner.resource_path == path:
		return owner
	for info: Dictionary in owner.get_property_list():
		var found: Resource = _embedded_in(owner.get(info["name"]), path, seen)
		if found != null:
			return found
	return null


static func _embedded_in(value: Variant, path: String, seen: Dictionary) -> Resource:
	if value is Resource:
		return _embedded(value, path, seen)
	if typeof(value) == TYPE_ARRAY or typeof(value) == TYPE_DICTIONARY:
		for item: Variant in value if typeof(value) == TYPE_ARRAY else value.values():
			var found: Resource = _embedded_in(item, path, seen)
			if found != null:
				return found
	return null


## A resource as JSON: its path once `depth` is spent or once it has been expanded in this reply
## (`expanded`), else {type, path, properties}. Expanding each resource once keeps a reply as large
## as the file, not 2^depth: 40 sub-resources that each name the next twice would be expanded
## a trillion times. The path names it (res://file.tres::ID for an embedded one), as at depth 0.
static func to_value(value: Object, depth: int, expanded: Dictionary) -> Variant:
	if not (value is Resource):
		return null
	var resource: Resource = value
	if depth <= 0 or expanded.has(resource):
		return resource.resource_path
	if Resources.is_imported(resource):
		# An imported asset is a leaf: its properties are its raw data (a font's glyph cache, a
		# texture's image), megabytes that say nothing a request can set.
		return {"type": resource.get_class(), "path": resource.resource_path}
	expanded[resource] = true
	return {
		"type": resource.get_class(),
		"path": resource.resource_path,
		"properties": stored(resource, depth - 1, expanded, false),
	}
