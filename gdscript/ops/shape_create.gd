extends RefCounted
## shape_create: make a collision shape, then save it, attach it to a scene node, both, or neither.
## With both, the scene references the saved file, and the two files are written as one
## (Saving.commit): both or neither.

const Codec = preload("../values/codec.gd")
const Gate = preload("../safety/gate.gd")
const Job = preload("../job.gd")
const Props = preload("../values/props.gd")
const Saving = preload("../files/saving.gd")
## node_set_properties.gd, compiled for the first request that attaches a shape to a node, not
## preloaded: it and the scene machinery it brings cost an engine ~65 ms to compile (of ~80 for
## this operation, 4.6.3, 2-core VM), which a shape saved to a file alone never needs.
const _NODE_EDITS: String = "ops/node_set_properties.gd"


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
	var made: Array = Codec.make(type, request.get("shape_params", {}), job, "shape_type", params)
	var shape: Resource = made[0]
	var values: Dictionary = made[1]
	var saved: String = request.get("save_path", "")
	if saved.is_empty() and not job.failed():
		# Saving.save() proves every value from the file it writes; with no file, the object says.
		Props.check_stored(shape, values.keys(), job, params)
	var scene: Array = []
	var node_edits: GDScript = null
	if not job.failed() and request.has("scene_path"):
		node_edits = _node_edits(job)
	if node_edits != null:
		scene = _target(node_edits, request["scene_path"], request["node_path"], type, base, job)
	if job.failed():
		return {}
	var writes: Array[Dictionary] = []
	if not saved.is_empty():
		writes.append(Saving.stage(shape, saved, job, "save_path", values, params))
	if not scene.is_empty() and not job.failed():
		_attach(node_edits, scene, shape, saved, writes, job)
	Saving.commit(writes, job)
	if job.failed():
		return {}
	return {"type": type, "uid": writes[0]["uid"]} if not saved.is_empty() else {"type": type}


## node_set_properties.gd (see _NODE_EDITS); null, with `job` failed, where it does not load.
static func _node_edits(job: Job) -> GDScript:
	var script: GDScript = Gate.own_script(_NODE_EDITS)
	if script == null:
		job.fail(
			Job.INVALID_REQUEST, "the bridge's %s did not load (is its install whole?)" % _NODE_EDITS, "scene_path"
		)
	return script


## Put `shape` on the node of `scene` (`node_edits`.open()'s) through node_set_properties' edit:
## by reference to the file `saved` (staged in `writes[0]`, whose uid it carries), or embedded; the
## scene's staged write joins `writes`.
static func _attach(
	node_edits: GDScript, scene: Array, shape: Resource, saved: String, writes: Array[Dictionary], job: Job
) -> void:
	var text: Variant = scene[0]  # a SceneText (files/scene_text.gd)
	var key: String = scene[2]
	var out: Array = node_edits.edit(scene, key, scene[3], {"shape": shape}, job, "shape_params")
	if job.failed():
		return
	if not saved.is_empty():
		out[1]["shape"] = text.reference_to_file(saved, shape.get_class(), writes[0]["uid"])
		out[2]["nodes"][key]["values"]["shape"] = "file:" + saved
	text.set_lines(key, out[1], out[3])
	var staged: Dictionary = node_edits.stage(text, out[2], job, "scene_path", writes)
	if not staged.is_empty():
		writes.append(staged)


## "Shape3D" or "Shape2D" for a listed shape class, "" for anything else.
static func _base_of(type: String) -> String:
	if not ClassDB.class_exists(type) or not ClassDB.can_instantiate(type):
		return ""
	for base: String in ["Shape3D", "Shape2D"]:
		if ClassDB.is_parent_class(type, base):
			return base
	return ""


## `node_edits`.open()'s [text, nodes, key, class], after checking that `node_path` is a collision
## node of the shape's kind; [] once `job` failed.
static func _target(
	node_edits: GDScript, scene_path: String, node_path: String, type: String, base: String, job: Job
) -> Array:
	var scene: Array = node_edits.open(scene_path, node_path, "node_path", job)
	if job.failed():
		return []
	var node_class: String = scene[3]
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
		return []
	return scene
