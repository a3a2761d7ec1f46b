extends RefCounted
## shape_create: make a collision shape, then save it, attach it to a scene node, both, or neither.
## With both, the scene references the saved file, and the two files are written as one
## (Saving.commit): both or neither.

const Job = preload("../job.gd")
const Creating = preload("../values/creating.gd")
const Props = preload("../values/props.gd")
const Saving = preload("../files/saving.gd")
const SceneText = preload("../files/scene_text.gd")


static func run(request: Dictionary, job: Job) -> Dictionary:
	var type: String = request["shape_type"]
	var base: String = _base_of(type)
	if base.is_empty():
		job.fail(
			Job.INVALID_TYPE,
			"shape_type %s is not a shape class the engine can create" % JSON.stringify(type),
			"shape_type"
		)
		return {}
	var params: String = job.named("shape_params")
	var made: Array = Creating.make(type, request.get("shape_params", {}), job, "shape_type", params)
	var shape: Resource = made[0]
	var values: Dictionary = made[1]
	var saved: String = request.get("save_path", "")
	if saved.is_empty() and not job.failed():
		# Saving.save() proves every value from the file it writes; with no file, the object says.
		Props.check_stored(shape, values.keys(), job, params)
	var scene: SceneText = null
	if not job.failed() and request.has("scene_path"):
		scene = _target(request["scene_path"], request["node_path"], type, base, job)
	if job.failed():
		return {}
	var writes: Array[Dictionary] = []
	if not saved.is_empty():
		writes.append(Saving.stage(shape, saved, job, "save_path", values, params))
	if scene != null and not job.failed():
		# The saved file's reference carries the uid that file is getting.
		var uid: String = writes[0]["uid"] if not saved.is_empty() else ""
		var edited: String = scene.with_resource(_node_key(request["node_path"]), "shape", shape, saved, uid)
		writes.append(
			Saving.stage_bytes(scene.path, scene.checked_bytes(edited, saved, job, "scene_path"), job, "scene_path")
		)
	Saving.commit(writes, job)
	return {"uid": writes[0]["uid"]} if not saved.is_empty() and not job.failed() else {}


## "Shape3D" or "Shape2D" for a listed shape class, "" for anything else.
static func _base_of(type: String) -> String:
	if not ClassDB.class_exists(type) or not ClassDB.can_instantiate(type):
		return ""
	for base: String in ["Shape3D", "Shape2D"]:
		if ClassDB.is_parent_class(type, base):
			return base
	return ""


## The scene, scanned, after checking that `node_path` is a collision node of the shape's kind.
static func _target(scene_path: String, node_path: String, type: String, base: String, job: Job) -> SceneText:
	var scene: SceneText = SceneText.new()
	scene.open(scene_path, job, "scene_path")
	if job.failed():
		return null
	var key: String = _node_key(node_path)
	var node_class: String = scene.node_class(key)
	if node_class.is_empty():
		var known: Array = scene.nodes.keys().slice(0, 12)
		job.fail(
			Job.NODE_NOT_FOUND,
			(
				"node_path %s is not a node of %s (its nodes: %s)"
				% [JSON.stringify(node_path), scene_path, ", ".join(known)]
			),
			"node_path"
		)
		return null
	var wanted: String = "CollisionShape3D" if base == "Shape3D" else "CollisionShape2D"
	if not ClassDB.is_parent_class(node_class, wanted):
		var other: String = "CollisionShape2D" if base == "Shape3D" else "CollisionShape3D"
		var why: String = "%s is a %s shape and goes to a %s" % [type, base.right(2), wanted]
		if ClassDB.is_parent_class(node_class, other):
			why = "%s is a %s shape, but the node is a %s" % [type, base.right(2), node_class]
		job.fail(
			Job.INCOMPATIBLE_NODE,
			"node_path %s (a %s) cannot take this shape: %s" % [JSON.stringify(node_path), node_class, why],
			"node_path"
		)
		return null
	var owner: String = scene.instance_owner(key)
	if not owner.is_empty() and not scene.editable(owner):
		job.fail(
			Job.INCOMPATIBLE_NODE,
			(
				(
					"node_path %s belongs to the instanced scene at %s, whose children %s does not edit; "
					% [JSON.stringify(node_path), owner, scene_path]
				)
				+ "attach the shape in that scene or make its children editable"
			),
			"node_path"
		)
		return null
	return scene


## A node path as the scene text names it: relative to the root, the root itself ".".
static func _node_key(node_path: String) -> String:
	var key: String = node_path.trim_prefix("./").trim_suffix("/")
	return "." if key.is_empty() else key
