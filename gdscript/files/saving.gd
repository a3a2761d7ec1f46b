extends RefCounted
## Write files atomically, inside the project, and only once they are proven to hold what was meant.
##
## Every write: find the target's real path (links followed) and check that it lies in the project,
## outside .godot/; make the missing folders one at a time, noting each; write a temp file beside
## the real target (atomic_write.gd); prove it (a resource, loaded fresh from it, must encode
## exactly as the resource in memory; bytes, read back, must be the same bytes); check that the
## folder still resolves to the same real place; rename over the target. A failure at any step
## removes the temp file and the folders this write made, and nothing else: a link on the way
## stays, and so does the old file.
##
## Several files are written together or not at all: stage() each (written and proven beside its
## target), then commit() them; save() and write_bytes() do both for one file. A dry run (job.dry_run)
## does every step but the renames: commit() describes each write in job.changes, then removes its
## temp file and the folders it made, so the project is left as it was.
##
## Why load the file back: the engine's savers do not see a write that fails at close (the file is
## flushed by fclose, whose result the engine ignores), so on a nearly full disk ResourceSaver.save
## returns OK for a file cut short. And why re-check the folder: the target was checked when the
## request came in, but a folder on the way may have become a link since.

const AtomicWrite = preload("atomic_write.gd")
const Job = preload("../job.gd")
## The key of _fix_ids()'s count of ext_resources (no id or resource is a number).
const _EXTERNAL: int = 0
## The types of property that may hold a resource (TYPE_NIL: a Variant property).
const _MAY_HOLD_RESOURCES: Array[int] = [TYPE_OBJECT, TYPE_ARRAY, TYPE_DICTIONARY, TYPE_NIL]
const Gate = preload("../safety/gate.gd")
const Paths = preload("../safety/paths.gd")
const Ids = preload("../formats/ids.gd")

static var _uid_attr: RegEx = RegEx.create_from_string(' uid="uid://[^"]*"')
static var _ext_line: RegEx = RegEx.create_from_string('(?m)^\\[ext_resource ([^\\n]*?)path="([^"]+)"([^\\n]*)\\]$')


## Save `resource` as res:// `path`; `where` names the request member for errors, `member` the
## one whose values `values_set` (name -> value) the request set. Return the file's uid:// ("" once
## the job has failed).
static func save(
	resource: Resource, path: String, job: Job, where: String, values_set: Dictionary = {}, member: String = ""
) -> String:
	var write: Dictionary = stage(resource, path, job, where, values_set, member)
	commit([write], job)
	return "" if job.failed() else write["uid"]


## Put `bytes` in place of the file at res:// `path`, the same way.
static func write_bytes(path: String, bytes: PackedByteArray, job: Job, where: String) -> void:
	commit([stage_bytes(path, bytes, job, where)], job)


## Write `resource` for res:// `path` beside it and prove it, leaving the target as it is until
## commit(): a staged write, whose "uid" is the uid the file will have (it keeps the target's).
## {} once the job has failed, here or before; nothing this left stays then.
static func stage(
	resource: Resource, path: String, job: Job, where: String, values_set: Dictionary = {}, member: String = ""
) -> Dictionary:
	var write: Dictionary = _begin(path, job, where)
	if job.failed():
		return {}
	# A file that is not there yet has no uid to keep (three file checks, ~40 us, saved per create).
	var uid: String = Ids.uid_of(write["real"]) if write["old"] != null else ""
	if uid.is_empty():
		# A file that is there with no uid (saved before Godot 4.0) gets one drawn from its path.
		uid = Ids.drawn_uid(path) if write["old"] != null else ResourceUID.id_to_text(ResourceUID.create_id())
	write["uid"] = uid
	var err: Error = _save_stamped(resource, path, write)
	if err == OK:
		_prove_resource(resource, write, job, where, values_set, member)
	if not job.failed() and err != OK:
		_fail_save(write, job, where, err)
	return _staged(write, job)


## Write `bytes` for res:// `path` beside it and read them back, the same way as stage().
## `settings`: the file may be project.godot or the engine's uid cache (no other engine file), as
## a move rewrites what names the files it moves.
static func stage_bytes(
	path: String, bytes: PackedByteArray, job: Job, where: String, settings: bool = false
) -> Dictionary:
	var write: Dictionary = _begin(path, job, where, settings)
	if job.failed():
		return {}
	var err: Error = AtomicWrite.store(write["temp"], bytes)
	if err == OK and FileAccess.get_file_as_bytes(write["temp"]) != bytes:
		err = ERR_FILE_CANT_WRITE
	if err != OK:
		_fail_save(write, job, where, err)
	return _staged(write, job)


## Stage moving the file at res:// `from` to res:// `to`, where nothing is: its folders made, the
## rename left to commit(). The file keeps its bytes, and with them its uid. A request's if_match on
## `from` guards it.
static func stage_move(from: String, to: String, job: Job, where: String) -> Dictionary:
	var write: Dictionary = _begin(to, job, where)
	if job.failed():
		return {}
	write["from"] = Paths.real(from)
	if (
		write["old"] != null
		or write["from"] != Paths.absolute(from)
		or Paths.is_engine_file(Paths.to_res(write["from"]))
		or not FileAccess.file_exists(write["from"])
	):
		job.fail(Job.SAVE_FAILED, "%s: %s cannot move to %s; nothing was moved" % [where, from, to], where)
	elif job.if_match.has(from):
		write["guard"] = str(job.if_match[from])
		write["guarded"] = write["from"]
		_still_as_read(write, job)
	return _staged(write, job)


## Stage removing the file at res:// `path` (its bytes kept, for an undo): the removal is left to commit().
static func stage_removal(path: String, job: Job, where: String) -> Dictionary:
	if job.failed():
		return {}
	var real: String = Paths.real(path)
	if not Paths.inside(real) or Paths.is_engine_file(Paths.to_res(real)) or not FileAccess.file_exists(real):
		job.fail(Job.SAVE_FAILED, "%s: %s cannot be removed; nothing was changed" % [where, path], where)
		return {}
	var write: Dictionary = _write(path, where, real, "", FileAccess.get_file_as_bytes(real))
	write["remove"] = true
	if not _writable(real, write, job, where):
		return {}
	if job.if_match.has(path):
		write["guard"] = str(job.if_match[path])
		_still_as_read(write, job)
	return _staged(write, job)


## Stage making the folder res:// `path`, with those missing above it: made now, and removed again
## unless the writes are committed.
static func stage_folder(path: String, job: Job, where: String) -> Dictionary:
	if job.failed():
		return {}
	var real: String = Paths.real(path)
	if not Paths.inside(real) or Paths.is_engine_file(Paths.to_res(real)):
		job.fail(Job.INVALID_PATH, "%s: %s cannot be made; nothing was changed" % [where, path], where)
		return {}
	var write: Dictionary = _write(path, where, real, "")
	write["mkdir"] = true
	var missing: Array = _missing_folders(real, job, where)
	if not job.failed() and _note(job, {"stage": real, "temp": "", "folders": missing}):
		write["made"] = _make_folders(missing, job, where)
	return _staged(write, job)


## Stage removing the folder at res:// `path` once the writes before it have emptied it.
static func stage_folder_removal(path: String, job: Job, where: String) -> Dictionary:
	var real: String = Paths.real(path)
	if job.failed() or not Paths.inside(real):
		return {}
	var write: Dictionary = _write(path, where, real, "")
	write["rmdir"] = true
	return write


## Make staged writes visible together: once every folder still resolves where it did when its
## write began, rename each temp file over its target, in order (a staged move renames its file, a
## staged removal removes one). `proof`, when given, runs once all are in place, and a failure it
## reports undoes them all too. Unless all of them are renamed,
## none stays: when the job has failed (while staging, or here), the targets already replaced get
## their old bytes back (a new file goes, with the folders made for it), and every temp file and
## every folder made goes too.
static func commit(writes: Array[Dictionary], job: Job, proof: Callable = Callable()) -> void:
	if job.hit_script_error():
		job.fail(
			Job.SAVE_FAILED,
			(
				"the bridge's engine side hit a script error while serving this request (the engine's output"
				+ " says where), so what it wrote is not trusted; nothing was written"
			)
		)
	for write: Dictionary in writes:
		if not job.failed() and Paths.real(write["folder"]) != write["folder"]:
			job.fail(
				Job.PATH_OUTSIDE_PROJECT,
				(
					"%s: a folder on the way to %s was replaced while it was being written; nothing was written"
					% [write["where"], write["path"]]
				),
				write["where"]
			)
	for write: Dictionary in writes:
		if not job.failed() and write.has("guard"):
			_still_as_read(write, job)
	if job.dry_run and not job.failed():
		for write: Dictionary in writes:
			if write.has("rmdir") or write.has("mkdir") or write.has("from") or write.has("remove"):
				continue  # a move says what it moves in its own reply
			job.changes.append(_change(write))
			if write["old"] != null:
				job.etags[write["path"]] = FileAccess.get_sha256(write["real"])
		for i: int in range(writes.size() - 1, -1, -1):
			_drop(writes[i])
		return
	for write: Dictionary in writes:
		if job.failed():
			break
		# The reply's etag, and the journal's hash of what the batch wrote (a rollback checks the
		# file still has it before putting the old bytes back).
		if write.has("mkdir"):
			continue  # made when staged, and noted then
		if write.has("from") or write.has("rmdir"):
			_note(job, {"move": write["from"], "to": write["real"]} if write.has("from") else {"rmdir": write["real"]})
			continue
		var new: Variant = null if write.has("remove") else FileAccess.get_sha256(write["temp"])
		if new != null:
			job.etags[write["path"]] = new
		if not job.journal.is_empty():
			var old: Variant = Marshalls.raw_to_base64(write["old"]) if write["old"] != null else null
			_note(job, {"commit": write["real"], "old": old, "new": new, "mode": write["mode"]})
	var renamed: int = 0
	while not job.failed() and renamed < writes.size():
		var write: Dictionary = writes[renamed]
		var err: Error = _apply(write)
		if err != OK:
			_fail_save(write, job, write["where"], err)
			break
		renamed += 1
	if not job.failed() and proof.is_valid():
		proof.call()
	if not job.failed():
		return
	# Innermost first: a folder made by one write may hold the file of a later one.
	for i: int in range(writes.size() - 1, -1, -1):
		if i < renamed:
			_undo(writes[i])
		elif not writes[i].is_empty() and not writes[i].has("rmdir"):
			_drop(writes[i])  # a staged folder goes too: _drop removes what a write made


## Make one staged write: rename its temp file over its target, or move its file, or remove it.
static func _apply(write: Dictionary) -> Error:
	if write.has("mkdir"):
		return OK
	if write.has("rmdir"):
		return DirAccess.remove_absolute(write["real"])  # only an empty folder goes
	if write.has("remove"):
		return DirAccess.remove_absolute(write["real"])
	if write.has("from"):
		# A rename replaces what is at its target: one made since the move was staged is kept.
		if FileAccess.file_exists(write["real"]) or DirAccess.dir_exists_absolute(write["real"]):
			return ERR_ALREADY_EXISTS
		return DirAccess.rename_absolute(write["from"], write["real"])
	return AtomicWrite.commit(write["temp"], write["real"], write["mode"])


## Save `resource` for res:// `path` as the temp file of `write`, every section under a chosen id
## (_fix_ids), with the uid write["uid"]. The walk that chooses ids costs more than the save (~270 us
## for a material's property list alone), and a file with no ext_resource or sub_resource section
## has no id to choose: so unless the file it replaces has sections, the resource is saved first, and
## walked and saved again only if the file written has some.
static func _save_stamped(resource: Resource, path: String, write: Dictionary) -> Error:
	var temp: String = ProjectSettings.localize_path(write["temp"])
	var old: Variant = write["old"]
	var walked: bool = old != null and _has_sections(old.get_string_from_utf8())
	if walked:
		_fix_ids(resource, path, temp, {})
	var err: Error = ResourceSaver.save(resource, write["temp"])
	if err != OK:
		return err
	if write["real"].get_extension().to_lower() in ["res", "scn"]:
		# A binary file has a place for its uid in its header: written there in place. (The text
		# stamp corrupted it: an update of a .res failed, "big-endian binary resource", before; and
		# ResourceSaver.set_uid() writes a `.uidren` copy it then cannot rename under the worker's
		# settings pack, leaving it beside the file and the uid unset, while it answers OK.)
		return Ids.stamp_binary(write["temp"], ResourceUID.text_to_id(write["uid"]))
	var text: String = FileAccess.get_file_as_string(write["temp"])
	if not walked and _has_sections(text):
		_fix_ids(resource, path, temp, {})
		err = ResourceSaver.save(resource, write["temp"])
		text = FileAccess.get_file_as_string(write["temp"]) if err == OK else ""
	return _stamp(text, write["temp"], write["uid"]) if err == OK else err


static func _has_sections(text: String) -> bool:
	return text.contains("\n[ext_resource ") or text.contains("\n[sub_resource ")


## Give every resource `owner` holds the id the saver is to write it under in the temp file `temp`
## for res:// `path`, where the saver would draw one at random: a file it names (ext_resource) keeps
## the id the file at `path` gave it (the saver looks ids up by the path it writes to, so it would
## number them anew for a temp file: a diff of every reference), and a new one or a new embedded
## resource gets one drawn from `path` (formats/ids.gd), so the same request writes the same file.
## Ids a loaded file gave its sub-resources stay (their path names it). `ids` holds each resource
## met and each id taken.
static func _fix_ids(owner: Object, path: String, temp: String, ids: Dictionary) -> void:
	ids[owner] = true
	for info: Dictionary in owner.get_property_list():
		# Only a property that may hold a resource is read (a material has ~150 others: reading
		# each took ~450 us a save).
		if info["type"] in _MAY_HOLD_RESOURCES and info["usage"] & PROPERTY_USAGE_STORAGE != 0:
			_fix_ids_in(owner.get(info["name"]), path, temp, ids)


static func _fix_ids_in(value: Variant, path: String, temp: String, ids: Dictionary) -> void:
	if value is Resource and not ids.has(value):
		ids[value] = true
		var file: String = value.resource_path
		if file.is_empty() or file.contains("::"):
			# A new resource (no path) gets its id here, also one an earlier save gave it.
			if file.is_empty() or value.resource_scene_unique_id.is_empty():
				value.resource_scene_unique_id = Ids.drawn(value.get_class() + "_", path, ids)
			ids[value.resource_scene_unique_id] = true
			_fix_ids(value, path, temp, ids)
			return
		var id: String = value.get_id_for_path(path)
		if id.is_empty() or ids.has(id):
			ids[_EXTERNAL] = ids.get(_EXTERNAL, 0) + 1
			id = Ids.drawn("%d_" % ids[_EXTERNAL], path, ids)
		ids[id] = true
		value.set_id_for_path(temp, id)
	elif value is Array:
		for item: Variant in value:
			_fix_ids_in(item, path, temp, ids)
	elif value is Dictionary:
		for key: Variant in value:
			_fix_ids_in(key, path, temp, ids)
			_fix_ids_in(value[key], path, temp, ids)


# ----- the steps of a write ---------------------------------------------------------------------


## A staged write of res:// `path` (real path `real`) for request member `where`: its temp file
## (`temp`, "" for none), the folders it made, the bytes the target held (`old`) and its permissions.
static func _write(path: String, where: String, real: String, temp: String, old: Variant = null) -> Dictionary:
	return {
		"path": path,
		"where": where,
		"real": real,
		"folder": _parent(real),
		"temp": temp,
		"made": [],
		"old": old,
		"mode": -1
	}


## Check the target and make its folders: {path, where, real, folder, temp, made, old, mode}, or
## fail the job (or leave it failed: then nothing is checked or made).
static func _begin(path: String, job: Job, where: String, settings: bool = false) -> Dictionary:
	if job.failed():
		return {}
	var real: String = Paths.real(path)
	if not Paths.inside(real):
		job.fail(
			Job.PATH_OUTSIDE_PROJECT,
			"%s: %s now resolves outside the project (to %s); nothing was written" % [where, path, real],
			where
		)
		return {}
	var inside: String = Paths.to_res(real)
	if Paths.is_engine_file(inside) and not (settings and inside in Paths.settings_files):
		job.fail(
			Job.INVALID_PATH,
			"%s: %s now resolves to the engine's own files (%s); nothing was written" % [where, path, inside],
			where
		)
		return {}
	if Paths.project_dir().dir_exists(real):
		job.fail(
			Job.SAVE_FAILED,
			"%s: %s is a folder, so no file can be saved there (ERR_ALREADY_EXISTS)" % [where, path],
			where
		)
		return {}
	var write: Dictionary = _write(path, where, real, AtomicWrite.temp_path(real))
	if FileAccess.file_exists(real):
		write["old"] = FileAccess.get_file_as_bytes(real)
		if not _writable(real, write, job, where):
			return {}
	if job.if_match.has(path):
		write["guard"] = str(job.if_match[path])
		if not _still_as_read(write, job):
			return {}
	var missing: Array = _missing_folders(write["folder"], job, where)
	if not job.failed() and _note(job, {"stage": real, "temp": write["temp"], "folders": missing}):
		write["made"] = _make_folders(missing, job, where)
	return {} if job.failed() else write


## Whether the target still has the etag the request's if_match gave (`write["guard"]`); fails the job
## with a conflict if not. Checked when the write begins and again just before the rename: someone
## else's save in between is refused, not overwritten (only one landing in the microseconds between
## that check and the rename itself could be, as with any editor's save).
static func _still_as_read(write: Dictionary, job: Job) -> bool:
	var guarded: String = write.get("guarded", write["real"])
	var now: String = FileAccess.get_sha256(guarded) if FileAccess.file_exists(guarded) else ""
	if now == write["guard"]:
		return true
	var what: String = "has etag %s now" % now if not now.is_empty() else "is not there any more"
	job.fail(
		Job.CONFLICT,
		(
			"%s: %s changed since it was read (it %s, not the if_match given): read it again; nothing was written"
			% [write["where"], Paths.to_res(guarded).trim_prefix("res://"), what]
		),
		"if_match"
	)
	return false


## Keep the target's permissions, and refuse one that nobody may write (0444).
static func _writable(real: String, write: Dictionary, job: Job, where: String) -> bool:
	if OS.get_name() == "Windows":
		return true
	var mode: int = FileAccess.get_unix_permissions(real)
	write["mode"] = mode
	if mode & (FileAccess.UNIX_WRITE_OWNER | FileAccess.UNIX_WRITE_GROUP | FileAccess.UNIX_WRITE_OTHER) == 0:
		job.fail(
			Job.SAVE_FAILED,
			"%s: %s is read-only (ERR_FILE_NO_PERMISSION); nothing was written" % [where, write["path"]],
			where
		)
		return false
	return true


## Load the temp file fresh and fail unless it encodes exactly as `resource` does.
static func _prove_resource(
	resource: Resource, write: Dictionary, job: Job, where: String, values_set: Dictionary, member: String
) -> void:
	# Through the gate, as a file about to be loaded: what is written never carries code or a path out.
	var written: Resource = Gate.load_checked(write["temp"], where, ResourceLoader.CACHE_MODE_IGNORE)
	if job.failed():
		return
	if written == null:
		job.fail(
			Job.SAVE_FAILED,
			(
				"%s: the file written for %s does not load back (ERR_FILE_CORRUPT); nothing was written"
				% [where, write["path"]]
			),
			where
		)
		return
	# Each value the request set must read back: a property can stop being stored when another is
	# set (StandardMaterial3D.normal_enabled under per-vertex shading loses its STORAGE flag), and
	# then neither object's encoding below holds it.
	var name: String = ""
	for set_name: String in values_set:
		if not _same(written.get(set_name), resource.get(set_name), {}):
			name = set_name
			break
	# The usual proof, in native code: every stored property, nested resources included, encodes
	# the same. Short of that the slow comparison decides (the saver writes dictionary keys sorted,
	# so a dictionary set in another order encodes differently and is still the same value).
	if name.is_empty() and var_to_bytes_with_objects(written) != var_to_bytes_with_objects(resource):
		name = _first_difference(resource, written, {})
	if name.is_empty():
		return
	if values_set.has(name):
		job.fail(
			Job.INVALID_VALUE,
			(
				"%s.%s: %s.%s would not keep this value: the file written, loaded back, holds %s; nothing was written"
				% [member, name, resource.get_class(), name, _shown(written.get(name))]
			),
			member
		)
	else:
		job.fail(
			Job.SAVE_FAILED,
			(
				"%s: the file written for %s does not hold what was meant (%s differs); nothing was written"
				% [where, write["path"], name if not name.is_empty() else "its class"]
			),
			where
		)


## The first stored property whose value differs between the two objects ("the class" when their
## classes do), or "" when they hold the same. `seen` ends cycles of nested resources.
static func _first_difference(a: Object, b: Object, seen: Dictionary) -> String:
	if a.get_class() != b.get_class():
		return "the class"
	seen[a] = true
	var names: Dictionary = {}
	for object: Object in [a, b]:
		for info: Dictionary in object.get_property_list():
			if info["usage"] & PROPERTY_USAGE_STORAGE:
				names[info["name"]] = true
	for name: String in names:
		if not _same(a.get(name), b.get(name), seen):
			return name
	return ""


## Whether two values are the same: dictionaries whatever their order, NaN as NaN, resources that
## live in a file by their path, embedded ones by what they hold.
static func _same(a: Variant, b: Variant, seen: Dictionary) -> bool:
	if typeof(a) != typeof(b):
		return false
	match typeof(a):
		TYPE_OBJECT:
			if a == null or b == null or a == b:
				return a == b
			if a is Resource and b is Resource and _external(a) and a.resource_path == b.resource_path:
				return true
			return seen.has(a) or _first_difference(a, b, seen).is_empty()
		TYPE_DICTIONARY:
			if a.size() != b.size():
				return false
			for key: Variant in a:
				if not b.has(key) or not _same(a[key], b[key], seen):
					return false
			return true
		TYPE_ARRAY:
			if a.size() != b.size():
				return false
			for i: int in a.size():
				if not _same(a[i], b[i], seen):
					return false
			return true
		TYPE_FLOAT:
			return a == b or (is_nan(a) and is_nan(b))
	return a == b


static func _external(resource: Resource) -> bool:
	return not resource.resource_path.is_empty() and not resource.resource_path.contains("::")


static func _shown(value: Variant) -> String:
	var text: String = var_to_str(value)
	return text if text.length() <= 80 else text.left(77) + "..."


## Fail the job for an error of the engine's save or of a file operation.
static func _fail_save(write: Dictionary, job: Job, where: String, err: Error) -> void:
	job.fail(
		Job.SAVE_FAILED,
		"%s: the engine could not save %s (%s); nothing was written" % [where, write["path"], Job.error_name(err)],
		where
	)


## `write`, staged; or {} once the job has failed, with its temp file and folders gone.
static func _staged(write: Dictionary, job: Job) -> Dictionary:
	if not job.failed():
		return write
	_drop(write)
	return {}


## Remove what a staged write left: its temp file and the folders it made.
static func _drop(write: Dictionary) -> void:
	if not write["temp"].is_empty() and not write.has("from"):
		AtomicWrite.discard(write["temp"])
	_remove_folders(write["made"])


## Note `entry` in the atomic batch's journal (job.journal), if the job has one, before the change
## it describes is made: a batch cut short is undone from it (gdres/serving/journal.py).
## Whether it was noted (or there is no journal); else the job has failed, and nothing is to change.
static func _note(job: Job, entry: Dictionary) -> bool:
	if job.journal.is_empty():
		return true
	var file: FileAccess = FileAccess.open(job.journal, FileAccess.READ_WRITE)
	var err: Error = FileAccess.get_open_error() if file == null else OK
	if file != null:
		file.seek_end()
		file.store_line(JSON.stringify(entry))
		# Flushed to the system before the change is made: a kill of this process loses nothing.
		file.flush()
		err = file.get_error()
		file.close()
	if err != OK and err != ERR_FILE_EOF:
		job.fail(
			Job.SAVE_FAILED,
			"the atomic batch's journal could not be written (%s); nothing was written" % Job.error_name(err)
		)
		return false
	return true


## What a staged write would change, for a dry run's reply (see Job.changes).
static func _change(write: Dictionary) -> Dictionary:
	var change: Dictionary = {
		"path": Paths.to_res(write["real"]).trim_prefix("res://"),
		"action": "create" if write["old"] == null else "modify",
	}
	if write["real"].get_extension().to_lower() in ["res", "scn"]:
		change["binary"] = true
	else:
		change["before"] = null if write["old"] == null else write["old"].get_string_from_utf8()
		change["after"] = FileAccess.get_file_as_string(write["temp"])
	return change


## Put back what a committed write replaced: its old bytes (and permissions), or no file and none
## of the folders it made. Atomic like the write it undoes.
static func _undo(write: Dictionary) -> void:
	if write.has("mkdir"):
		_remove_folders(write["made"])
	elif write.has("rmdir"):
		DirAccess.make_dir_absolute(write["real"])
	elif write.has("from"):
		DirAccess.rename_absolute(write["real"], write["from"])
		_remove_folders(write["made"])
	elif write.has("remove"):
		AtomicWrite.store(write["real"], write["old"])
	elif write["old"] == null:
		DirAccess.remove_absolute(write["real"])
		_remove_folders(write["made"])
	else:
		AtomicWrite.replace(write["real"], write["old"], write["mode"])


## Write `text`, the text resource the saver wrote at `temp` (an absolute path), back there with
## its own uid and every external reference its target's uid, the way the editor writes them.
## `text` is the saver's own output, just written: its header and ext_resource lines are found by
## their exact form, not read by text_format.gd (which reads every file the bridge did not write),
## as the saver's form is read alike by every reader, and the reader cost a write ~40 us here.
static func _stamp(text: String, temp: String, uid: String) -> Error:
	if text.is_empty():
		return ERR_FILE_CORRUPT
	var newline: int = text.find("\n")
	var header: String = _uid_attr.sub(text.substr(0, newline), "")
	header = header.trim_suffix("]") + ' uid="%s"]' % uid
	var body: String = text.substr(newline)
	var patched: String = ""
	var last: int = 0
	for found: RegExMatch in _ext_line.search_all(body):
		var target_uid: String = Ids.uid_of(Paths.real(found.get_string(2)))
		if target_uid.is_empty() or found.get_string(0).contains(' uid="'):
			continue
		patched += body.substr(last, found.get_start() - last)
		patched += (
			'[ext_resource %suid="%s" path="%s"%s]'
			% [found.get_string(1), target_uid, found.get_string(2), found.get_string(3)]
		)
		last = found.get_end()
	patched += body.substr(last)
	return AtomicWrite.rewrite(temp, (header + patched).to_utf8_buffer())


## The folders missing down to `folder` (a real path inside the project), outermost first; a file
## on the way fails the job.
static func _missing_folders(folder: String, job: Job, where: String) -> Array:
	var missing: Array = []
	var probe: String = folder
	while not Paths.project_dir().dir_exists(probe) and probe.begins_with(Paths.root + "/"):
		if FileAccess.file_exists(probe):
			job.fail(
				Job.SAVE_FAILED,
				"%s: %s is a file, so no folder can be made there (ERR_ALREADY_EXISTS)" % [where, Paths.to_res(probe)],
				where
			)
			return []
		missing.push_front(probe)
		probe = _parent(probe)
	return missing


## Make each of the `missing` folders, one at a time; return those made. A failure fails the job,
## and nothing made stays. A folder another writer made meanwhile (another worker, or another
## process, writing into the same new folders) is not this write's: it is used, and never removed,
## if it is a folder and no link (a link there could lead the temp file out of the project).
static func _make_folders(missing: Array, job: Job, where: String) -> Array:
	var made: Array = []
	for each: String in missing:
		var err: Error = Paths.project_dir().make_dir(each)
		if err == ERR_ALREADY_EXISTS and Paths.project_dir().dir_exists(each) and Paths.real(each) == each:
			continue
		if err != OK:
			_remove_folders(made)
			job.fail(
				Job.SAVE_FAILED,
				"%s: could not create folder %s (%s)" % [where, Paths.to_res(each), Job.error_name(err)],
				where
			)
			return []
		made.append(each)
	return made


## The folder `path` (absolute) is in. Not get_base_dir(): that takes a name before ":/" anywhere in
## the path for a drive, and never climbs above it.
static func _parent(path: String) -> String:
	return path.substr(0, path.rfind("/"))


## Remove folders made by a write, innermost first (only if empty: nothing else is ever removed).
static func _remove_folders(made: Array) -> void:
	for i: int in range(made.size() - 1, -1, -1):
		Paths.project_dir().remove(made[i])
