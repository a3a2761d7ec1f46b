extends RefCounted
## Replace a file whole: write a temp file beside it, then rename the temp file over it, so that
## a reader finds the old file or the new one, never a part of either.
##
## The temp file is named by temp_name.json beside the target: the bridge removes those of an engine
## it had to kill (gdres/serving/locks.py sweep()), and finds them by that name. Paths here are
## absolute real paths (under the worker's settings pack, res:// names the pack for a DirAccess;
## see safety/paths.gd). Whether the target may be written at all is for the caller (saving.gd).

const Paths = preload("../safety/paths.gd")
## How a temp file is named: one template, which the bridge reads too.
const _TEMP_NAME: JSON = preload("temp_name.json")


## A temp file beside `path`, named by this process's id.
static func temp_path(path: String) -> String:
	# path_join, not "%s/%s": for a file at the project root the folder is "res://", and under the
	# worker's settings pack "res:///x" names /x at the file system root (see safety/paths.gd).
	var fields: Dictionary = {
		"file": path.get_file(), "pid": OS.get_process_id(), "n": randi(), "ext": path.get_extension()
	}
	return path.get_base_dir().path_join(String(_TEMP_NAME.data["template"]).format(fields))


## Write `bytes` as the whole file at `path`, with every step's error checked.
static func store(path: String, bytes: PackedByteArray) -> Error:
	var file: FileAccess = FileAccess.open(path, FileAccess.WRITE)
	if file == null:
		return FileAccess.get_open_error()
	# store_buffer() returns nothing before Godot 4.4, and close() drops the error of its flush:
	# callers prove the bytes by reading them back.
	file.store_buffer(bytes)
	var err: Error = file.get_error()
	file.close()
	return err if err != ERR_FILE_EOF else OK


## Write `bytes` as the whole of the existing file at `path` (a temp file of this process), in
## place: opened without truncating, written over, and cut to size only if it was longer. A file
## that shrinks to nothing before it grows again (FileAccess.WRITE) costs the file system its
## blocks anew: rewriting a saved material this way took 18 us against 59 (4.6.3, ext4, 2-core VM).
## An error unless the file then holds `bytes`: the old bytes stay where a write fails, and the
## proof of a save (saving.gd) cannot tell a stamp that failed that way from one that was made.
static func rewrite(path: String, bytes: PackedByteArray) -> Error:
	var file: FileAccess = FileAccess.open(path, FileAccess.READ_WRITE)
	if file == null:
		return FileAccess.get_open_error()
	file.store_buffer(bytes)
	# get_length() seeks, which writes out what store_buffer() left buffered, and it answers 0 when
	# that write fails (flush() and close() report nothing): a length short of `bytes` is a failed write.
	var length: int = file.get_length()
	var err: Error = file.get_error()
	if err in [OK, ERR_FILE_EOF]:
		err = OK if length == bytes.size() else ERR_FILE_CANT_WRITE
		if length > bytes.size():
			# Never for a stamp (the text only grows): the bytes are read back, as nothing else tells
			# whether they replaced the old ones.
			err = file.resize(bytes.size())
			file.seek(0)
			if err == OK and file.get_buffer(bytes.size()) != bytes:
				err = ERR_FILE_CANT_WRITE
	file.close()
	return err


## Rename the temp file `temp` over `target`, giving it the permissions `mode` first (when >= 0).
static func commit(temp: String, target: String, mode: int = -1) -> Error:
	if mode >= 0:
		FileAccess.set_unix_permissions(temp, mode)
	return Paths.project_dir().rename(temp, target)


## Remove a temp file that is not to be committed.
static func discard(temp: String) -> void:
	DirAccess.remove_absolute(temp)


## Replace `target` with `bytes` at once (store, then commit); no temp file stays, whatever fails.
static func replace(target: String, bytes: PackedByteArray, mode: int = -1) -> Error:
	var temp: String = temp_path(target)
	var err: Error = store(temp, bytes)
	if err == OK:
		err = commit(temp, target, mode)
	if err != OK:
		discard(temp)
	return err
