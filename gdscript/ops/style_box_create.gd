extends RefCounted
## style_box_create: instantiate one of the four style box classes, set properties, save.

const Job = preload("../job.gd")
const Props = preload("../props.gd")
const Saving = preload("../saving.gd")

## The Python model already refuses any other style_type; the engine side checks again because
## it is the one instantiating a class named by a request.
const STYLE_TYPES: Array[String] = ["StyleBoxFlat", "StyleBoxTexture", "StyleBoxLine", "StyleBoxEmpty"]


static func run(request: Dictionary, job: Job) -> Dictionary:
	var type: String = request["style_type"]
	if type not in STYLE_TYPES:
		job.fail(Job.INVALID_TYPE, "style_type %s is not one of %s" % [JSON.stringify(type), ", ".join(STYLE_TYPES)], "style_type")
		return {}
	var style_box: Resource = ClassDB.instantiate(type)
	var values: Dictionary = Props.apply(style_box, request.get("properties", {}), job, "properties")
	if not job.failed():
		Saving.save(style_box, request["path"], job, "path", values, "properties")
	return {"type": type}
