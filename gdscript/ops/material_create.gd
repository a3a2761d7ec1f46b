extends RefCounted
## material_create: instantiate a Material subclass (or PhysicsMaterial), set properties, save.

const Codec = preload("../values/codec.gd")
const Job = preload("../job.gd")
const Props = preload("../values/props.gd")
const Resources = preload("../values/resources.gd")
const Saving = preload("../files/saving.gd")


static func run(request: Dictionary, job: Job) -> Dictionary:
	var type: String = request["material_type"]
	if not is_material_class(type):
		job.fail(
			Job.INVALID_TYPE,
			(
				"material_type %s is not a material class the engine can create%s"
				% [JSON.stringify(type), Props.suggest_class(type, material_classes())]
			),
			"material_type"
		)
		return {}
	var material: Resource = ClassDB.instantiate(type)
	if request.has("shader_path"):
		var shader: Resource = Resources.load_fresh(request["shader_path"], job, "shader_path")
		if job.failed():
			return {}
		if not shader is Shader:
			job.fail(
				Job.INVALID_VALUE,
				"shader_path %s is a %s, not a shader" % [request["shader_path"], shader.get_class()],
				"shader_path"
			)
			return {}
		material.set("shader", shader)
	var values: Dictionary = Codec.apply(material, request.get("properties", {}), job, "properties")
	var uid: String = ""
	if not job.failed():
		uid = Saving.save(material, request["resource_path"], job, job.named("resource_path"), values, "properties")
	return {"type": type, "uid": uid}


## Every class material_create accepts.
static func material_classes() -> Array:
	return (Array(ClassDB.get_inheriters_from_class("Material")) + ["PhysicsMaterial"]).filter(is_material_class)


## PhysicsMaterial is listed among the materials although the engine does not derive it from Material.
## Material itself is excluded: it is the abstract base, instantiable but rendering nothing.
static func is_material_class(type: String) -> bool:
	if not ClassDB.class_exists(type) or not ClassDB.can_instantiate(type) or type == "Material":
		return false
	return type == "PhysicsMaterial" or ClassDB.is_parent_class(type, "Material")
