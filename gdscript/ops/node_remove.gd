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
	var scene: Array = NodeSetProperties.open(request["scene_path"], job)
	if job.failed():
		return {}
	var text: SceneText = scene[0]
	var nodes: SceneNodes = scene[1]
	var key: String = NodeSetProperties.node_key(request["node_path"])
	var type: String = NodeSetProperties.find(nodes, key, job, "node_path")
	if job.failed():
		return {}
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
		if node_path == key or node_path.begins_with(key + "/"):
			removed.append(node_path)
			expected["nodes"].erase(node_path)
	expected["connections"] = expected["connections"].filter(
		func(connection: Dictionary) -> bool:
			return not (_under(connection["from"], key) or _under(connection["to"], key))
	)
	expected["editable"] = expected["editable"].filter(func(path: String) -> bool: return not _under(path, key))
	text.remove_node(key)
	NodeSetProperties.write(text, expected, job, "scene_path")
	return {"type": type, "removed": removed}


static func _under(node_path: String, key: String) -> bool:
	return node_path == key or node_path.begins_with(key + "/")
