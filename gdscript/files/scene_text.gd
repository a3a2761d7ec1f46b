extends RefCounted
## Edit a text scene (.tscn) the way the engine's own rename_dependencies() rewrites a file: only the
## lines that must change, every other byte copied.
##
## Why text and not PackedScene: packing a scene again rewrites ids, drops unknown content, reorders
## sections and adds inherited-property noise, and instantiating it runs its scripts. Editing the
## text runs no project code and leaves every byte outside the edited lines as it was: nodes, their
## order, properties, groups, connections, instanced sub-scenes, unique ids, editable children and the
## scene's uid. Sections and properties are found by the same reader of the format that the load gate
## uses (text_format.gd), so a string or a comment that looks like a section is never taken for one.
## What the lines say is decided by the operations (ops/node_set_properties.gd), from the engine's view
## of the scene (values/scene_nodes.gd); what is written is proven by loading it back there.

const Gate = preload("../safety/gate.gd")
const Ids = preload("../formats/ids.gd")
const Job = preload("../job.gd")
const Paths = preload("../safety/paths.gd")
const Scan = preload("../formats/scan.gd")
const TextFormat = preload("../formats/text_format.gd")

## How many scenes' outlines are kept (all are dropped when this many are).
const _OUTLINES_KEPT: int = 16

## The sections and reader's findings of the scenes this engine wrote last, by the sha256 of their
## text: an edit of a scene reads what it wrote, and a batch of edits of one scene reads each text
## once (the reader costs ~5 ms for a scene of 50 nodes on a 2-core VM).
static var _outlines: Dictionary = {}
static var _any_reference: RegEx = RegEx.create_from_string('(Ext|Sub)Resource\\(\\s*"([^"]*)"\\s*\\)')

## The scene's path, text and sections, each {kind, attrs, start, body_start, end, props}.
var path: String = ""
var text: String = ""
var sections: Array[Dictionary] = []
## Node path ("." for the root) -> its node section.
var nodes: Dictionary = {}
## The files the edit names that the scene did not (each was loaded through the gate on its way in).
var added: PackedStringArray = []
## The scene's bytes as read, which `text` encodes back to exactly (open() makes sure).
var _bytes: PackedByteArray = []
var _edits: Array = []
## The sub_resource sections the edit adds: [id, text], nested ones first.
var _new_subs: Array[Array] = []
## What the reader found in the scene as it was (its classes, loads and scripts).
var _before: Scan = null
## The [editable path=...] sections the edit adds.
var _new_editables: PackedStringArray = []
## Path -> id of each ext_resource the edit adds.
var _new_ext: Dictionary = {}
var _taken: Dictionary = {}
## What edited() replaced: [start, end in `text`, start, end in the edited text] (characters), in order.
var _replaced: Array[Array] = []


## Read and scan the scene at res:// `p_path`; `where` names the request member for errors.
func open(p_path: String, job: Job, where: String) -> void:
	path = p_path
	if not FileAccess.file_exists(path):
		job.fail(Job.NOT_FOUND, "%s: %s does not exist" % [where, path], where)
		return
	_bytes = FileAccess.get_file_as_bytes(path)
	text = _bytes.get_string_from_utf8()
	# The edited text is written back as UTF-8: bytes that are not would come back otherwise, and
	# the engine builds a string's bytes before it reads them as UTF-8, so a string holding a stray
	# byte and an escape would name another file (found by a red-team read). A byte order mark goes
	# too (get_string_from_utf8() drops it): the editor writes neither.
	if text.to_utf8_buffer() != _bytes:
		job.fail(
			Job.UNSAFE_RESOURCE,
			"%s: %s is not UTF-8 text throughout, which an edit would rewrite; fix its encoding first" % [where, path],
			where
		)
		return
	if not text.begins_with("[gd_scene"):
		job.fail(
			Job.LOAD_FAILED, "%s: %s is not a text scene (it does not start with [gd_scene)" % [where, path], where
		)
		return
	var kept: Array = _outlines.get(text.sha256_text(), [])
	if kept.is_empty():
		_before = Scan.new()
		sections = scan(text, _before)
	else:
		sections.assign(kept[0])
		_before = kept[1]
	nodes = node_map(sections)
	var ids: Dictionary = {}
	for section: Dictionary in sections:
		if section["kind"] in ["ext_resource", "sub_resource"]:
			# The engine takes a reference to an id by the last section of it: dropping a section an
			# edit left unused would give that id to another (`id=01` is "1" too: found by a red-team read).
			var id: String = "%s %s" % [section["kind"], section["id"]]
			if section["id"] == null or ids.has(id):
				job.fail(
					Job.UNSAFE_RESOURCE,
					(
						(
							"%s: %s has an [%s] section of id %s, which another has too or which is no plain string or"
							+ " number (the engine reads references to it as the last of them); edit it in the editor"
						)
						% [where, path, section["kind"], section["attrs"].get("id", "")]
					),
					where
				)
				return
			ids[id] = true


## Split `source` into sections as the engine's parser reads them (text_format.gd's outline);
## property lines are recorded per section as name -> [start, end]. Offsets count characters of
## `source`. A scene the reader cannot follow to its end gives what was read before it stopped.
## What the reader finds (classes, loads, scripts) goes `into` a Scan, when one is given.
static func scan(source: String, into: Scan = null) -> Array[Dictionary]:
	var bytes: PackedByteArray = source.to_utf8_buffer()
	var found: Array[Dictionary] = TextFormat.new(bytes, into if into != null else Scan.new()).outline()
	if bytes.size() != source.length():
		_to_characters(bytes, found)
	return found


## Turn the byte offsets of `sections` into character offsets (for text that is not all ASCII).
static func _to_characters(bytes: PackedByteArray, sections: Array[Dictionary]) -> void:
	var offsets: Array[Array] = []
	for section: Dictionary in sections:
		for key: String in ["start", "body_start", "end"]:
			offsets.append([section[key], section, key])
		for spans: Dictionary in [section["props"], section["spans"]]:
			for name: String in spans:
				offsets.append([spans[name][0], spans[name], 0])
				offsets.append([spans[name][1], spans[name], 1])
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


# ----- editing ---------------------------------------------------------------------------------
# Edits are gathered, then applied at once by edited(): each is [start, end, text, order] in
# characters of `text`. What they leave unused (a sub_resource or ext_resource no line names any
# more, that one did before) goes with them, as the editor's saver would leave it out.


## Set lines of the node section at `key`: `lines` maps a property to its value text, or to null to
## take the line out. A node this file has no section for (one inside an instance) gets an override
## section. `order` lists property names in the engine's order, where a new line goes.
func set_lines(key: String, lines: Dictionary, order: Array) -> void:
	if not nodes.has(key):
		var kept: String = ""
		for name: String in lines:
			if lines[name] != null:
				kept += "%s = %s\n" % [name, lines[name]]
		if not kept.is_empty():
			var parent: String = key.get_base_dir() if key.contains("/") else "."
			_add_section(_after_subtree(parent), '[node name="%s" parent="%s"]\n%s' % [key.get_file(), parent, kept])
		return
	var section: Dictionary = nodes[key]
	var props: Dictionary = section["props"]
	for name: String in lines:
		var line: String = "" if lines[name] == null else "%s = %s\n" % [name, lines[name]]
		if props.has(name):
			_edit(props[name][0], props[name][1], line)
		elif not line.is_empty():
			var at: int = _line_place(section, name, order)
			_edit(at, at, ("\n" if at == text.length() and not text.ends_with("\n") else "") + line)


## Add a node section (its header line's attributes after `[node `, and its property lines) as
## the last child of `parent`, or before its child at `index` (of this file's children of it).
func add_node(parent: String, attributes: String, lines: Dictionary, index: int) -> void:
	var body: String = "[node %s]\n" % attributes
	for name: String in lines:
		body += "%s = %s\n" % [name, lines[name]]
	var children: Array[Dictionary] = []
	for section: Dictionary in sections:
		if section["kind"] == "node" and section["attrs"].get("parent", null) == parent:
			children.append(section)
	if index >= 0 and index < children.size():
		_edit(children[index]["start"], children[index]["start"], body + "\n")
	else:
		_add_section(_after_subtree(parent), body)


## Take out the node at `key`, the nodes below it, the overrides of nodes inside it, its editable
## mark and the connections from or to any of them.
func remove_node(key: String) -> void:
	for section: Dictionary in sections:
		var attrs: Dictionary = section["attrs"]
		var gone: bool = false
		match section["kind"]:
			"node":
				gone = section in _subtree(key)
			"editable":
				gone = under(str(attrs.get("path", "")), key)
			"connection":
				gone = under(str(attrs.get("from", "")), key) or under(str(attrs.get("to", "")), key)
		if gone:
			_edit(section["start"], section["end"], "")


## Mark the instance at `key` as one whose children this file edits ([editable path=...]).
func mark_editable(key: String) -> void:
	for section: Dictionary in sections:
		if section["kind"] == "editable" and section["attrs"].get("path", "") == key:
			return
	_new_editables.append('[editable path="%s"]\n' % key)


## The text of a reference to `resource` for a property line: its file's ext_resource (added when the
## scene names it nowhere yet), or a new sub_resource, which holds its stored values (their own
## resources likewise). "" for a value the bridge does not write (a script).
func resource_ref(resource: Resource) -> String:
	var file: String = resource.resource_path
	if resource is Script or resource.get_class() == "Resource" and not resource.resource_name.is_empty():
		return ""
	if not file.is_empty() and not file.contains("::"):
		return reference_to_file(file, resource.get_class())
	var id: String = _new_id(resource.get_class() + "_")
	var body: String = ""
	for info: Dictionary in resource.get_property_list():
		var name: String = info["name"]
		if info["usage"] & PROPERTY_USAGE_STORAGE == 0 or name.begins_with("resource_") or name == "script":
			continue
		var value: Variant = resource.get(name)
		var default: Variant = ClassDB.class_get_property_default_value(resource.get_class(), name)
		if typeof(default) != typeof(value) or value != default:
			body += "%s = %s\n" % [name, value_text(value)]
	_new_subs.append([id, '[sub_resource type="%s" id="%s"]\n%s\n' % [resource.get_class(), id, body]])
	return 'SubResource("%s")' % id


## The reference to the resource file at `file` (of class `type`): its ext_resource, added when the
## scene names the file nowhere yet, with the file's uid (`uid`, for a file being written).
func reference_to_file(file: String, type: String, uid: String = "") -> String:
	return 'ExtResource("%s")' % _ext_id(file, type, uid if not uid.is_empty() else Ids.uid_of(Paths.real(file)))


## A value as the scene's text holds it: resources by resource_ref(), anything else as the engine's
## own writer writes it (var_to_str is the text saver's VariantWriter).
func value_text(value: Variant) -> String:
	if value is Resource:
		return resource_ref(value)
	if typeof(value) == TYPE_ARRAY and (value as Array).any(func(item: Variant) -> bool: return item is Object):
		var items: PackedStringArray = []
		for item: Variant in value:
			items.append(value_text(item))
		var typed: String = ""
		if (value as Array).is_typed():
			var element: String = (value as Array).get_typed_class_name()
			typed = (
				"Array[%s]" % (element if not element.is_empty() else type_string((value as Array).get_typed_builtin()))
			)
		return ("%s([%s])" % [typed, ", ".join(items)]) if not typed.is_empty() else "[%s]" % ", ".join(items)
	return var_to_str(value)


## A number for a new node's unique_id, as Godot 4.6 gives every node one (0: the scene's nodes have
## none, as before 4.6): drawn from the scene's text, not at random, and taken by no node of it.
func new_unique_id() -> int:
	var taken: Dictionary = {}
	for section: Dictionary in sections:
		if section["kind"] == "node" and section["attrs"].has("unique_id"):
			taken[str(section["attrs"]["unique_id"]).to_int()] = true
	if taken.is_empty():
		return 0
	var draw: int = 0
	while true:
		var drawn_from: String = "%s:node:%d" % [text.sha256_text(), draw]
		var number: int = drawn_from.sha256_buffer().decode_u32(0) & 0x7FFFFFFF
		if number != 0 and not taken.has(number):
			return number
		draw += 1
	return 0


## The scene's text with the edits gathered made, what they left unused taken out, and the
## header's resource count (of scenes older than 4.6) kept right.
func edited() -> String:
	# Editable marks close the file, as the editor writes them: after every section added at its end.
	for mark: String in _new_editables:
		_add_section(sections[-1], mark)
	# What the edits leave unused goes, until nothing more does (a sub_resource dropped may have
	# been the last to name another). Sections are those read at open(): the text is not read again,
	# only searched for references.
	var before: Dictionary = _references(text)
	var dropped: Dictionary = {}
	var kept_subs: Array[Array] = _new_subs.duplicate()
	var out: String = text
	while true:
		var edits: Array = _edits.duplicate()
		var subs: String = "".join(kept_subs.map(func(sub: Array) -> String: return sub[1]))
		if not subs.is_empty():
			var first_node: int = _first("node")["start"]
			edits.append([first_node, first_node, subs, _edits.size()])
		for section: Dictionary in dropped:
			edits.append([section["start"], section["end"], "", edits.size()])
		out = _applied(edits, text)
		_replaced = _ranges(edits)
		var now: Dictionary = _references(out)
		var more: bool = false
		for section: Dictionary in sections:
			var key: String = section["kind"] + str(section["attrs"].get("id", ""))
			if section["kind"] in ["ext_resource", "sub_resource"] and before.has(key) and not now.has(key):
				more = more or not dropped.has(section)
				dropped[section] = true
		var used: Array[Array] = kept_subs.filter(func(sub: Array) -> bool: return now.has("sub_resource" + sub[0]))
		more = more or used.size() != kept_subs.size()
		kept_subs = used
		if not more:
			break
	if text.ends_with("\n") and not text.ends_with("\n\n"):
		var trimmed: String = out.rstrip("\n") + "\n"
		if trimmed != out:
			_replaced = _trimmed(_replaced, trimmed.length() - 1, text.length(), trimmed.length())
		out = trimmed
	return _steps_fixed(out, _new_ext.size() + kept_subs.size() - dropped.size())


## The bytes of `content` to write over the scene, once the reader the gate uses (text_format.gd)
## finds that it parses as a scene (an edit that broke the file's syntax would be caught only when
## the scene is next opened) and that it gained nothing that runs or loads: no script set, no class
## of code, and no file named that the scene did not name before, other than those the edit added
## (`added`). None after failing the job. Writing them is saving.gd's.
func checked_bytes(content: String, job: Job, where: String) -> PackedByteArray:
	var bytes: PackedByteArray = content.to_utf8_buffer()
	# Read once, for the checks here, for the gate, which loads the staged file back (Gate.keep()),
	# and for the next edit of the same scene (_outlines).
	var scan: Scan = Scan.new()
	var outline: Array[Dictionary] = _read_edit(content, bytes, scan)
	Gate.keep(bytes, scan)
	if _outlines.size() >= _OUTLINES_KEPT:
		_outlines.clear()
	_outlines[content.sha256_text()] = [outline, scan]
	var gained: String = _gained(scan)
	if gained.is_empty() and scan.finished:
		var kept: String = _kept_changed(content, bytes, outline)
		gained = "" if kept.is_empty() else "lines it kept would read otherwise: " + kept
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


## Why a stretch of the scene that the edit kept (between those edited() replaced) would read
## otherwise in the edited text `content` (its bytes and outline), or "". Each must read as the same
## tags and assignments in the same section: the reader is between two of them at both ends of it,
## before and after the edit, and an assignment it starts with follows the same tag. Without this a
## replaced line that opened a quoted name running over the next lines (which hid them) made them
## assignments once it was gone: found by a red-team read, a scene's script swapped for another it
## named already, with as many scripts, classes and files as before, so _gained() saw nothing.
func _kept_changed(content: String, bytes: PackedByteArray, outline: Array[Dictionary]) -> String:
	var old: PackedByteArray = _bytes
	var old_outline: Array[Dictionary] = sections
	var ranges: Array[Array] = _replaced
	if old.size() != text.length() or bytes.size() != content.length():
		# The outlines count characters there, and their events bytes: read both in bytes.
		old_outline = TextFormat.new(old, Scan.new()).outline()
		outline = TextFormat.new(bytes, Scan.new()).outline()
		ranges = []
		for replaced: Array in _replaced:
			var sides: Array = [text, text, content, content]
			ranges.append(range(4).map(func(i: int) -> int: return sides[i].left(replaced[i]).to_utf8_buffer().size()))
	var kept: Array = [0, 0]
	for replaced: Array in ranges + [[old.size(), old.size(), bytes.size(), bytes.size()]]:
		if old.slice(kept[0], replaced[0]) != bytes.slice(kept[1], replaced[2]):
			return "the bridge lost track of what it kept, at byte %d" % kept[0]
		var first: int = _assignment_first(old_outline, kept[0], replaced[0])
		if first >= 0:
			var now: int = _section_at(outline, kept[1])
			if (
				now < 0
				or (now >= 1) != (first >= 1)
				or _tag_bytes(old, old_outline[first]) != _tag_bytes(bytes, outline[now])
			):
				return "the line at byte %d would belong to another section" % kept[0]
		for at: int in [0, 1]:
			if not _between_events(old_outline, replaced[at]) or not _between_events(outline, replaced[at + 2]):
				return "the text around byte %d would read as other lines" % replaced[at]
		kept = [replaced[1], replaced[3]]
	return ""


## The index of the last section of `outline` that starts at or before byte `at`, or -1.
static func _section_at(outline: Array[Dictionary], at: int) -> int:
	var low: int = 0
	var high: int = outline.size() - 1
	var found: int = -1
	while low <= high:
		var middle: int = (low + high) / 2
		if outline[middle]["start"] <= at:
			found = middle
			low = middle + 1
		else:
			high = middle - 1
	return found


## Whether byte `at` lies between two tags or assignments of `outline`, inside neither.
static func _between_events(outline: Array[Dictionary], at: int) -> bool:
	var index: int = _section_at(outline, at)
	if index < 0:
		return true
	var start: int = outline[index]["start"]
	var events: Array = outline[index]["events"]
	if at > start and at < start + events[0]:
		return false
	for i: int in range(1, events.size(), 2):
		if at > start + events[i] and at < start + events[i + 1]:
			return false
	return true


## The index of the section whose assignment comes first in bytes [from, to) of `outline`'s text,
## before any tag there, or -1.
static func _assignment_first(outline: Array[Dictionary], from: int, to: int) -> int:
	var index: int = _section_at(outline, from)
	if index < 0 or outline[index]["start"] == from:
		return -1
	var events: Array = outline[index]["events"]
	for i: int in range(1, events.size(), 2):
		if outline[index]["start"] + events[i] >= from:
			return index if outline[index]["start"] + events[i] < to else -1
	return -1


static func _tag_bytes(bytes: PackedByteArray, section: Dictionary) -> PackedByteArray:
	return bytes.slice(section["start"], section["start"] + section["events"][0])


## The outline of `content`, the edited text (its bytes `bytes`), what the reader finds in it going
## `into`: by reread() from the read of `text` where both are ASCII (their outlines' offsets count
## bytes), else read whole. An edit of a few lines of a scene of 50 nodes read whole cost ~5 ms here.
func _read_edit(content: String, bytes: PackedByteArray, into: Scan) -> Array[Dictionary]:
	var old: PackedByteArray = _bytes
	if bytes.size() == content.length() and old.size() == text.length():
		var outline: Array[Dictionary] = reread(old, sections, _before, bytes, into)
		if not outline.is_empty():
			return outline
	return scan(content, into)


## The outline of the text scene `new` (bytes), with what the reader finds in it going `into` (a new
## Scan), the same as a whole read (text_format.gd) gives, from the whole read of `old` (its outline
## `old_sections`, its findings `old_scan`) that `new` is an edit of; [] (nothing put `into`) where
## that read does not lend itself. A read is a function of the bytes read, so:
## - Up to the last section X past the header's next that starts on a line before the first byte
##   that differs, `new` reads as `old` did: what the reader decided there, it decided from the
##   bytes before X and the `[` at X, both alike (X starts a line, so even the line ends it noted
##   lie before X). Those sections and the findings noted before X are taken.
## - At X a read's state is only its place and what it found (TextFormat.outline()), so the reader goes
##   on from X in `new`, and stops before a tag at Y where `new` from Y on is `old` from Z on, Z a
##   section start of `old`, past which the old read found nothing that names a line (a line
##   number that moved would be out of date). From Y on, `new` reads as `old` did from Z; those
##   sections are taken moved by Y - Z, and their findings.
## - Where it finds no such Y, it reads to the end.
static func reread(
	old: PackedByteArray, old_sections: Array[Dictionary], old_scan: Scan, new: PackedByteArray, into: Scan
) -> Array[Dictionary]:
	var none: Array[Dictionary] = []
	if (
		old_scan == null
		or not old_scan.finished
		or old_sections.size() < 3
		or old_sections[0]["kind"] != "gd_scene"
		or new.has(0)
	):
		return none
	var moved_by: int = new.size() - old.size()
	# X: `new` has what `old` has before it, and its `[`.
	var first: int = -1
	for i: int in range(1, old_sections.size()):
		var start: int = old_sections[i]["start"]
		var previous: int = old_sections[i - 1]["start"] if i > 1 else 0
		if start >= new.size() or new[start] != old[start] or new.slice(previous, start) != old.slice(previous, start):
			break
		if i >= 2 and old[start - 1] == 10:
			first = i
	if first < 0:
		return none
	var was: PackedInt64Array = old_sections[first]["found"]
	into.classes.assign(old_scan.classes.slice(0, was[0]))
	into.loads.assign(old_scan.loads.slice(0, was[1]))
	into.file_values.assign(old_scan.file_values.slice(0, was[2]))
	into.scripts = was[3]
	into.script_set = old_scan.script_set if was[3] > 0 else ""
	into.lined = was[4]
	into.inline_load = old_scan.inline_load if was[5] > 0 else ""
	# Y: the sections from the end on that are alike, past X.
	var stop_at: Dictionary = {}
	for i: int in range(old_sections.size() - 1, first, -1):
		var start: int = old_sections[i]["start"]
		var end: int = old_sections[i]["end"]
		if start + moved_by <= old_sections[first]["start"]:
			break
		if new.slice(start + moved_by, end + moved_by) != old.slice(start, end):
			break
		if old_sections[i]["found"][4] == old_scan.lined:
			stop_at[start + moved_by] = i
	var reader: TextFormat = TextFormat.new(new, into)
	var out: Array[Dictionary] = old_sections.slice(0, first)
	var read: Array[Dictionary] = reader.outline(old_sections[first]["start"], stop_at)
	if read.is_empty():
		# The tag at X did not read: the section before it ends where the file does, as in a whole read.
		out[-1] = out[-1].duplicate()
		out[-1]["end"] = new.size()
	out.append_array(read)
	if reader.stopped_at < 0:
		return out
	var from: int = stop_at[reader.stopped_at]
	var at: PackedInt64Array = old_sections[from]["found"]
	var now: PackedInt64Array = into.progress()
	into.classes.append_array(old_scan.classes.slice(at[0]))
	into.loads.append_array(old_scan.loads.slice(at[1]))
	into.file_values.append_array(old_scan.file_values.slice(at[2]))
	into.finish()
	for section: Dictionary in old_sections.slice(from):
		out.append(_moved(section, moved_by, at, now))
	return out


## `section` of an outline, its offsets moved `by` bytes and its findings counted from `now`, not `was`.
static func _moved(section: Dictionary, by: int, was: PackedInt64Array, now: PackedInt64Array) -> Dictionary:
	var moved: Dictionary = section.duplicate()
	for key: String in ["start", "body_start", "end"]:
		moved[key] = section[key] + by
	for key: String in ["spans", "props"]:
		var spans: Dictionary = {}
		for name: String in section[key]:
			spans[name] = [section[key][name][0] + by, section[key][name][1] + by]
		moved[key] = spans
	var found: PackedInt64Array = section["found"].duplicate()
	for i: int in found.size():
		found[i] += now[i] - was[i]
	moved["found"] = found
	return moved


## What the edited scene (`after`) would do that the scene on disk does not, or "".
func _gained(after: Scan) -> String:
	var before: Scan = _before
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
	var named: Dictionary = {}
	for path_added: String in added:
		named[path_added] = true
	for load: Dictionary in before.loads:
		named[load["path"] + load["uid"]] = true
	for load: Dictionary in after.loads:
		if not named.has(load["path"] + load["uid"]) and not named.has(load["path"]):
			return "it would load %s, named in %s" % [load["path"] + load["uid"], load["where"]]
	return ""


## The id of an ext_resource for `saved_path`: the existing one, or a new line gathered.
func _ext_id(saved_path: String, type: String, uid: String) -> String:
	var count: int = 0
	var last_ext: Dictionary = {}
	for section: Dictionary in sections:
		if section["kind"] == "ext_resource":
			if section["attrs"].get("path", "") == saved_path:
				return section["attrs"].get("id", "")
			count += 1
			last_ext = section
	if _new_ext.has(saved_path):
		return _new_ext[saved_path]
	var id: String = _new_id("%d_" % (count + _new_ext.size() + 1))
	_new_ext[saved_path] = id
	added.append(saved_path)
	var uid_attr: String = ' uid="%s"' % uid if not uid.is_empty() else ""
	var line: String = '[ext_resource type="%s"%s path="%s" id="%s"]\n' % [type, uid_attr, saved_path, id]
	if last_ext.is_empty():
		var after_header: int = sections[1]["start"] if sections.size() > 1 else text.length()
		_edit(after_header, after_header, line + ("\n" if _new_ext.size() == 1 else ""))
	else:
		_edit(last_ext["body_start"], last_ext["body_start"], line)
	return id


## Where a new line for property `name` goes in `section`: before the first line of a property that
## comes after it in the engine's order, else after the last line.
func _line_place(section: Dictionary, name: String, order: Array) -> int:
	var rank: int = order.find(name)
	var at: int = section["body_start"]
	for other: String in section["props"]:
		var span: Array = section["props"][other]
		if rank >= 0 and order.find(other) > rank:
			return span[0]
		at = maxi(at, span[1])
	return at


## The node sections at and below `key` in this file.
func _subtree(key: String) -> Array[Dictionary]:
	var found: Array[Dictionary] = []
	for node_key: String in nodes:
		if under(node_key, key) or key == ".":
			found.append(nodes[node_key])
	return found


## The last node section at or below `key` (the root's for "."), or the nearest ancestor's that has one.
func _after_subtree(key: String) -> Dictionary:
	var last: Dictionary = {}
	var at: String = key
	while last.is_empty():
		for section: Dictionary in _subtree(at):
			if last.is_empty() or section["start"] > last["start"]:
				last = section
		if at == ".":
			break
		at = at.get_base_dir() if at.contains("/") else "."
	return last


## Whether `node_path` is `key` or lies below it.
static func under(node_path: String, key: String) -> bool:
	return node_path == key or node_path.begins_with(key + "/")


## Put a section (its text ending in a newline) after `after`, a blank line between them.
func _add_section(after: Dictionary, section: String) -> void:
	var at: int = after["end"]
	if at == text.length():
		_edit(at, at, ("" if text.ends_with("\n") else "\n") + "\n" + section)
	else:
		_edit(at, at, section + "\n")


func _edit(start: int, end: int, replacement: String) -> void:
	_edits.append([start, end, replacement, _edits.size()])


## Each reference in `source`, "ext_resource<id>" or "sub_resource<id>" -> true.
static func _references(source: String) -> Dictionary:
	var found: Dictionary = {}
	for match: RegExMatch in _any_reference.search_all(source):
		found[("ext_resource" if match.get_string(1) == "Ext" else "sub_resource") + match.get_string(2)] = true
	return found


## `source` with `edits` made. Last first, so earlier offsets stay valid; at one offset the removal
## goes first, and of two insertions the one gathered first ends up first.
static func _applied(edits: Array, source: String) -> String:
	edits.sort_custom(
		func(a: Array, b: Array) -> bool:
			return a[0] > b[0] or a[0] == b[0] and (a[1] > b[1] or a[1] == b[1] and a[3] > b[3])
	)
	var out: String = source
	for edit: Array in edits:
		out = out.substr(0, edit[0]) + edit[2] + out.substr(edit[1])
	return out


## Old scenes count their resources in the header's load_steps: keep that count right in `content`,
## which has `more` resources than the scene had (fewer when negative).
func _steps_fixed(content: String, more: int) -> String:
	# The header is the first section, and no edit touches it: its offsets hold in `content` too.
	var steps: Array = sections[0]["spans"].get("load_steps", []) if not sections.is_empty() else []
	if steps.is_empty():
		return content
	var resources: int = 1 + more
	for section: Dictionary in sections:
		if section["kind"] in ["ext_resource", "sub_resource"]:
			resources += 1
	var longer: int = str(resources).length() - (steps[1] - steps[0])
	for replaced: Array in _replaced:
		replaced[2] += longer
		replaced[3] += longer
	var header: Array = [sections[0]["start"], sections[0]["body_start"]]
	_replaced.push_front(header + [header[0], header[1] + longer])
	return content.substr(0, steps[0]) + str(resources) + content.substr(steps[1])


## `ranges` (as _replaced holds them) once the newlines an edit left at the end from `at` on (in the
## edited text) are one: a stretch from there to the end, taking in the ranges it meets.
static func _trimmed(ranges: Array[Array], at: int, old_length: int, new_length: int) -> Array[Array]:
	var out: Array[Array] = []
	var moved_by: int = 0
	for replaced: Array in ranges:
		if replaced[3] > at:
			break
		out.append(replaced)
		moved_by = replaced[3] - replaced[1]
	var tail: Array = [at - moved_by, old_length, at, new_length]
	for replaced: Array in ranges.slice(out.size()):
		tail[0] = mini(tail[0], replaced[0])
		tail[2] = mini(tail[2], replaced[2])
	out.append(tail)
	return out


## The stretches `edits` replace, as _replaced holds them (touching ones as one).
static func _ranges(edits: Array) -> Array[Array]:
	var ordered: Array = edits.duplicate()
	ordered.sort_custom(func(a: Array, b: Array) -> bool: return a[0] < b[0] or a[0] == b[0] and a[3] < b[3])
	var out: Array[Array] = []
	var moved_by: int = 0
	for edit: Array in ordered:
		if out.is_empty() or out[-1][1] < edit[0]:
			out.append([edit[0], edit[1], edit[0] + moved_by, 0])
		out[-1][1] = maxi(out[-1][1], edit[1])
		moved_by += edit[2].length() - (edit[1] - edit[0])
		out[-1][3] = out[-1][1] + moved_by
	return out


## A new section id, not taken by any section of the scene nor drawn before (and the same for the
## same scene and edit).
func _new_id(prefix: String) -> String:
	if _taken.is_empty():
		for section: Dictionary in sections:
			_taken[section["attrs"].get("id", "")] = true
	var id: String = Ids.drawn(prefix, text.sha256_text(), _taken)
	_taken[id] = true
	return id


func _first(kind: String) -> Dictionary:
	for section: Dictionary in sections:
		if section["kind"] == kind:
			return section
	return {}
