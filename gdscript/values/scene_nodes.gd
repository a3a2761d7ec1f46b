extends RefCounted
## A scene's nodes as the engine reads them: the PackedScene's SceneState, loaded through the gate
## with every script it names as a stand-in (Job.script_stand_ins), so nothing of the project runs.
## A SceneState is what the engine's loader makes of the file before anything is instantiated: each
## node's stored properties, groups, instance and the scene's connections, in file order. The bridge
## never instantiates it. The scene operations read nodes here, type new values by the node's class
## (a node of that class made here, with the values it gets from its instanced scenes and this file),
## and prove a write by loading the written file here again (fingerprint()).

const Codec = preload("codec.gd")
const Job = preload("../job.gd")
const Props = preload("props.gd")
const Resources = preload("resources.gd")
const Scan = preload("../formats/scan.gd")

## How deep instanced scenes are followed (the engine itself refuses deeper recursion long before).
const _MAX_LEVELS: int = 16

var path: String = ""
var state: SceneState = null
## The PackedScene's bundle (editable instances are found only there).
var bundled: Dictionary = {}
## Node path as the file names it ("." for the root, "A/B") -> the node's index in `state`.
var indices: Dictionary = {}


## Load the scene at res:// `p_path` through the gate (a failure is `job`'s).
func open(p_path: String, job: Job, where: String) -> void:
	job.script_stand_ins = true
	var scene: Resource = Resources.load_fresh(p_path, job, where)
	job.script_stand_ins = false
	if job.failed():
		return
	if not (scene is PackedScene):
		job.fail(Job.LOAD_FAILED, "%s: %s is a %s, not a scene" % [where, p_path, scene.get_class()], where)
		return
	path = p_path
	state = (scene as PackedScene).get_state()
	bundled = scene.get("_bundled")
	indices = index_of_paths(state)


static func index_of_paths(of: SceneState) -> Dictionary:
	var found: Dictionary = {}
	for index: int in of.get_node_count():
		found[key_of(of.get_node_path(index))] = index
	return found


## A node path of a SceneState ("./Floor") as node_path names it ("Floor"; the root ".").
static func key_of(node_path: NodePath) -> String:
	var key: String = str(node_path).trim_prefix("./")
	return "." if key.is_empty() else key


# ----- what a node is --------------------------------------------------------------------------


## The engine class of the node at `key`, looking into instanced and inherited scenes; "" if no
## node is there.
func node_class(key: String) -> String:
	return _class_in(state, indices, key, 0)


## Whether a node is at `key`, in this file or in a scene it instances.
func has_node(key: String) -> bool:
	return not node_class(key).is_empty()


## The values the node at `key` gets from the scenes this one instances (its base values), name ->
## value; {} for a node of this file's own.
func base_values(key: String) -> Dictionary:
	var inside: Array = _instance_holding(state, indices, key)
	return {} if inside.is_empty() else _values_in(inside[0], inside[1], 0)


## The values this file stores for the node at `key`, name -> value ({} when it has no section).
func own_values(key: String) -> Dictionary:
	return _own(state, indices.get(key, -1))


## The instanced scene's path for an instance node at `key`, or "".
func instance_of(key: String) -> String:
	var index: int = indices.get(key, -1)
	if index < 0:
		return ""
	if state.is_node_instance_placeholder(index):
		return state.get_node_instance_placeholder(index)
	var scene: PackedScene = state.get_node_instance(index)
	return scene.resource_path if scene != null else ""


## The nodes between the root and `key` (and `key` itself) that are instances, nearest the root
## first: those whose children `key`'s edit reaches into.
func instances_above(key: String) -> PackedStringArray:
	var found: PackedStringArray = []
	var parts: PackedStringArray = key.split("/") if key != "." else PackedStringArray()
	for cut: int in range(1, parts.size()):
		var ancestor: String = "/".join(parts.slice(0, cut))
		if _is_instance_root(ancestor):
			found.append(ancestor)
	return found


## Whether this scene is `scene_path`, or instances it at any depth.
func includes(scene_path: String, of: SceneState = null, level: int = 0) -> bool:
	if of == null:
		if path == scene_path:
			return true
		of = state
	if level > _MAX_LEVELS:
		return true
	# An inherited scene's root answers get_node_instance() with its base scene.
	for index: int in of.get_node_count():
		var scene: PackedScene = of.get_node_instance(index)
		if scene != null and (scene.resource_path == scene_path or includes(scene_path, scene.get_state(), level + 1)):
			return true
	return false


## Whether the instance at `key` lets this file override the nodes inside it.
func editable(key: String) -> bool:
	return NodePath(key) in bundled.get("editable_instances", [])


## The children of `key` as this file and the scenes it instances have them, by name.
func children(key: String) -> PackedStringArray:
	var names: PackedStringArray = []
	var inside: Array = _instance_holding(state, indices, key)
	if not inside.is_empty():
		var sub: SceneState = inside[0]
		for name: String in _children_in(sub, inside[1]):
			names.append(name)
	for name: String in _children_in(state, key):
		if name not in names:
			names.append(name)
	return names


func _is_instance_root(key: String) -> bool:
	var index: int = indices.get(key, -1)
	if index >= 0:
		return state.get_node_instance(index) != null or state.is_node_instance_placeholder(index)
	var inside: Array = _instance_holding(state, indices, key)
	if inside.is_empty():
		return false
	var sub: SceneState = inside[0]
	var sub_index: int = index_of_paths(sub).get(inside[1], -1)
	return sub_index >= 0 and sub.get_node_instance(sub_index) != null


static func _children_in(of: SceneState, key: String) -> PackedStringArray:
	var names: PackedStringArray = []
	for index: int in of.get_node_count():
		if key_of(of.get_node_path(index)) != "." and key_of(of.get_node_path(index, true)) == key:
			names.append(str(of.get_node_name(index)))
	return names


static func _class_in(of: SceneState, of_indices: Dictionary, key: String, level: int) -> String:
	if level > _MAX_LEVELS:
		return ""
	var index: int = of_indices.get(key, -1)
	if index >= 0 and not str(of.get_node_type(index)).is_empty():
		return of.get_node_type(index)
	var inside: Array = _instance_holding(of, of_indices, key)
	if inside.is_empty():
		return ""
	return _class_in(inside[0], index_of_paths(inside[0]), inside[1], level + 1)


## [the SceneState of the scene instanced at `key` or at its nearest instanced ancestor, `key`'s
## path inside it], or [] when no instance holds it.
static func _instance_holding(of: SceneState, of_indices: Dictionary, key: String) -> Array:
	var parts: PackedStringArray = key.split("/") if key != "." else PackedStringArray()
	for cut: int in range(parts.size(), -1, -1):
		var ancestor: String = "/".join(parts.slice(0, cut)) if cut > 0 else "."
		var index: int = of_indices.get(ancestor, -1)
		if index < 0:
			continue
		# An inherited scene's root answers with its base scene.
		var scene: PackedScene = of.get_node_instance(index)
		if scene != null:
			return [scene.get_state(), _rest(parts, cut)]
	return []


static func _rest(parts: PackedStringArray, cut: int) -> String:
	return "/".join(parts.slice(cut)) if cut < parts.size() else "."


## Every value the node at `key` of `of` has from that scene and those below it.
static func _values_in(of: SceneState, key: String, level: int) -> Dictionary:
	var of_indices: Dictionary = index_of_paths(of)
	var values: Dictionary = {}
	var inside: Array = _instance_holding(of, of_indices, key)
	if not inside.is_empty() and level < _MAX_LEVELS:
		values = _values_in(inside[0], inside[1], level + 1)
	values.merge(_own(of, of_indices.get(key, -1)), true)
	return values


static func _own(of: SceneState, index: int) -> Dictionary:
	var values: Dictionary = {}
	if index < 0:
		return values
	for i: int in of.get_node_property_count(index):
		values[str(of.get_node_property_name(index, i))] = of.get_node_property_value(index, i)
	return values


# ----- a node to type values by ----------------------------------------------------------------


## A node of the class at `key` holding the values it has now (from its instanced scenes, then this
## file): a new property's type and default are the node's, and a property that exists only once
## another is set (a mesh's surface_material_override/N) exists. Its script is not set, unless the
## request allows scripts and the script loaded (then the script's members exist too). null for a
## class that is not a node. The caller frees it.
static func stand_in_node(type: String, values: Dictionary, job: Job) -> Node:
	if not ClassDB.class_exists(type) or not ClassDB.can_instantiate(type) or not ClassDB.is_parent_class(type, "Node"):
		return null
	var node: Node = ClassDB.instantiate(type)
	var script: Variant = values.get("script")
	if job.allow_scripts and script is Script:
		node.set_script(script)
	# Only what the engine stores for the class, and no path it would act on (a FileDialog changes
	# the process's folder to the current_path set on it): the file's other names are not typed by it.
	var known: Dictionary = Props.infos(node)
	for name: String in values:
		if not known.has(name):
			known = Props.infos(node)  # a property that exists once another is set (a mesh's surfaces)
		var info: Dictionary = known.get(name, {})
		if name == "script" or info.is_empty() or info["usage"] & PROPERTY_USAGE_STORAGE == 0:
			continue
		if info["type"] == TYPE_STRING and info["hint"] in Scan.PATH_HINTS:
			continue
		node.set(name, values[name])
	return node


## Each stored property of `node` (those the engine saves), name -> value.
static func stored_values(node: Object) -> Dictionary:
	var values: Dictionary = {}
	for info: Dictionary in node.get_property_list():
		if info["usage"] & PROPERTY_USAGE_STORAGE != 0 and info["name"] not in Props.FORBIDDEN:
			values[info["name"]] = node.get(info["name"])
	return values


# ----- reading ---------------------------------------------------------------------------------


## The nodes at and below `key` ("" for all), as scene_read replies: {path, name, type, instance,
## script, groups, properties} in file order.
func described(key: String, depth: int) -> Array:
	var out: Array = []
	for index: int in state.get_node_count():
		var node_path: String = key_of(state.get_node_path(index))
		if not (key.is_empty() or key == "." or node_path == key or node_path.begins_with(key + "/")):
			continue
		var values: Dictionary = _own(state, index)
		var script: Variant = values.get("script")
		values.erase("script")
		var properties: Dictionary = {}
		for name: String in values:
			properties[name] = Codec.encode(values[name], depth, {})
		var groups: Array = []
		for group: StringName in state.get_node_groups(index):
			groups.append(str(group))
		var instance: String = instance_of(node_path)
		(
			out
			. append(
				{
					"path": node_path,
					"name": str(state.get_node_name(index)),
					"type": node_class(node_path),
					"instance": instance if not instance.is_empty() else null,
					"script": script_path(script),
					"groups": groups,
					"properties": properties,
				}
			)
		)
	return out


## The scene's signal connections touching the nodes at and below `key` ("" for all).
func connections(key: String) -> Array:
	var out: Array = []
	for index: int in state.get_connection_count():
		var from: String = key_of(state.get_connection_source(index))
		var to: String = key_of(state.get_connection_target(index))
		if not (key.is_empty() or key == "." or _under(from, key) or _under(to, key)):
			continue
		var connection: Dictionary = {
			"signal": str(state.get_connection_signal(index)),
			"from": from,
			"to": to,
			"method": str(state.get_connection_method(index)),
			"flags": state.get_connection_flags(index),
		}
		if not state.get_connection_binds(index).is_empty():
			connection["binds"] = Codec.encode(state.get_connection_binds(index), 0)
		if state.get_connection_unbinds(index) != 0:
			connection["unbinds"] = state.get_connection_unbinds(index)
		out.append(connection)
	return out


static func _under(node_path: String, key: String) -> bool:
	return node_path == key or node_path.begins_with(key + "/")


## The res:// path of a node's script value (a stand-in names it), or null.
static func script_path(script: Variant) -> Variant:
	if not (script is Resource):
		return null
	var resource: Resource = script
	return resource.resource_path if resource is Script else resource.resource_name


# ----- proving ---------------------------------------------------------------------------------


## What the file says of every node, in a form two loads of it compare equal by: node path ->
## {type, instance, groups, values (name -> comparable())}, and the connections and editable
## instances. Ids, unique ids and the order of lines are not in it: those an edit may change.
func fingerprint() -> Dictionary:
	var nodes: Dictionary = {}
	var memo: Dictionary = {}
	for index: int in state.get_node_count():
		var values: Dictionary = {}
		var own: Dictionary = _own(state, index)
		for name: String in own:
			values[name] = comparable(own[name], 0, memo)
		var groups: Array = []
		for group: StringName in state.get_node_groups(index):
			groups.append(str(group))
		var node_path: String = key_of(state.get_node_path(index))
		nodes[node_path] = {
			"type": str(state.get_node_type(index)),
			"instance": instance_of(node_path),
			"groups": groups,
			"values": values,
		}
	var editable_paths: Array = []
	for editable_path: NodePath in bundled.get("editable_instances", []):
		editable_paths.append(str(editable_path))
	editable_paths.sort()
	return {"nodes": nodes, "connections": connections(""), "editable": editable_paths}


## A value as it compares across two loads: a resource of a file of its own by its path, an
## embedded one by its class and stored values (its path names the file it was loaded from). `memo`
## keeps each resource's answer (a scene's nodes often share one sub-resource).
static func comparable(value: Variant, level: int = 0, memo: Dictionary = {}) -> Variant:
	if value is Resource:
		var id: int = (value as Object).get_instance_id()
		if not memo.has(id):
			memo[id] = _resource_comparable(value, level, memo)
		return memo[id]
	if typeof(value) == TYPE_ARRAY:
		return (value as Array).map(func(item: Variant) -> Variant: return comparable(item, level + 1, memo))
	if typeof(value) == TYPE_DICTIONARY:
		var out: Dictionary = {}
		for entry: Variant in value:
			out[comparable(entry, level + 1, memo)] = comparable(value[entry], level + 1, memo)
		return out
	return var_to_str(value)


static func _resource_comparable(resource: Resource, level: int, memo: Dictionary) -> Variant:
	if resource is Script or not (resource.resource_path.is_empty() or resource.resource_path.contains("::")):
		return "file:" + resource.resource_path
	if (
		resource.resource_path.is_empty()
		and not resource.resource_name.is_empty()
		and resource.get_class() == "Resource"
	):
		return "script:" + resource.resource_name
	var values: Dictionary = {}
	if level < _MAX_LEVELS:
		var stored: Dictionary = stored_values(resource)
		for name: String in stored:
			if not Props.same(stored[name], Props.default_of(resource, name)):
				values[name] = comparable(stored[name], level + 1, memo)
	return {"class": resource.get_class(), "values": values}


## Whether two values of a property are the same as the scene stores them (two loads of one file
## give two objects for each resource: those compare by what they are).
static func alike(a: Variant, b: Variant) -> bool:
	if a is Object or b is Object:
		var left: Variant = comparable(a)
		var right: Variant = comparable(b)
		return typeof(left) == typeof(right) and left == right
	return Props.same(a, b)


## Fail `job` unless the scene written (`after`) holds exactly `expected` (a fingerprint).
static func prove(after: Dictionary, expected: Dictionary, job: Job, where: String, scene_path: String) -> void:
	if after == expected:
		return
	var what: String = "the scene's connections or editable instances"
	for key: String in expected["nodes"].keys() + after["nodes"].keys():
		if expected["nodes"].get(key) != after["nodes"].get(key):
			what = "node %s" % JSON.stringify(key)
			break
	job.fail(
		Job.SAVE_FAILED,
		(
			"%s: the edited %s, loaded back, does not hold what was meant (%s differs); nothing was written"
			% [where, scene_path, what]
		),
		where
	)
