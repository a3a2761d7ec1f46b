extends RefCounted
## What the engine says of an object's properties: which it has, their defaults, which it stores,
## whether two values are the same, and the names a misspelt one may have meant. No JSON here: the
## codec (codec.gd) converts values, and sets them through these checks.

const Job = preload("../job.gd")
const Gate = preload("../safety/gate.gd")
const Paths = preload("../safety/paths.gd")
const Scan = preload("../formats/scan.gd")

## Members a request may never set: they would attach code or move the file.
const FORBIDDEN: Array[String] = ["script", "resource_path", "resource_scene_unique_id"]
## The widest a texture the bridge makes may be, in pixels (the largest size GPUs take).
const MAX_TEXTURE_SIZE: int = 16384
const _NOT_A_PROPERTY: int = PROPERTY_USAGE_CATEGORY | PROPERTY_USAGE_GROUP | PROPERTY_USAGE_SUBGROUP
## Types same() compares with is_equal_approx(), and those it compares element by element.
const _APPROXIMATE: Array[int] = [
	TYPE_VECTOR2,
	TYPE_VECTOR3,
	TYPE_VECTOR4,
	TYPE_COLOR,
	TYPE_QUATERNION,
	TYPE_PLANE,
	TYPE_RECT2,
	TYPE_AABB,
	TYPE_BASIS,
	TYPE_TRANSFORM2D,
	TYPE_TRANSFORM3D,
]
const _ELEMENTWISE: Array[int] = [
	TYPE_ARRAY,
	TYPE_PACKED_FLOAT32_ARRAY,
	TYPE_PACKED_FLOAT64_ARRAY,
	TYPE_PACKED_VECTOR2_ARRAY,
	TYPE_PACKED_VECTOR3_ARRAY,
	TYPE_PACKED_COLOR_ARRAY,
	TYPE_PACKED_VECTOR4_ARRAY,
]
## Godot 3 class and property names that Godot 4 renamed: one table, which the front end reads too.
const _GODOT_3: JSON = preload("godot3_names.json")

## infos() of a just-instantiated object, by class: every instance of a class has these properties
## (with these types), and get_property_list() is the costliest call of a request (~0.2 ms for a
## StandardMaterial3D). An object's own extra properties (a shader's uniforms, a script's members)
## are not among them; for those names Codec.apply() asks the object itself.
static var _class_infos: Dictionary = {}
## The default value of each property, by class then name (see _default()).
static var _defaults: Dictionary = {}
## A fresh instance of each class met, to read defaults from.
static var _fresh: Dictionary = {}


## The settable properties of `target`, name -> info, in the engine's order.
static func infos(target: Object) -> Dictionary:
	var found: Dictionary = {}
	for info: Dictionary in target.get_property_list():
		if info["usage"] & _NOT_A_PROPERTY == 0:
			found[info["name"]] = info
	return found


## Whether `value` may be set as the property `info` describes, before the engine acts on it: a path
## the engine opens by itself (CompressedTexture2D.load_path, hinted as a file in ClassDB) must
## lead inside the project, the count of an array of properties (Curve.point_count) must be one the
## engine makes in a moment, not two billion entries, a texture's size in pixels one a GPU takes,
## and shader source may include only what a shader file may (Gate.includes_fault()).
static func settable(target: Object, info: Dictionary, value: Variant, job: Job, where: String, member: String) -> bool:
	if info["type"] == TYPE_STRING and info["hint"] in Scan.PATH_HINTS:
		var fault: Array = Gate.opened_file_fault(value)
		if fault != Gate.MAY:
			if fault.size() != 2:
				fault = [Job.UNSAFE_RESOURCE, "a file the bridge's check failed on (see the engine's output)"]
			job.fail(
				fault[0],
				"%s: %s names %s, which the engine would open" % [where, JSON.stringify(value), fault[1]],
				member
			)
			return false
	if typeof(value) == TYPE_STRING and Scan.is_shader_source(target.get_class(), info["name"]):
		# The engine preprocesses shader source as it is set, each #include loaded then.
		var included: Array = Gate.includes_fault(value, "res://")
		if not included.is_empty():
			job.fail(included[0], "%s: the shader source given %s" % [where, included[1]], member)
			return false
	if info["type"] == TYPE_INT and info["usage"] & PROPERTY_USAGE_ARRAY and (value < 0 or value > Scan.MAX_COUNT):
		job.fail(
			Job.INVALID_VALUE,
			"%s: %d entries is more than the bridge makes (from 0 to %d)" % [where, value, Scan.MAX_COUNT],
			member
		)
		return false
	if (
		target is Texture
		and info["type"] == TYPE_INT
		and info["hint"] == PROPERTY_HINT_RANGE
		and info["hint_string"].contains("or_greater")
		and value > MAX_TEXTURE_SIZE
	):
		job.fail(
			Job.INVALID_VALUE,
			"%s: %d pixels is more than a texture may have (%d)" % [where, value, MAX_TEXTURE_SIZE],
			member
		)
		return false
	return true


static func class_infos(target: Object) -> Dictionary:
	var cls: String = target.get_class()
	if not _class_infos.has(cls):
		_class_infos[cls] = infos(ClassDB.instantiate(cls)) if ClassDB.can_instantiate(cls) else {}
	return _class_infos[cls]


## Fail unless the engine saves each of `names` with `target` (setting one property can make the
## engine stop storing another, which it would then silently drop).
static func check_stored(target: Object, names: Array, job: Job, member: String) -> void:
	if names.is_empty():
		return
	var now: Dictionary = infos(target)
	for name: String in names:
		if not now.has(name) or now[name]["usage"] & PROPERTY_USAGE_STORAGE == 0:
			(
				job
				. fail(
					Job.INVALID_VALUE,
					(
						"%s.%s: %s.%s would not keep this value: the engine does not save it together with the other properties given"
						% [member, name, target.get_class(), name]
					),
					member
				)
			)
			return


## The stored properties of `target` that differ from their defaults (all of them with `everything`),
## name -> value.
static func stored(target: Object, everything: bool) -> Dictionary:
	var out: Dictionary = {}
	var cls: String = target.get_class()
	if not _defaults.has(cls):
		_defaults[cls] = {}
	var defaults: Dictionary = _defaults[cls]
	for info: Dictionary in target.get_property_list():
		if info["usage"] & PROPERTY_USAGE_STORAGE == 0:
			continue
		var name: String = info["name"]
		if name in FORBIDDEN:
			continue
		var value: Variant = target.get(name)
		if name == "resource_name" and value == "":
			continue
		if not everything:
			# _default() written out, its class default called for only on a first miss: a call per
			# stored property cost a material's read ~30 us.
			var default: Variant = null
			if target.property_can_revert(name):
				default = target.property_get_revert(name)
			elif defaults.has(name):
				default = defaults[name]
			else:
				default = _class_default(cls, defaults, name)
			# Most properties hold their default exactly: skip same() and its call for those.
			if typeof(default) == typeof(value) and default == value or same(default, value):
				continue
		out[name] = value
	return out


## Exactly the properties named, defaults included, name -> value.
static func pick(target: Object, names: Array, job: Job) -> Dictionary:
	var known: Dictionary = infos(target)
	var out: Dictionary = {}
	for name: Variant in names:
		if not known.has(name):
			job.fail(
				Job.UNKNOWN_PROPERTY,
				(
					"%s has no property %s%s"
					% [target.get_class(), JSON.stringify(name), suggest(str(name), known.keys())]
				),
				"properties"
			)
			return {}
		out[name] = target.get(name)
	return out


## A Theme lists only the items it has as properties; a new one is "<type>/<kind>/<item>", typed
## by its kind. {} for a name of another form.
static func theme_item(name: String) -> Dictionary:
	var parts: PackedStringArray = name.split("/")
	var kinds: Dictionary = {
		"colors": [TYPE_COLOR, ""],
		"constants": [TYPE_INT, ""],
		"font_sizes": [TYPE_INT, ""],
		"fonts": [TYPE_OBJECT, "Font"],
		"icons": [TYPE_OBJECT, "Texture2D"],
		"styles": [TYPE_OBJECT, "StyleBox"],
	}
	if parts.size() != 3 or parts[0].is_empty() or parts[2].is_empty() or not kinds.has(parts[1]):
		return {}
	var kind: Array = kinds[parts[1]]
	return {
		"name": name,
		"type": kind[0],
		"hint": PROPERTY_HINT_RESOURCE_TYPE if kind[0] == TYPE_OBJECT else PROPERTY_HINT_NONE,
		"hint_string": kind[1],
		"usage": PROPERTY_USAGE_DEFAULT
	}


## The value property `name` of `target` reverts to (what the saver leaves out of the file).
static func default_of(target: Object, name: String) -> Variant:
	var cls: String = target.get_class()
	if not _defaults.has(cls):
		_defaults[cls] = {}
	return _default(target, cls, _defaults[cls], name)


## The value `name` reverts to: the object's own answer, else what a fresh instance of its class
## holds (cached in `defaults`). ClassDB has no default for a property the class shows only in
## some states (StandardMaterial3D.heightmap_min_layers once deep parallax is on), but a fresh
## instance holds its value all the same.
static func _default(target: Object, cls: String, defaults: Dictionary, name: String) -> Variant:
	if target.property_can_revert(name):
		return target.property_get_revert(name)
	return _class_default(cls, defaults, name)


## What a fresh instance of class `cls` holds in `name`, kept in `defaults` (see _default()).
static func _class_default(cls: String, defaults: Dictionary, name: String) -> Variant:
	if not defaults.has(name):
		var fresh: Object = _fresh_instance(cls)
		defaults[name] = fresh.get(name) if fresh != null else ClassDB.class_get_property_default_value(cls, name)
	return defaults[name]


static func _fresh_instance(cls: String) -> Object:
	if not _fresh.has(cls):
		_fresh[cls] = ClassDB.instantiate(cls) if ClassDB.can_instantiate(cls) else null
	return _fresh[cls]


## Two dictionaries with the same keys and values, where a value may come back from the engine in
## another numeric or array type than JSON gave it (an Animation track's keys: "update" 0.0 reads
## back 0, "times" [0, 1] reads back a PackedFloat32Array).
static func _same_entries(a: Dictionary, b: Dictionary) -> bool:
	if a.size() != b.size():
		return false
	for key: Variant in a:
		if not b.has(key) or not _same_loosely(a[key], b[key]):
			return false
	return true


static func _same_loosely(a: Variant, b: Variant) -> bool:
	var numbers: Array[int] = [TYPE_INT, TYPE_FLOAT]
	if typeof(a) in numbers and typeof(b) in numbers:
		return is_equal_approx(float(a), float(b))
	# TYPE_ARRAY and the packed arrays after it
	if (
		typeof(a) >= TYPE_ARRAY
		and typeof(a) <= TYPE_PACKED_VECTOR4_ARRAY
		and typeof(b) >= TYPE_ARRAY
		and typeof(b) <= TYPE_PACKED_VECTOR4_ARRAY
	):
		if a.size() != b.size():
			return false
		for i: int in a.size():
			if not _same_loosely(a[i], b[i]):
				return false
		return true
	if typeof(a) == TYPE_DICTIONARY and typeof(b) == TYPE_DICTIONARY:
		return _same_entries(a, b)
	return same(a, b)


## Whether two values are equal, floats compared as the engine stores them (32-bit).
static func same(a: Variant, b: Variant) -> bool:
	var type: int = typeof(a)
	if type != typeof(b):
		# null and an object compare as values; any other two types differ.
		return (
			(type == TYPE_NIL or type == TYPE_OBJECT) and (typeof(b) == TYPE_NIL or typeof(b) == TYPE_OBJECT) and a == b
		)
	match type:
		TYPE_FLOAT:
			return is_equal_approx(a, b) or (is_nan(a) and is_nan(b))
		TYPE_DICTIONARY:
			return _same_entries(a, b)
	if type in _APPROXIMATE:
		return a.is_equal_approx(b)
	if type in _ELEMENTWISE:
		if a.size() != b.size():
			return false
		for i: int in a.size():
			if not same(a[i], b[i]):
				return false
		return true
	return a == b


## "; did you mean ..." for a class name that is not one of `accepted`: the same name in another
## case, the Godot 4 name of a Godot 3 class, or the closest names; "" when none is near.
static func suggest_class(type: String, accepted: Array) -> String:
	for candidate: Variant in accepted:
		if str(candidate).to_lower() == type.to_lower():
			return "; did you mean %s?" % candidate
	var renamed: String = _GODOT_3.data["classes"].get(type, "")
	if renamed in accepted:
		return "; did you mean %s (its name since Godot 4)?" % renamed
	return suggest(type, accepted)


## "; did you mean ..." with the closest known names, or "".
static func suggest(name: String, known: Array) -> String:
	# No property name is this long, and comparing a huge one with every name takes seconds.
	if name.length() > 200:
		return ""
	if ("shader_parameter/" + name) in known:
		# A ShaderMaterial's uniforms are its shader_parameter/<name> properties.
		return "; did you mean %s?" % JSON.stringify("shader_parameter/" + name)
	var renamed: Array = _GODOT_3.data["properties"].get(name, [])
	if not renamed.is_empty() and renamed[0] in known:
		return "; %s is Godot 3's: Godot 4 has %s" % [name, renamed[1]]
	var scored: Array = []
	for candidate: Variant in known:
		var score: float = name.similarity(str(candidate))
		if score > 0.4:
			scored.append([score, str(candidate)])
	scored.sort_custom(func(x: Array, y: Array) -> bool: return x[0] > y[0])
	var best: Array = scored.slice(0, 3).map(func(pair: Array) -> String: return pair[1])
	return "; did you mean %s?" % ", ".join(best) if not best.is_empty() else ""
