extends RefCounted
## resource_move: move a file (with its `.import` and `.uid` sidecars) or a folder (with everything in
## it) inside the project, and every reference to it with it, as the editor's file dock does.
##
## - Text resources and scenes that name a moved file get the path of each such `ext_resource` line
##   rewritten, and nothing else: every other byte stays (the engine's own rename_dependencies
##   rewrites those lines too, but in its own spelling of the whole line). A relative path in a moved
##   file is written absolute, as the engine's saver writes paths.
## - project.godot: each quoted value naming a moved file is rewritten (the main scene, `*res://`
##   autoloads, a theme, a bus layout, translations), as the editor updates its settings after a move.
## - A moved asset's `.import` gets its source and artefact names (`<file>-<md5 of its path>`) made
##   for the new path, as the editor's reimport after a move writes them; the artefacts themselves are
##   made by the next import (gdres imports what a request meets unimported).
## - A binary resource (.res, .scn) that names a moved file gets those paths of its external resource
##   table rewritten, and the offsets after it moved, as the engine's ResourceFormatLoaderBinary::
##   rename_dependencies does; a compressed one is refused (the engine writes it whole anew).
## - Code is not edited: a line of a script, a shader or of any other file that names a moved path
##   outside an ext_resource line is listed in `not_updated`.
## Every write is staged and the whole lands together or not at all (files/saving.gd, journaled by
## the bridge); each rewritten file is proven before it lands, by reading it again and comparing
## what it loads with what it loaded, each moved path for its new one. Then the moved files' uids
## name their new paths in this engine and in `.godot/uid_cache.bin`, where the engine looks a uid
## up before an ext_resource's path (a stale entry would make every dependent fail to load).

const BinaryFormat = preload("../formats/binary_format.gd")
const Gate = preload("../safety/gate.gd")
const Job = preload("../job.gd")
const Scan = preload("../formats/scan.gd")
const Paths = preload("../safety/paths.gd")
const Saving = preload("../files/saving.gd")
const Ids = preload("../formats/ids.gd")
const TextFormat = preload("../formats/text_format.gd")

## Files the engine saves as text and this op rewrites; project.godot is handled by itself.
const _TEXT_RESOURCES: Array[String] = ["tres", "tscn"]
const _BINARY_RESOURCES: Array[String] = ["res", "scn"]
## Files read for lines naming a moved path (listed, never edited), besides the text resources.
const _READ_FOR_LINES: Array[String] = [
	"gd", "gdshader", "gdshaderinc", "cs", "import", "cfg", "json", "gdextension", "gdignore", "txt", "md"
]
const _SIDECARS: Array[String] = ["import", "uid"]
const _UID_CACHE: String = "res://.godot/uid_cache.bin"

static var _quoted_path: RegEx = RegEx.create_from_string('"(\\*?)(res://[^"]*)"')


static func run(request: Dictionary, job: Job) -> Dictionary:
	var source: String = request["source_path"]
	var dest: String = request["dest_path"]
	var move: Dictionary = _plan(source, dest, job)
	if job.failed():
		return {}
	var writes: Array[Dictionary] = []
	var updated: Array = []
	var not_updated: Array = []
	var proofs: Array = []
	for path: String in _files_naming():
		var new_bytes: Variant = _rewritten(path, move, not_updated, job)
		if job.failed():
			return {}
		var moves_to: String = move["files"].get(path, "")
		if new_bytes == null:
			continue
		if not job.if_match.has(path):
			# Changed by someone else between this read and the rename: a conflict, never a lost edit.
			job.if_match[path] = move["read"][path]
		if moves_to.is_empty():
			writes.append(Saving.stage_bytes(path, new_bytes, job, "source_path", path == "res://project.godot"))
			updated.append(path.trim_prefix("res://"))
		else:
			move["rewritten"][path] = new_bytes
		proofs.append(moves_to if not moves_to.is_empty() else path)
	for from: String in move["files"]:
		var to: String = move["files"][from]
		if move["rewritten"].has(from):
			writes.append(Saving.stage_bytes(to, move["rewritten"][from], job, "dest_path"))
			writes.append(Saving.stage_removal(from, job, "source_path"))
		else:
			writes.append(Saving.stage_move(from, to, job, "dest_path"))
	for folder: String in move["empty"]:
		writes.append(Saving.stage_folder(folder, job, "dest_path"))
	for folder: String in move["folders"]:
		writes.append(Saving.stage_folder_removal(folder, job, "source_path"))
	var cache: PackedByteArray = _uid_cache(move) if not job.dry_run else PackedByteArray()
	if not cache.is_empty():
		# In the commit, and so in the journal: an undone move puts the cache back too.
		writes.append(Saving.stage_bytes(_UID_CACHE, cache, job, "source_path", true))
	if job.failed():
		return {}
	Saving.commit(writes, job, func() -> void: _prove(proofs, move, job))
	if job.failed():
		return {}
	if job.dry_run:
		_as_renames(job, move)
	if not move["is_folder"]:
		# The moved file's bytes, where they are now: for the if_match of a next write.
		job.etags[source] = FileAccess.get_sha256(Paths.real(source if job.dry_run else dest))
	var moved: Array = []
	for from: String in move["files"]:
		moved.append([from.trim_prefix("res://"), move["files"][from].trim_prefix("res://")])
	return {"moved": moved, "updated": updated, "not_updated": not_updated}


## What moves where: {source, dest, is_folder, files: {res path: new res path} (sidecars included),
## folders (the source's, innermost first, removed once empty), empty (new folders that hold nothing),
## rewritten: {res path: its new bytes}, read: {res path: etag of the bytes read}}, or {} after
## failing the job.
static func _plan(source: String, dest: String, job: Job) -> Dictionary:
	var real: String = Paths.real(source)
	var is_folder: bool = DirAccess.dir_exists_absolute(real)
	var refusal: String = ""
	var field: String = "dest_path"
	if not is_folder and not FileAccess.file_exists(real):
		job.fail(Job.NOT_FOUND, "source_path: %s does not exist" % source, "source_path")
		return {}
	if FileAccess.file_exists(Paths.real(dest)) or DirAccess.dir_exists_absolute(Paths.real(dest)):
		refusal = "%s exists already; move to a path where nothing is" % dest
	elif is_folder and (dest + "/").begins_with(source + "/"):
		refusal = "%s lies inside %s, the folder being moved" % [dest, source]
	elif not is_folder and source.get_extension().to_lower() != dest.get_extension().to_lower():
		refusal = "keep the extension (.%s): the engine picks a file's loader by it" % source.get_extension()
	elif source.get_extension().to_lower() in _SIDECARS:
		refusal = "%s belongs to the file beside it: move that file, and it moves along" % source
		field = "source_path"
	elif is_folder and not job.if_match.is_empty():
		refusal = "if_match guards one file; a folder has no etag"
		field = "if_match"
	elif real != Paths.absolute(source):
		refusal = "%s is a link or leads through one; move what it leads to (%s)" % [source, Paths.to_res(real)]
		field = "source_path"
	if not refusal.is_empty():
		job.fail(Job.INVALID_REQUEST if field == "if_match" else Job.INVALID_PATH, "%s: %s" % [field, refusal], field)
		return {}
	var move: Dictionary = {
		"source": source,
		"dest": dest,
		"is_folder": is_folder,
		"files": {},
		"folders": [],
		"empty": [],
		"rewritten": {},
		"read": {}
	}
	if is_folder:
		_walk(source, dest, move, job)
	else:
		move["files"][source] = dest
		for sidecar: String in _SIDECARS:
			var beside: String = source + "." + sidecar
			if not FileAccess.file_exists(Paths.absolute(beside)):
				continue
			if Paths.real(beside) != Paths.absolute(beside):
				job.fail(Job.INVALID_PATH, "source_path: %s is a link; it is not moved" % beside, "source_path")
				return {}
			move["files"][beside] = dest + "." + sidecar
	return {} if job.failed() else move


## Add every file below `folder` to `move`, moving to `to`; a link inside is refused (it could lead out).
static func _walk(folder: String, to: String, move: Dictionary, job: Job) -> void:
	var dir: DirAccess = DirAccess.open(Paths.real(folder))
	if dir == null:
		job.fail(Job.LOAD_FAILED, "source_path: %s cannot be listed" % folder, "source_path")
		return
	dir.include_hidden = true
	var files: PackedStringArray = dir.get_files()
	var folders: PackedStringArray = dir.get_directories()
	for name: String in files + folders:
		if dir.is_link(name) or Paths.is_engine_file(folder.path_join(name)):
			var inner: String = folder.path_join(name)
			job.fail(
				Job.INVALID_PATH,
				"source_path: %s is a link or the engine's own; it is not moved" % inner,
				"source_path"
			)
			return
	for name: String in files:
		move["files"][folder.path_join(name)] = to.path_join(name)
	for name: String in folders:
		_walk(folder.path_join(name), to.path_join(name), move, job)
	if files.is_empty() and folders.is_empty():
		move["empty"].append(to)  # made where it goes, as the editor's move makes it
	move["folders"].append(folder)


## The new path of res:// `path` once the move is made, or "" when it does not move.
static func _mapped(path: String, move: Dictionary) -> String:
	if move["is_folder"]:
		return move["dest"] + path.substr(move["source"].length()) if path.begins_with(move["source"] + "/") else ""
	return move["dest"] if path == move["source"] else ""


## The project files that may name a moved file (all the editor's scan finds, and project.godot).
static func _files_naming() -> PackedStringArray:
	var found: PackedStringArray = []
	for path: String in Paths.scanned_files():
		var extension: String = path.get_extension().to_lower()
		if extension in _TEXT_RESOURCES or extension in _BINARY_RESOURCES or extension in _READ_FOR_LINES:
			found.append(path)
		elif path == "res://project.godot":
			found.append(path)
	return found


## The bytes `path` must hold once the move is made, or null when they stay; lines naming a moved path
## that are not rewritten go to `not_updated`. A binary resource gets its table of external paths
## rewritten (binary_format.gd with_paths()); a compressed one naming a moved file fails the job.
static func _rewritten(path: String, move: Dictionary, not_updated: Array, job: Job) -> Variant:
	var real: String = Paths.real(path)
	if not Paths.inside(real):
		return null
	var extension: String = path.get_extension().to_lower()
	if extension in _BINARY_RESOURCES:
		var named_moved: bool = _named_by(path).any(
			func(named: String) -> bool: return not _mapped(named, move).is_empty()
		)
		if not named_moved:
			return null
		var held: PackedByteArray = FileAccess.get_file_as_bytes(real)
		move["read"][path] = _sha256(held)
		var renamed: PackedByteArray = BinaryFormat.with_paths(
			held, func(written: String) -> String: return _mapped(Gate.named({"path": written, "uid": ""}, path), move)
		)
		if not renamed.is_empty() and not Gate.read(renamed).stopped():
			return renamed
		var why: String = "compressed, or a layout the bridge cannot vouch for"
		job.fail(
			Job.INVALID_REQUEST,
			(
				"source_path: %s, a binary resource (%s), names %s: save it uncompressed or as text first"
				% [path.trim_prefix("res://"), why, move["source"].trim_prefix("res://")]
			),
			"source_path"
		)
		return null
	var bytes: PackedByteArray = FileAccess.get_file_as_bytes(real)
	var text: String = bytes.get_string_from_utf8()
	var needle: String = move["source"] + ("/" if move["is_folder"] else "")
	var moves: bool = move["files"].has(path)
	# Every text resource is read line by line: one may name a moved file by a relative path.
	if not text.contains(needle) and extension not in _TEXT_RESOURCES:
		return null
	var lines: PackedStringArray = text.split("\n")
	var ext_lines: Dictionary = _ext_lines(bytes, lines, path, move) if extension in _TEXT_RESOURCES else {}
	var changed: bool = false
	for i: int in lines.size():
		var line: String = lines[i]
		var after: String = line
		if extension in _TEXT_RESOURCES:
			after = ext_lines.get(i, line)
		elif path == "res://project.godot":
			after = _setting_line(line, move)
		elif extension == "import" and moves:
			after = _import_line(line, move)
		if after != line:
			lines[i] = after
			changed = true
		elif _names(line, move):
			not_updated.append({"file": path.trim_prefix("res://"), "line": i + 1, "text": line.strip_edges()})
	if not changed:
		return null
	if text.to_utf8_buffer() != bytes:
		# Edited as text, it would come back with U+FFFD for each invalid byte (and the reader's byte
		# offsets would not be the decoded text's): refused, never rewritten on trust.
		(
			job
			. fail(
				Job.INVALID_REQUEST,
				(
					"source_path: %s, which names %s, is not UTF-8 text: the move would have to rewrite it; fix its encoding first"
					% [path.trim_prefix("res://"), move["source"].trim_prefix("res://")]
				),
				"source_path"
			)
		)
		return null
	var rewritten: PackedByteArray = "\n".join(lines).to_utf8_buffer()
	if extension in _TEXT_RESOURCES and Gate.read(rewritten).stopped() and not Gate.read(bytes).stopped():
		job.fail(
			Job.SAVE_FAILED,
			"source_path: %s, rewritten, would no longer read as a resource; nothing was moved" % path,
			"source_path"
		)
		return null
	move["read"][path] = _sha256(bytes)  # of what was read: a change since is a conflict
	return rewritten


## The etag of `bytes`: their sha256, hex.
static func _sha256(bytes: PackedByteArray) -> String:
	var hashing: HashingContext = HashingContext.new()
	hashing.start(HashingContext.HASH_SHA256)
	hashing.update(bytes)
	return hashing.finish().hex_encode()


## Whether `line` names a moved path (for a file, the path and nothing longer).
static func _names(line: String, move: Dictionary) -> bool:
	if move["is_folder"]:
		return line.contains(move["source"] + "/")
	var at: int = line.find(move["source"])
	while at >= 0:
		var next: String = line.substr(at + move["source"].length(), 1)
		if next.is_empty() or not (next.is_valid_identifier() or next in [".", "-", "/"] or next.is_valid_int()):
			return true
		at = line.find(move["source"], at + 1)
	return false


## The lines of text resource `file` (its `bytes`, split into `lines`) whose ext_resource tag names a
## moved file, by index, each with that path made the moved one's new path (and a relative path
## absolute when `file` itself moves). The tags are read as the engine reads them (text_format.gd:
## a tag over several lines, a field given twice); a path holding an escape or a line break is not
## rewritten, and its line is listed in not_updated instead.
static func _ext_lines(bytes: PackedByteArray, lines: PackedStringArray, file: String, move: Dictionary) -> Dictionary:
	var rewritten: Dictionary = {}
	var line_starts: PackedInt64Array = [0]
	for line: String in lines:
		line_starts.append(line_starts[-1] + line.to_utf8_buffer().size() + 1)
	var sections: Array[Dictionary] = TextFormat.new(bytes, Scan.new()).outline()
	sections.reverse()  # the last first: a line holding two tags keeps the offsets of the first
	for section: Dictionary in sections:
		var span: Array = section["spans"].get("path", [])
		if section["kind"] != "ext_resource" or span.is_empty() or typeof(section["attrs"]["path"]) != TYPE_STRING:
			continue
		var written: PackedByteArray = bytes.slice(span[0], span[1])
		if written[0] != 34 or written.has(92) or written.has(10):  # not "..." as is: an escape, a line break
			continue
		var target: String = _moved_to(section["attrs"]["path"], file, move)
		if target.is_empty():
			continue
		var i: int = line_starts.bsearch(span[0], false) - 1
		var text: String = rewritten.get(i, lines[i])
		var line: PackedByteArray = text.to_utf8_buffer()
		var at: int = span[0] - line_starts[i] + 1
		var edited: PackedByteArray = line.slice(0, at) + target.to_utf8_buffer() + line.slice(at + written.size() - 2)
		rewritten[i] = edited.get_string_from_utf8()
	return rewritten


## The new path of the file that `named` (an ext_resource path of text resource `file`) names once
## the move is made, or "" when the path need not change.
static func _moved_to(named: String, file: String, move: Dictionary) -> String:
	if named.begins_with("uid://") or named.is_empty():
		return ""
	var relative: bool = not named.begins_with("res://")
	var absolute: String = file.get_base_dir().path_join(named).simplify_path() if relative else named
	var target: String = _mapped(absolute, move)
	if target.is_empty():
		target = absolute if relative and move["files"].has(file) else ""
	return target


## A project.godot line with each quoted value that names a moved file naming its new path.
static func _setting_line(line: String, move: Dictionary) -> String:
	var result: String = ""
	var last: int = 0
	for found: RegExMatch in _quoted_path.search_all(line):
		var target: String = _mapped(found.get_string(2), move)
		if target.is_empty():
			continue
		result += line.substr(last, found.get_start() - last) + '"%s%s"' % [found.get_string(1), target]
		last = found.get_end()
	return result + line.substr(last) if last > 0 else line


## A moved asset's .import line with its source and its artefacts' names made for the new path.
static func _import_line(line: String, move: Dictionary) -> String:
	var result: String = line
	for found: RegExMatch in _quoted_path.search_all(line):
		var named: String = found.get_string(2)
		var target: String = _mapped(named, move)
		if not target.is_empty():
			result = result.replace('"%s"' % named, '"%s"' % target)
		elif named.begins_with("res://.godot/imported/"):
			var artefact: String = named.get_file()
			for from: String in move["files"]:
				var prefix: String = "%s-%s." % [from.get_file(), from.md5_text()]
				if artefact.begins_with(prefix):
					var to: String = move["files"][from]
					var renamed: String = "%s-%s.%s" % [to.get_file(), to.md5_text(), artefact.substr(prefix.length())]
					result = result.replace('"%s"' % named, '"%s"' % named.get_base_dir().path_join(renamed))
	return result


## A dry run's change of a file that moves and is rewritten: its diff from its old path and text
## (git's rename with changes), not a new file's.
static func _as_renames(job: Job, move: Dictionary) -> void:
	for change: Dictionary in job.changes:
		for from: String in move["rewritten"]:
			if change["path"] == move["files"][from].trim_prefix("res://"):
				change["action"] = "modify"
				change["from"] = from.trim_prefix("res://")
				change["before"] = FileAccess.get_file_as_string(Paths.real(from))


## Once the writes have landed (before they count): every rewritten file, read again by the engine's
## loader, names each dependency at a path where a file is, and the moved files' uids name their new
## paths in this engine. Fails the job (and so undoes the move) when one does not.
static func _prove(files: Array, move: Dictionary, job: Job) -> void:
	_learn_uids(move)
	for path: String in files:
		for named: String in _named_by(path):
			# A file missing before the move too (no moved path) is not the move's doing.
			if (
				not named.is_empty()
				and not FileAccess.file_exists(Paths.real(named))
				and not _mapped(named, move).is_empty()
			):
				job.fail(
					Job.SAVE_FAILED,
					"source_path: after the move, %s still named %s; nothing was moved" % [path, named],
					"source_path"
				)
				return


## The files the resource file at res:// `path` names, as the bridge's own readers find them (never
## ResourceLoader.get_dependencies(): it reads a `.remap` beside the file with the engine's parser,
## which runs what it makes, safety/gate.gd remap_fault()).
static func _named_by(path: String) -> Array:
	var scan: Scan = Gate.read(FileAccess.get_file_as_bytes(Paths.real(path)))
	return scan.loads.map(func(load: Dictionary) -> String: return Gate.named(load, path))


## Tell this engine where each moved file's uid now leads.
static func _learn_uids(move: Dictionary) -> void:
	for from: String in move["files"]:
		var to: String = move["files"][from]
		if to.get_extension().to_lower() in _SIDECARS:
			continue
		var uid: String = Ids.uid_of(Paths.real(to))
		var id: int = ResourceUID.text_to_id(uid) if not uid.is_empty() else ResourceUID.INVALID_ID
		if id != ResourceUID.INVALID_ID:
			if ResourceUID.has_id(id):
				ResourceUID.set_id(id, to)
			else:
				ResourceUID.add_id(id, to)


## The engine's uid cache with each moved file's uid naming its new path, as the editor writes it
## after a move; empty when there is none to change (or it is unreadable, or reached through a link:
## the editor rebuilds it from the files when it next scans them, and the gate mends a stale entry).
static func _uid_cache(move: Dictionary) -> PackedByteArray:
	var real: String = Paths.real(_UID_CACHE)
	# Never through a link: one there could lead this write to any file of the project.
	if real != Paths.absolute(_UID_CACHE) or not FileAccess.file_exists(real):
		return PackedByteArray()
	var bytes: PackedByteArray = FileAccess.get_file_as_bytes(real)
	if bytes.size() < 4:
		return PackedByteArray()
	var count: int = bytes.decode_u32(0)
	var out: PackedByteArray = bytes.slice(0, 4)
	var at: int = 4
	var changed: bool = false
	for i: int in count:
		if at + 12 > bytes.size():
			return PackedByteArray()
		var length: int = bytes.decode_u32(at + 8)
		var path: String = bytes.slice(at + 12, at + 12 + length).get_string_from_utf8()
		var target: String = move["files"].get(path, "")
		var entry: PackedByteArray = bytes.slice(at, at + 8)
		var named: PackedByteArray = (target if not target.is_empty() else path).to_utf8_buffer()
		changed = changed or not target.is_empty()
		entry.resize(12)
		entry.encode_u32(8, named.size())
		out.append_array(entry)
		out.append_array(named)
		at += 12 + length
	return out if changed else PackedByteArray()
