extends RefCounted
## class_info: what a request may do with a resource class, as the engine's ClassDB has it: the
## classes it comes from, the classes a request may create from it, and every property a request
## may set, with its type, default (in the reply's value form), named constants and range.
##
## The properties are those the engine saves (PROPERTY_USAGE_STORAGE: a request's values are
## proven from the saved file, so one the engine does not save cannot be set), less those no
## request may set (props.gd FORBIDDEN): ClassDB's, which include those an object saves only in
## some states (alpha_scissor_threshold once transparency is ALPHA_SCISSOR), then those only an
## instance has (a Curve's point_N/*).

const Job = preload("../job.gd")
const Codec = preload("../values/codec.gd")
const Creating = preload("../values/creating.gd")
const Props = preload("../values/props.gd")


static func run(request: Dictionary, job: Job) -> Dictionary:
	var name: String = request["class_name"]
	# A resource class that holds no code; an abstract one (Material, Shape3D) is described for its
	# inheritors.
	var why: String = Creating.resource_refusal(name)
	if not why.is_empty():
		job.fail(Job.INVALID_TYPE, "class_name %s: %s" % [JSON.stringify(name), why], "class_name")
		return {}
	var inherits: Array[String] = []
	var parent: String = ClassDB.get_parent_class(name)
	while not parent.is_empty():
		inherits.append(parent)
		parent = ClassDB.get_parent_class(parent)
	var inheritors: Array[String] = []
	for type: String in ClassDB.get_inheriters_from_class(name):
		# By ClassDB alone: making one of each (every Resource class, for "Resource") is no answer's cost.
		if Creating.kind_refusal(type).is_empty():
			inheritors.append(type)
	inheritors.sort()
	return {"inherits": inherits, "inheritors": inheritors, "properties": _properties(name)}


static func _properties(name: String) -> Array[Dictionary]:
	var instance: Object = ClassDB.instantiate(name) if ClassDB.can_instantiate(name) else null
	var listed: Array[Dictionary] = ClassDB.class_get_property_list(name)
	if instance != null:
		listed.append_array(instance.get_property_list())
	var found: Array[Dictionary] = []
	var seen: Dictionary = {}
	for info: Dictionary in listed:
		if info["usage"] & PROPERTY_USAGE_STORAGE == 0 or info["name"] in Props.FORBIDDEN or seen.has(info["name"]):
			continue
		seen[info["name"]] = true
		var default: Variant = (
			Props.default_of(instance, info["name"])
			if instance != null
			else ClassDB.class_get_property_default_value(name, info["name"])
		)
		var entry: Dictionary = {"name": info["name"], "type": _type_name(info), "default": Codec.encode(default, 0)}
		if info["type"] == TYPE_INT:
			var named: Dictionary = Codec.choices(name, info)
			if not named.is_empty():
				entry["enum"] = named
				entry["flags"] = Codec.is_flags(name, info)
		if info["hint"] == PROPERTY_HINT_RANGE:
			entry["range"] = _range(info["hint_string"], info["type"] == TYPE_INT)
		found.append(entry)
	return found


## A Variant type name (float, Color, Vector3), or for an object the class it must be.
static func _type_name(info: Dictionary) -> String:
	if info["type"] == TYPE_OBJECT:
		if info["hint"] == PROPERTY_HINT_RESOURCE_TYPE and not str(info["hint_string"]).is_empty():
			return info["hint_string"]
		return str(info["class_name"]) if not str(info["class_name"]).is_empty() else "Object"
	if info["type"] == TYPE_NIL:
		return "Variant"
	return type_string(info["type"])


## A range hint ("0,1,0.01,or_greater") as {"min", "max", "step", "or_greater", "or_less"}, the
## numbers as integers for an integer property.
static func _range(hint: String, integer: bool) -> Dictionary:
	var parts: PackedStringArray = hint.split(",", false)
	var out: Dictionary = {}
	for i: int in mini(parts.size(), 3):
		if parts[i].strip_edges().is_valid_float():
			var number: float = parts[i].strip_edges().to_float()
			out[["min", "max", "step"][i]] = int(number) if integer else number
	for flag: String in ["or_greater", "or_less"]:
		if flag in parts:
			out[flag] = true
	return out
