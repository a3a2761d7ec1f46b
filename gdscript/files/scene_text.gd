extends RefCounted
## Edit one node property of a text scene (.tscn) by editing its text.
##
## Why text and not PackedScene: loading a scene loads every script it references, and GDScript runs
## a script's static initialisers when the script loads; instantiating it would run `_init` too, and
## packing it again rewrites ids, drops unknown content and reorders sections. Editing the text runs
## no project code at all and leaves every byte outside the edited lines as it was: nodes, their
## order, properties, groups, connections, instanced sub-scenes, unique ids, editable children and
## the scene's uid. Sections and properties are found by the same reader of the format that the load
## gate uses (text_format.gd), so a string or a comment that looks like a section is never taken for one.

const Ids = preload("../formats/ids.gd")
const Job = preload("../job.gd")
const Scan = preload("../formats/scan.gd")
const TextFormat = preload("../formats/text_format.gd")

static var _load_steps: RegEx = RegEx.create_from_string(" load_steps=(\\d+)")
static var _reference: RegEx = RegEx.create_from_string('^(Ext|Sub)Resource\\("([^"]*)"\\)$')

## The scene's path, text and sections, each {kind, attrs, start, body_start, end, props}.
var path: String = ""
var text: String = ""
var sections: Array[Dictionary] = []
## Node path ("." for the root) -> its node section.
var nodes: Dictionary = {}


## Read and scan the scene at res:// `p_path`; `where` names the request member for errors.
func open(p_path: String, job: Job, where: String) -> void:
	path = p_path
	if not FileAccess.file_exists(path):
		job.fail(Job.NOT_FOUND, "%s: %s does not exist" % [where, path], where)
		return
	text = FileAccess.get_file_as_string(path)
	if not text.begins_with("[gd_scene"):
		job.fail(
			Job.LOAD_FAILED, "%s: %s is not a text scene (it does not start with [gd_scene)" % [where, path], where
		)
		return
	sections = scan(text)
	nodes = node_map(sections)


## Split `source` into sections as the engine's parser reads them (text_format.gd's outline);
## property lines are recorded per section as name -> [start, end]. Offsets count characters of
## `source`. A scene the reader cannot follow to its end gives what was read before it stopped.
static func scan(source: String) -> Array[Dictionary]:
	var bytes: PackedByteArray = source.to_utf8_buffer()
	var found: Array[Dictionary] = TextFormat.new(bytes, Scan.new()).outline()
	if bytes.size() != source.length():
		_to_characters(bytes, found)
	return found


## Turn the byte offsets of `sections` into character offsets (for text that is not all ASCII).
static func _to_characters(bytes: PackedByteArray, sections: Array[Dictionary]) -> void:
	var offsets: Array[Array] = []
	for section: Dictionary in sections:
		for key: String in ["start", "body_start", "end"]:
			offsets.append([section[key], section, key])
		for name: String in section["props"]:
			offsets.append([section["props"][name][0], section["props"][name], 0])
			offsets.append([section["props"][name][1], section["props"][name], 1])
	offsets.sort_custom(func(a: Array, b: Array) -> bool: return a[0] < b[0])
	var characters: int = 0
	var at: int = 0
	for entry: Array in offsets:
		while at < entry[0]:
			if bytes[at] & 0xC0 != 0x80:  # not a continuation byte: a character starts here
				characters += 1
			at += 1
		entry[1][entry[2]] = characters


## Node path -> node section; the root is ".", its children "Name", deeper ones "Parent/Name".
static func node_map(all: Array[Dictionary]) -> Dictionary:
	var map: Dictionary = {}
	for section: Dictionary in all:
		if section["kind"] != "node":
			continue
		var attrs: Dictionary = section["attrs"]
		if not attrs.has("parent"):
			map["."] = section
		elif attrs["parent"] == ".":
			map[attrs.get("name", "")] = section
		else:
			map["%s/%s" % [attrs["parent"], attrs.get("name", "")]] = section
	return map


# ----- what a node is --------------------------------------------------------------------------


## The engine class of the node at `node_path`, looking into instanced scenes; "" if there is none.
func node_class(node_path: String) -> String:
	return _class_in(sections, nodes, node_path, 0)


## The instanced node that `node_path` lies inside when the node has no section of its own here.
func instance_owner(node_path: String) -> String:
	if nodes.has(node_path):
		return ""
	var parts: PackedStringArray = node_path.split("/")
	for cut: int in range(parts.size() - 1, 0, -1):
		var ancestor: String = "/".join(parts.slice(0, cut))
		if nodes.has(ancestor) and nodes[ancestor]["attrs"].has("instance"):
			return ancestor
	return "."


## Whether the scene lets its own text override nodes inside the instance at `instance_path`.
func editable(instance_path: String) -> bool:
	if instance_path == ".":
		return true
	for section: Dictionary in sections:
		if section["kind"] == "editable" and section["attrs"].get("path", "") == instance_path:
			return true
	return false


static func _class_in(all: Array[Dictionary], map: Dictionary, node_path: String, level: int) -> String:
	if level > 16:
		return ""
	if map.has(node_path):
		var attrs: Dictionary = map[node_path]["attrs"]
		if attrs.has("type"):
			return attrs["type"]
		if attrs.has("instance"):
			return _class_in_instance(all, attrs["instance"], ".", level)
	var parts: PackedStringArray = node_path.split("/")
	for cut: int in range(parts.size() - 1, 0, -1):
		var ancestor: String = "/".join(parts.slice(0, cut))
		if map.has(ancestor) and map[ancestor]["attrs"].has("instance"):
			return _class_in_instance(all, map[ancestor]["attrs"]["instance"], "/".join(parts.slice(cut)), level)
	if node_path != "." and map.has(".") and map["."]["attrs"].has("instance"):
		return _class_in_instance(all, map["."]["attrs"]["instance"], node_path, level)
	return ""


static func _class_in_instance(all: Array[Dictionary], reference: String, node_path: String, level: int) -> String:
	var found: RegExMatch = _reference.search(reference)
	if found == null:
		return ""
	for section: Dictionary in all:
		if section["kind"] == "ext_resource" and section["attrs"].get("id", "") == found.get_string(2):
			var sub_path: String = section["attrs"].get("path", "")
			if not FileAccess.file_exists(sub_path):
				return ""
			var sub: Array[Dictionary] = scan(FileAccess.get_file_as_string(sub_path))
			return _class_in(sub, node_map(sub), node_path, level + 1)
	return ""


# ----- editing ---------------------------------------------------------------------------------


## The scene text with `property` of the node at `node_path` set to `resource`: a reference to
## its file when `saved_path` is given (one shared file), else an embedded sub-resource.
func with_resource(node_path: String, property: String, resource: Resource, saved_path: String, uid: String) -> String:
	var edits: Array = []
	var reference: String = ""
	if saved_path.is_empty():
		var id: String = _new_id(resource.get_class() + "_")
		reference = 'SubResource("%s")' % id
		var first_node: int = _first("node")["start"]
		edits.append(
			[
				first_node,
				first_node,
				'[sub_resource type="%s" id="%s"]\n%s\n' % [resource.get_class(), id, _body(resource)]
			]
		)
	else:
		reference = 'ExtResource("%s")' % _ext_id(saved_path, resource.get_class(), uid, edits)
	var line: String = "%s = %s\n" % [property, reference]
	if nodes.has(node_path):
		var section: Dictionary = nodes[node_path]
		var old: Array = section["props"].get(property, [])
		if old.is_empty():
			var at: int = section["body_start"]
			edits.append([at, at, ("\n" if at == text.length() and not text.ends_with("\n") else "") + line])
		else:
			edits.append([old[0], old[1], line])
			_drop_orphan(text.substr(old[0], old[1] - old[0]).get_slice(" = ", 1).strip_edges(), reference, edits)
	else:
		var parent: String = node_path.get_base_dir() if node_path.contains("/") else "."
		var last_node: Dictionary = _last("node")
		var override: String = '[node name="%s" parent="%s"]\n%s' % [node_path.get_file(), parent, line]
		if last_node["end"] == text.length():
			edits.append([text.length(), text.length(), ("" if text.ends_with("\n") else "\n") + "\n" + override])
		else:
			edits.append([last_node["end"], last_node["end"], override + "\n"])
	return _steps_fixed(_applied(edits))


## The bytes of `content` to write over the scene, once the reader the gate uses (text_format.gd)
## finds that it parses as a scene (an edit that broke the file's syntax would be caught only when
## the scene is next opened) and that it gained nothing that runs or loads: no script set, no class
## of code, and no file named that the scene did not name before, other than `added` (the shape's
## file). None after failing the job. Writing them is saving.gd's.
func checked_bytes(content: String, added: String, job: Job, where: String) -> PackedByteArray:
	var bytes: PackedByteArray = content.to_utf8_buffer()
	var scan: Scan = Scan.new()
	TextFormat.new(bytes, scan).resource_file()
	var gained: String = _gained(scan, added)
	if not gained.is_empty():
		job.fail(
			Job.UNSAFE_RESOURCE,
			"%s: the edit of %s would change what the scene does (%s); nothing was written" % [where, path, gained],
			where
		)
		return PackedByteArray()
	if not scan.finished:
		job.fail(
			Job.SAVE_FAILED,
			(
				"%s: the edited %s would not parse (%s); nothing was written"
				% [where, path, scan.corrupt + scan.unreadable]
			),
			where
		)
		return PackedByteArray()
	return bytes


## What the edited scene (`after`) would do that the scene on disk does not, or "".
func _gained(after: Scan, added: String) -> String:
	var before: Scan = Scan.new()
	TextFormat.new(text.to_utf8_buffer(), before).resource_file()
	if after.scripts > before.scripts:
		return "it would set a script in %s" % after.script_set
	var had: Dictionary = {}
	for entry: Dictionary in before.classes:
		had[entry["type"]] = had.get(entry["type"], 0) + 1
	for entry: Dictionary in after.classes:
		had[entry["type"]] = had.get(entry["type"], 0) - 1
		var type: String = entry["type"]
		var code: bool = not ClassDB.class_exists(type) or ClassDB.is_parent_class(type, "Script")
		if had[type] < 0 and (code or ClassDB.is_parent_class(type, "GDExtension")):
			return "it would make a %s in %s" % [type, entry["where"]]
	var named: Dictionary = {added: true}
	for load: Dictionary in before.loads:
		named[load["path"] + load["uid"]] = true
	for load: Dictionary in after.loads:
		if not named.has(load["path"] + load["uid"]) and not named.has(load["path"]):
			return "it would load %s, named in %s" % [load["path"] + load["uid"], load["where"]]
	return ""


## The id of an ext_resource for `saved_path`: the existing one, or a new line added to `edits`.
func _ext_id(saved_path: String, type: String, uid: String, edits: Array) -> String:
	var count: int = 0
	var last_ext: Dictionary = {}
	for section: Dictionary in sections:
		if section["kind"] == "ext_resource":
			if section["attrs"].get("path", "") == saved_path:
				return section["attrs"].get("id", "")
			count += 1
			last_ext = section
	var id: String = _new_id("%d_" % (count + 1))
	var uid_attr: String = ' uid="%s"' % uid if not uid.is_empty() else ""
	var line: String = '[ext_resource type="%s"%s path="%s" id="%s"]\n' % [type, uid_attr, saved_path, id]
	if last_ext.is_empty():
		var after_header: int = sections[1]["start"] if sections.size() > 1 else text.length()
		edits.append([after_header, after_header, line + "\n"])
	else:
		edits.append([last_ext["body_start"], last_ext["body_start"], line])
	return id


## Remove the section `old` referred to when the replaced line was its only use.
func _drop_orphan(old: String, replacement: String, edits: Array) -> void:
	var found: RegExMatch = _reference.search(old)
	if found == null or old == replacement or text.count(old) != 1:
		return
	var kind: String = "ext_resource" if found.get_string(1) == "Ext" else "sub_resource"
	for section: Dictionary in sections:
		if section["kind"] == kind and section["attrs"].get("id", "") == found.get_string(2):
			var end: int = section["end"] if kind == "sub_resource" else section["body_start"]
			edits.append([section["start"], end, ""])


## The resource's stored, non-default properties in scene syntax, one line each.
static func _body(resource: Resource) -> String:
	var lines: String = ""
	for info: Dictionary in resource.get_property_list():
		var name: String = info["name"]
		if info["usage"] & PROPERTY_USAGE_STORAGE == 0 or name.begins_with("resource_") or name == "script":
			continue
		var value: Variant = resource.get(name)
		var default: Variant = ClassDB.class_get_property_default_value(resource.get_class(), name)
		if typeof(default) != typeof(value) or value != default:
			lines += "%s = %s\n" % [name, var_to_str(value)]
	return lines


func _applied(edits: Array) -> String:
	# Last first, so earlier offsets stay valid; at one offset the removal goes before the
	# insertion (a new ext_resource line lands where a dropped orphan sub_resource started).
	edits.sort_custom(func(a: Array, b: Array) -> bool: return a[0] > b[0] or a[0] == b[0] and a[1] > b[1])
	var out: String = text
	for edit: Array in edits:
		out = out.substr(0, edit[0]) + edit[2] + out.substr(edit[1])
	return out


## Old scenes count their resources in the header's load_steps; keep that count right.
static func _steps_fixed(content: String) -> String:
	var newline: int = content.find("\n")
	var header: String = content.substr(0, newline)
	var found: RegExMatch = _load_steps.search(header)
	if found == null:
		return content
	var resources: int = 1
	for section: Dictionary in scan(content):
		if section["kind"] in ["ext_resource", "sub_resource"]:
			resources += 1
	return header.replace(found.get_string(0), " load_steps=%d" % resources) + content.substr(newline)


## A new section id, not taken by any section of the scene (and the same for the same scene).
func _new_id(prefix: String) -> String:
	var taken: Dictionary = {}
	for section: Dictionary in sections:
		taken[section["attrs"].get("id", "")] = true
	return Ids.drawn(prefix, text.sha256_text(), taken)


func _first(kind: String) -> Dictionary:
	for section: Dictionary in sections:
		if section["kind"] == kind:
			return section
	return {}


func _last(kind: String) -> Dictionary:
	var found: Dictionary = {}
	for section: Dictionary in sections:
		if section["kind"] == kind:
			found = section
	return found
