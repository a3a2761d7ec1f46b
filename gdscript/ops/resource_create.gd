extends RefCounted
## resource_create: make a resource of any class that holds no code (creating.gd), set its
## properties, save it.

const Codec = preload("../values/codec.gd")
const Job = preload("../job.gd")
const Saving = preload("../files/saving.gd")


static func run(request: Dictionary, job: Job) -> Dictionary:
	var made: Array = Codec.make(
		request["resource_type"], request.get("properties", {}), job, "resource_type", "properties"
	)
	var uid: String = ""
	if not job.failed():
		uid = Saving.save(made[0], request["resource_path"], job, job.named("resource_path"), made[1], "properties")
	return {"type": request["resource_type"], "uid": uid}
