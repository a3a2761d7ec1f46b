extends RefCounted
## node_add: add a node to a text scene, of an engine class or an instance of another scene, with its
## properties, as the editor writes one: a section after its parent's last child (or before the child
## at `index`), a unique_id where the scene's nodes have them (Godot 4.6), and only the values that
## differ from the class's defaults (or the instanced scene's).

const Job = preload("../job.gd")
const NodeSetProperties = preload("node_set_properties.gd")
const Props = preload("../values/props.gd")
const SceneNodes = preload("../values/scene_nodes.gd")
const SceneText = preload("../files/scene_text.gd")

## What Godot refuses in a node's name (String::get_invalid_node_name_characters()).
const _NOT_IN_NAMES: Array[String] = [".", ":", "@", "/", '"', "%"]


static func run(request: Dictionary, job: Job) -> Dictionary:
	var scene: Array = NodeSetProperties.open(request["scene_path"], request["parent_path"], "parent_path", job)
	if job.failed():
		return {}
	var text: SceneText = scene[0]
	var nodes: SceneNodes = scene[1]
	var parent: String = scene[2]
	var name: String = request["name"]
	_check_name(name, nodes.children(parent), parent, job)
	var index: int = request.get("index", -1)
	if index >= 0 and not job.failed() and (not text.nodes.has(parent) or not nodes.instance_of(parent).is_empty()):
		(
			job
			. fail(
				Job.INVALID_VALUE,
				(
					"index: the children of %s are partly its instanced scene's, so this scene does not order them; leave index out"
					% JSON.stringify(parent)
				),
				"index"
			)
		)
	var made: Array = _kind(request, text, job)
	if job.failed():
		return {}
	var key: String = name if parent == "." else "%s/%s" % [parent, name]
	var expected: Dictionary = nodes.fingerprint()
	var made_editable: PackedStringArray = NodeSetProperties.reach_into(text, nodes, key, expected)
	var type: String = made[0]
	var instance: SceneNodes = made[1]
	var out: Array = [text, {}, expected, []]
	expected["nodes"][key] = {
		"type": "" if instance != null else type,
		"instance": instance.path if instance != null else "",
		"groups": [],
		"values": {},
	}
	var asked: Dictionary = request.get("properties", {})
	var had: Array = [instance.base_values(".").merged(instance.own_values("."), true) if instance != null else {}, {}]
	NodeSetProperties.set_values(had, key, type, asked, out, job, "properties")
	if job.failed():
		return {}
	var attributes: String = 'name="%s"' % name + (' type="%s"' % type if instance == null else "")
	attributes += ' parent="%s"' % parent
	var unique_id: int = text.new_unique_id()
	if unique_id != 0:
		attributes += " unique_id=%d" % unique_id
	if instance != null:
		attributes += " instance=%s" % text.reference_to_file(instance.path, "PackedScene")
	var lines: Dictionary = out[1]
	for line_name: String in lines.keys():
		if lines[line_name] == null:
			lines.erase(line_name)
	text.add_node(parent, attributes, lines, index)
	NodeSetProperties.write(text, expected, job, "scene_path")
	var reply: Dictionary = {"node_path": key, "type": type}
	if not made_editable.is_empty():
		reply["made_editable"] = made_editable
	return reply


static func _check_name(name: String, taken: PackedStringArray, parent: String, job: Job) -> void:
	if job.failed():
		return
	var wrong: Array = _NOT_IN_NAMES.filter(func(character: String) -> bool: return name.contains(character))
	if name.strip_edges().is_empty() or not wrong.is_empty():
		job.fail(
			Job.INVALID_VALUE,
			(
				"name %s is not a node name Godot takes (no %s, not empty)"
				% [JSON.stringify(name), " ".join(_NOT_IN_NAMES)]
			),
			"name"
		)
	elif name in taken:
		job.fail(
			Job.INVALID_VALUE,
			(
				"name %s is taken: %s already has a child of that name (nodes are not renamed for you)"
				% [JSON.stringify(name), JSON.stringify(parent)]
			),
			"name"
		)


## [the new node's class, the instanced scene (null for a node of a class)].
static func _kind(request: Dictionary, text: SceneText, job: Job) -> Array:
	if request.has("instance"):
		var instance: SceneNodes = SceneNodes.new()
		instance.open(request["instance"], job, "instance")
		if job.failed():
			return []
		if instance.includes(text.path):
			job.fail(
				Job.INVALID_VALUE,
				"instance: %s is or instances %s; a scene cannot hold itself" % [request["instance"], text.path],
				"instance"
			)
			return []
		return [instance.node_class("."), instance]
	var type: String = request.get("type", "")
	if not ClassDB.class_exists(type) or not ClassDB.is_parent_class(type, "Node") or not ClassDB.can_instantiate(type):
		job.fail(
			Job.INVALID_TYPE,
			(
				"type %s is not a node class the engine makes%s"
				% [JSON.stringify(type), Props.suggest_class(type, _node_classes())]
			),
			"type"
		)
		return []
	return [type, null]


static func _node_classes() -> Array:
	var classes: Array = ["Node"]
	for type: String in ClassDB.get_inheriters_from_class("Node"):
		if ClassDB.can_instantiate(type):
			classes.append(type)
	return classes
