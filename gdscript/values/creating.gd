extends RefCounted
## Which classes a request may make a resource of (Codec.make() makes it, with its properties).

const Job = preload("../job.gd")
const Props = preload("props.gd")

static var _creatable: Array = []


## Why a resource of class `type` cannot be created ("" when it can): it must be a class a request
## may make (kind_refusal()) that the text format can hold.
static func refusal(type: String) -> String:
	var why: String = kind_refusal(type)
	if not why.is_empty():
		return why
	if not ResourceSaver.get_recognized_extensions(ClassDB.instantiate(type)).has("tres"):
		return "%s cannot be saved as a .tres file" % type
	return ""


## Why `type` is no class a request may make, from ClassDB alone (no instance is made): it must be a
## resource class (resource_refusal()) that can be instantiated and is no scene (PackedScene has its
## own format).
static func kind_refusal(type: String) -> String:
	var why: String = resource_refusal(type)
	if not why.is_empty():
		return why
	if not ClassDB.can_instantiate(type):
		return "%s is abstract: the engine cannot make one" % type
	if ClassDB.is_parent_class(type, "PackedScene"):
		return "a PackedScene is a scene, saved by the editor from nodes"
	return ""


## Why `type` is no resource class that holds no code (no Script, no GDExtension), from ClassDB
## alone: an unknown one gets the nearest names.
static func resource_refusal(type: String) -> String:
	if not ClassDB.class_exists(type):
		return "the engine has no class %s%s" % [JSON.stringify(type), Props.suggest_class(type, _resource_classes())]
	if not ClassDB.is_parent_class(type, "Resource"):
		return "%s is not a Resource" % type
	for code: String in ["Script", "GDExtension"]:
		if ClassDB.is_parent_class(type, code):
			return "%s is code, which this tool never writes" % type
	return ""


## Every class a request may create (for suggestions), found once.
static func _resource_classes() -> Array:
	if _creatable.is_empty():
		for type: String in ClassDB.get_inheriters_from_class("Resource"):
			if ClassDB.can_instantiate(type):
				_creatable.append(type)
	return _creatable
