extends RefCounted
## style_box_create: instantiate one of the four style box classes, set properties, save.

const Codec = preload("../values/codec.gd")
const Job = preload("../job.gd")
const Saving = preload("../files/saving.gd")

## The Python model already refuses any other style_type; the engine side checks again because
## it is the one instantiating a class named by a request.
const STYLE_TYPES: Array[String] = ["StyleBoxFlat", "StyleBoxTexture", "StyleBoxLine", "StyleBoxEmpty"]


static func run(request: Dictionary, job: Job) -> Dictionary:
	var type: String = request["style_type"]
	if type not in STYLE_TYPES:
		job.fail(
			Job.INVALID_TYPE,
			"style_type %s is not one of %s" % [JSON.stringify(type), ", ".join(STYLE_TYPES)],
			"style_type"
		)
		return {}
	var made: Array = Codec.make(type, request.get("properties", {}), job, "style_type", "properties")
	var uid: String = ""
	if not job.failed():
		uid = Saving.save(made[0], request["resource_path"], job, job.named("resource_path"), made[1], "properties")
	return {"type": type, "uid": uid}
