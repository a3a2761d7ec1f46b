extends RefCounted
## node_remove: take a node out of a text scene with everything below it: their sections, the
## overrides of nodes inside them, editable marks, the connections from or to any of them, and the
## sub_resource and ext_resource sections nothing names any more (files/scene_text.gd). A node that
## lives in an instanced or inherited scene is that scene's to remove.

const Job = preload("../job.gd")
const NodeSetProperties = preload("node_set_properties.gd")
const SceneNodes = preload("../values/scene_nodes.gd")
const SceneText = preload("../files/scene_text.gd")


static func run(request: Dictionary, job: Job) -> Dictionary:
	var scene: Array = NodeSetProperties.open(request["scene_path"], request["node_path"], "node_path", job)
	if job.failed():
		return {}
	var text: SceneText = scene[0]
	var nodes: SceneNodes = scene[1]
	var key: String = scene[2]
	var type: String = scene[3]
	var refusal: String = ""
	if key == ".":
		refusal = "the root cannot be removed (a scene has one root); remove the scene's file instead"
	elif (
		not text.nodes.has(key)
		or text.nodes[key]["attrs"].get("type", null) == null and text.nodes[key]["attrs"].get("instance", null) == null
	):
		refusal = (
			"%s belongs to a scene %s instances or inherits (its section here only overrides it): remove it there"
			% [JSON.stringify(key), request["scene_path"]]
		)
	if not refusal.is_empty():
		job.fail(Job.INCOMPATIBLE_NODE, "node_path: " + refusal, "node_path")
		return {}
	var expected: Dictionary = nodes.fingerprint()
	var removed: Array = []
	for node_path: String in expected["nodes"].keys():
		if SceneText.under(node_path, key):
			removed.append(node_path)
			expected["nodes"].erase(node_path)
	expected["connections"] = expected["connections"].filter(
		func(connection: Dictionary) -> bool:
			return not (SceneText.under(connection["from"], key) or SceneText.under(connection["to"], key))
	)
	expected["editable"] = expected["editable"].filter(
		func(path: String) -> bool: return not SceneText.under(path, key)
	)
	text.remove_node(key)
	NodeSetProperties.write(text, expected, job, "scene_path")
	return {"type": type, "removed": removed}
