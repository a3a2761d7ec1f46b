extends RefCounted
## scene_read: a scene's nodes as its file stores them, in tree order, read by the engine's own loader
## into a SceneState (values/scene_nodes.gd), with every script it names as a stand-in: nothing of the
## project runs, and the scene is never instantiated.

const Ids = preload("../formats/ids.gd")
const Job = preload("../job.gd")
const NodeSetProperties = preload("node_set_properties.gd")
const Paths = preload("../safety/paths.gd")
const SceneNodes = preload("../values/scene_nodes.gd")


static func run(request: Dictionary, job: Job) -> Dictionary:
	job.etags[request["scene_path"]] = FileAccess.get_sha256(request["scene_path"])
	var nodes: SceneNodes = SceneNodes.new()
	nodes.open(request["scene_path"], job, "scene_path")
	if job.failed():
		return {}
	var key: String = ""
	if request.has("node_path"):
		key = NodeSetProperties.node_key(request["node_path"])
		if not nodes.indices.has(key):
			NodeSetProperties.find(nodes, key, job, "node_path")
			if not job.failed():
				job.fail(
					Job.NODE_NOT_FOUND,
					(
						"node_path %s is a node of a scene %s instances, not stored in %s: read that scene"
						% [JSON.stringify(key), request["scene_path"], request["scene_path"]]
					),
					"node_path"
				)
			return {}
	var uid: String = Ids.uid_of(Paths.real(request["scene_path"]))
	return {
		"uid": uid if not uid.is_empty() else null,
		"nodes": nodes.described(key, request.get("depth", 1)),
		"connections": nodes.connections(key),
	}
