extends RefCounted
## node_set_properties: set (or clear, with null) properties of a node of a text scene, as the editor
## would store them, by editing the scene's text (files/scene_text.gd): only the node's lines, the
## ext_resource and sub_resource sections they need or no longer need, and the editable mark of an
## instance whose child it is. The values are typed by a node of the node's class holding what it has
## now (values/scene_nodes.gd); a value equal to what the node has without this file's line (its
## class default, or its instanced scene's value) is stored as no line, as the editor stores it.
## The other scene operations (node_add, shape_create) edit nodes through the functions here.

const Codec = preload("../values/codec.gd")
const Job = preload("../job.gd")
const Props = preload("../values/props.gd")
const Saving = preload("../files/saving.gd")
const SceneNodes = preload("../values/scene_nodes.gd")
const SceneText = preload("../files/scene_text.gd")
const AtomicWrite = preload("../files/atomic_write.gd")
const Paths = preload("../safety/paths.gd")


static func run(request: Dictionary, job: Job) -> Dictionary:
	var scene: Array = open(request["scene_path"], request["node_path"], "node_path", job)
	if job.failed():
		return {}
	var text: SceneText = scene[0]
	var key: String = scene[2]
	var type: String = scene[3]
	var out: Array = edit(scene, key, type, request["properties"], job, "properties")
	if job.failed():
		return {}
	var changed: Array = out[4]
	var made_editable: PackedStringArray = out[5]
	if not changed.is_empty():
		text.set_lines(key, out[1], out[3])
		write(text, out[2], job, "scene_path")
	var reply: Dictionary = {"type": type, "changed": changed}
	if not made_editable.is_empty() and not changed.is_empty():
		reply["made_editable"] = made_editable
	return reply


## Set `asked` on the node at `key` (of class `type`) of `scene` ([text, nodes]), as set_values() does,
## marking the instances it lies in editable: [text, lines, expected, order] as set_values() fills
## them, then the stored properties that change and the instances newly marked. The lines are the
## caller's to write (text.set_lines()), once it has made any of its own.
static func edit(scene: Array, key: String, type: String, asked: Dictionary, job: Job, member: String) -> Array:
	var text: SceneText = scene[0]
	var nodes: SceneNodes = scene[1]
	var expected: Dictionary = nodes.fingerprint()
	var made_editable: PackedStringArray = reach_into(text, nodes, key, expected)
	var out: Array = [text, {}, expected, []]
	var had: Array = [nodes.base_values(key), nodes.own_values(key)]
	out.append(set_values(had, key, type, asked, out, job, member))
	out.append(made_editable)
	return out


## [the scene's text, its nodes as the engine reads them, the node `node_path` names (a key, as
## node_key() gives it), that node's class], or [] once `job` failed (also when there is no such node:
## find(); `member` is the request member that names it).
static func open(scene_path: String, node_path: String, member: String, job: Job) -> Array:
	var text: SceneText = SceneText.new()
	text.open(scene_path, job, "scene_path")
	if job.failed():
		return []
	var nodes: SceneNodes = SceneNodes.new()
	nodes.open(scene_path, job, "scene_path")
	if job.failed():
		return []
	var key: String = node_key(node_path)
	var type: String = find(nodes, key, job, member)
	return [text, nodes, key, type] if not job.failed() else []


## A node path as the scene text names it: relative to the root, the root itself ".".
static func node_key(node_path: String) -> String:
	var key: String = node_path.trim_prefix("./").trim_suffix("/")
	return "." if key.is_empty() else key


## The class of the node at `key`; fails `job` with the nearest paths when there is none.
static func find(nodes: SceneNodes, key: String, job: Job, member: String) -> String:
	var type: String = nodes.node_class(key)
	if not type.is_empty():
		return type
	var parent: String = key
	while parent != "." and not nodes.has_node(parent):
		parent = parent.get_base_dir() if parent.contains("/") else "."
	var under: PackedStringArray = []
	for child: String in nodes.children(parent):
		under.append(child if parent == "." else "%s/%s" % [parent, child])
	job.fail(
		Job.NODE_NOT_FOUND,
		(
			"%s %s is not a node of %s%s (the children of %s: %s)"
			% [
				job.named(member),
				JSON.stringify(key),
				nodes.path,
				Props.suggest(key, nodes.indices.keys() + Array(under)),
				JSON.stringify(parent),
				", ".join(under.slice(0, 12)) if not under.is_empty() else "none"
			]
		),
		member
	)
	return ""


## Mark each instance above `key` editable (the editor edits a node inside an instance only once its
## children are), noting it in `expected`; the instances newly marked.
static func reach_into(text: SceneText, nodes: SceneNodes, key: String, expected: Dictionary) -> PackedStringArray:
	var marked: PackedStringArray = []
	for instance: String in nodes.instances_above(key):
		if not nodes.editable(instance) and instance != ".":
			text.mark_editable(instance)
			marked.append(instance)
			expected["editable"].append(instance)
	expected["editable"].sort()
	return marked


## Set `asked` (JSON values by name; null: back to the default) on the node at `key`, of class `type`,
## which has values `had`: [from the scenes it instances (its base values), from this file]. `out`
## is [the scene's text, which gets the sections the values need; the lines to write (name -> value
## text, or null to take the line out), filled here; the expected fingerprint, which gets the node's
## values after; the class's stored properties in the engine's order, filled here]. Return the
## stored properties that change, in the engine's order; [] once `job` failed.
static func set_values(
	had: Array, key: String, type: String, asked: Dictionary, out: Array, job: Job, member: String
) -> Array:
	var node: Node = SceneNodes.stand_in_node(type, had[0].merged(had[1], true), job)
	if node == null:
		job.fail(Job.INCOMPATIBLE_NODE, "%s: %s is not a node class the engine makes" % [member, type], member)
		return []
	var changed: Array = _set_on(node, key, had, asked, out, job, member)
	node.free()
	return changed


## set_values() on `node`, the stand-in; `had` is [its base values, this file's values].
static func _set_on(
	node: Node, key: String, had: Array, asked: Dictionary, out: Array, job: Job, member: String
) -> Array:
	var base: Dictionary = had[0]
	var own: Dictionary = had[1]
	var text: SceneText = out[0]
	var lines: Dictionary = out[1]
	var known: Dictionary = Props.infos(node)
	var before: Dictionary = SceneNodes.stored_values(node)
	var asked_before: Dictionary = {}
	for name: Variant in asked:
		asked_before[name] = node.get(str(name))
	var to_set: Dictionary = {}
	for name: Variant in asked:
		if typeof(name) == TYPE_STRING and not known.has(name) and own.has("script") and not job.allow_scripts:
			job.fail(
				Job.UNSAFE_RESOURCE,
				(
					(
						"%s: %s has no property %s%s; if it is one of its script's (%s), typing it means loading"
						% [
							member,
							node.get_class(),
							JSON.stringify(name),
							Props.suggest(name, known.keys()),
							SceneNodes.script_path(own["script"])
						]
					)
					+ " the script, which runs its code: give allow_scripts: true"
				),
				member
			)
			return []
		if asked[name] is Resource:
			# A resource the operation made (shape_create's shape), not a value of the request.
			node.set(name, asked[name])
		elif asked[name] != null:
			to_set[name] = asked[name]
		elif name in Props.FORBIDDEN:
			job.fail(Job.FORBIDDEN_PROPERTY, "%s may not set %s: it would attach code" % [member, name], member)
			return []
		elif not known.has(name):
			job.fail(
				Job.UNKNOWN_PROPERTY,
				"%s has no property %s%s" % [node.get_class(), JSON.stringify(name), Props.suggest(name, known.keys())],
				member
			)
			return []
		else:
			node.set(name, base.get(name, Props.default_of(node, name)))
	Codec.apply(node, to_set, job, member)
	if job.failed():
		return []
	var after: Dictionary = SceneNodes.stored_values(node)
	var changed: Array = []
	for name: String in after:
		var cleared: bool = asked.has(name) and asked[name] == null and own.has(name)
		if SceneNodes.alike(before.get(name), after[name]) and not cleared:
			continue
		var default: Variant = base[name] if base.has(name) else Props.default_of(node, name)
		if SceneNodes.alike(after[name], default):
			if own.has(name):
				lines[name] = null
				changed.append(name)
			continue
		var line: String = text.value_text(after[name])
		if line.is_empty():
			job.fail(Job.INVALID_VALUE, "%s.%s: the bridge does not write this value" % [member, name], member)
			return []
		lines[name] = line
		changed.append(name)
	for name: String in asked:
		# A property the engine does not save (position) counts through those it changes (transform).
		var moved: bool = not SceneNodes.alike(asked_before[name], node.get(name))
		if not after.has(name) and moved and changed.is_empty():
			job.fail(
				Job.INVALID_VALUE,
				"%s.%s: %s does not save %s with the scene" % [member, name, node.get_class(), name],
				member
			)
			return []
	_expect(out[2], key, lines, after)
	out[3].append_array(after.keys())
	return changed


## Note in `expected` the values of the node at `key` once `lines` are written.
static func _expect(expected: Dictionary, key: String, lines: Dictionary, after: Dictionary) -> void:
	if not expected["nodes"].has(key):
		if lines.values().all(func(line: Variant) -> bool: return line == null):
			return
		expected["nodes"][key] = {"type": "", "instance": "", "groups": [], "values": {}}
	expected["nodes"][key].get_or_add("values", {})
	var values: Dictionary = expected["nodes"][key]["values"]
	for name: String in lines:
		if lines[name] == null:
			values.erase(name)
		else:
			values[name] = SceneNodes.comparable(after[name])


## Write the edited scene once it is proven (stage()).
static func write(text: SceneText, expected: Dictionary, job: Job, where: String) -> void:
	var writes: Array[Dictionary] = []
	var staged: Dictionary = stage(text, expected, job, where)
	if not staged.is_empty():
		writes.append(staged)
	Saving.commit(writes, job)


## Stage the edited scene beside it once its text parses and gained nothing that runs, and prove it:
## loaded back through the gate, it holds `expected` (a fingerprint of what was meant) and nothing
## else. A file it names that `others` (staged writes of the same request) is writing is loaded from
## its staged copy for the proof. The staged write, or {} once `job` failed.
static func stage(
	text: SceneText, expected: Dictionary, job: Job, where: String, others: Array[Dictionary] = []
) -> Dictionary:
	var bytes: PackedByteArray = text.checked_bytes(text.edited(), job, where)
	if job.failed():
		return {}
	var content: String = bytes.get_string_from_utf8()
	for other: Dictionary in others:
		var copy: String = Paths.to_res(other["temp"])
		content = _ext_moved(content, other["path"], copy)
		expected = _renamed(expected, "file:" + other["path"], "file:" + copy)
	# The proof reads the staged file itself (a second temp file would be one a kill could leave
	# behind, which neither the journal nor the sweep knows): with the files `others` write named by
	# their staged copies first, then, once proven, the scene's own bytes.
	var proof: PackedByteArray = content.to_utf8_buffer()
	var staged: Dictionary = Saving.stage_bytes(text.path, proof, job, where)
	if job.failed():
		return {}
	var written: SceneNodes = SceneNodes.new()
	written.open(Paths.to_res(staged["temp"]), job, where)
	if not job.failed():
		SceneNodes.prove(written.fingerprint(), expected, job, where, text.path)
	if not job.failed() and proof != bytes:
		var err: Error = AtomicWrite.rewrite(staged["temp"], bytes)
		if err == OK and FileAccess.get_file_as_bytes(staged["temp"]) != bytes:
			err = ERR_FILE_CANT_WRITE
		if err != OK:
			job.fail(
				Job.SAVE_FAILED,
				"%s: %s could not be written (%s); nothing was written" % [where, text.path, Job.error_name(err)],
				where
			)
	if job.failed():
		Saving.commit([staged], job)
		return {}
	return staged


## `value` with every string equal to `from` made `to`, inside dictionaries and arrays too.
static func _renamed(value: Variant, from: String, to: String) -> Variant:
	if typeof(value) == TYPE_DICTIONARY:
		var out: Dictionary = {}
		for key: Variant in value:
			out[key] = _renamed(value[key], from, to)
		return out
	if typeof(value) == TYPE_ARRAY:
		return (value as Array).map(func(item: Variant) -> Variant: return _renamed(item, from, to))
	return to if typeof(value) == TYPE_STRING and value == from else value


## `content` with its ext_resource line for `path` pointing at `copy` (and no uid, which names `path`).
static func _ext_moved(content: String, path: String, copy: String) -> String:
	var lines: PackedStringArray = content.split("\n")
	for i: int in lines.size():
		if lines[i].begins_with("[ext_resource ") and lines[i].contains(' path="%s"' % path):
			var uid: int = lines[i].find(' uid="')
			var line: String = lines[i]
			if uid >= 0:
				line = line.substr(0, uid) + line.substr(line.find('"', uid + 6) + 1)
			lines[i] = line.replace(' path="%s"' % path, ' path="%s"' % copy)
	return "\n".join(lines)
