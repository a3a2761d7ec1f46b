extends RefCounted
## Paths the engine opens, as real paths checked against the project root.
##
## The worker runs with the bridge's own settings pack (see main.gd), so the engine knows no project
## path: FileAccess turns `res://x` into `x` by plain text replacement, relative to the working
## directory (the project). Quirk: `res:///x` then names `/x` at the file system root, so paths are
## joined with path_join and files are written through absolute paths made here. The root comes
## from the bridge as an absolute real path, and every check here is on real paths (symbolic links
## followed), as the operating system will follow them when the file is opened.
##
## confine() refuses the paths that property values name as gdres/requests/paths.py refuses request
## members, with the same codes (tests/unit/test_path_table.py runs one table of paths through both), by
## one rule on every system (README, "Paths on every file system"): a path that some system Godot
## runs on would read as another file, or could not hold, is refused; the engine's own names are
## compared without regard to case; real() gives each name as the file system stores it.

const Job = preload("../job.gd")

const _MAX_LINKS: int = 40
## How a path must be written: one table for both sides of the pipe (gdres/requests/paths.py checks
## request members by it); its "about" says how it is read.
const _RULES: JSON = preload("path_rules.json")

## The project's real path, without a trailing slash (set once by main.gd).
static var root: String = ""
static var _dir: DirAccess = null
## The table's rules, as [RegEx, why, folded].
static var _path_rules: Array = _compiled(_RULES.data["path"])
static var _name_rules: Array = _compiled(_RULES.data["name"])
static var _maybe_wrong_name: RegEx = RegEx.create_from_string(_RULES.data["maybe_wrong_name"])
## The longest path, and the longest name in it (in UTF-8 bytes), that the system allows.
static var _path_max: int = int(_RULES.data["longest_path"])
static var _name_max: int = int(_RULES.data["longest_name"])
static var _engine_folders: PackedStringArray = _RULES.data["engine_folders"]
static var _engine_files: PackedStringArray = _RULES.data["engine_files"]
static var _git_folder: String = _RULES.data["git_folder"]
## The engine's files that resource_move may rewrite, as res:// paths.
static var settings_files: PackedStringArray = Array(_RULES.data["settings_files"]).map(
	func(file: String) -> String: return "res://" + file
)


static func _compiled(rules: Array) -> Array:
	return rules.map(
		func(rule: Dictionary) -> Array:
			return [RegEx.create_from_string(rule["pattern"]), rule["why"], rule.get("folded", false)]
	)


## Set the project root (an absolute real path).
static func set_root(path: String) -> void:
	root = path.trim_suffix("/") if path != "/" else path
	_dir = DirAccess.open(root)


## `text` (relative to the project, or starting with res://) as a normalised res:// path inside the
## project, each name spelled as the file system stores it, or "" after failing `job`: invalid_path
## for a path that is absolute, empty, not a path a file can hold on every system, or the engine's
## own (project.godot, .godot/, in any case), also through a link; path_outside_project for one that
## leads out, by `..` or through a link (or a loop of links).
static func confine(text: String, job: Job, where: String) -> String:
	var shown: String = JSON.stringify(text)
	var wrong: Array = _written_wrong(text.trim_prefix("res://"))
	if not wrong.is_empty():
		job.fail(wrong[0], "%s: %s %s" % [where, shown, wrong[1]], where)
		return ""
	var normal: String = _normalised(text.trim_prefix("res://"))
	if normal == ".." or normal.begins_with("../"):
		job.fail(Job.PATH_OUTSIDE_PROJECT, "%s: %s leads outside the project" % [where, shown], where)
		return ""
	if normal == ".":
		job.fail(Job.INVALID_PATH, "%s: %s names the project folder, not a file" % [where, shown], where)
		return ""
	var path: String = "res://" + normal
	var walked: Array = _walk(path)
	var found: String = walked[0]
	if not inside(found):
		var to: String = "to " + found if not found.is_empty() else "a loop of symbolic links"
		job.fail(Job.PATH_OUTSIDE_PROJECT, "%s: %s resolves outside the project (%s)" % [where, shown, to], where)
		return ""
	if is_engine_file(path) or is_engine_file(to_res(found)):
		(
			job
			. fail(
				Job.INVALID_PATH,
				(
					"%s: %s points at files that are not the project's to change (project.godot, .godot/, Godot 3's .import/, .git/)"
					% [where, shown]
				),
				where
			)
		)
		return ""
	# Through no link, the path as stored is the real path below the root.
	return "res://" + (_spelled(normal) if walked[1] else found.substr(root.length() + 1))


## `relative` (normalised) with each name as the file system stores it, links kept: the path the
## engine writes into files that refer to it, so that it opens on a system that tells case apart.
static func _spelled(relative: String) -> String:
	var folder: String = root
	var names: PackedStringArray = []
	for part: String in relative.split("/"):
		var name: String = _stored(folder, part)
		names.append(name)
		folder = folder.path_join(name)
	return "/".join(names)


## Whether res:// `path` is the engine's own or git's: project.godot, .godot/ or Godot 3's .import/
## or anything in them, or anything in a .git folder at any depth (a submodule has one), in any case
## (on a file system that ignores case, `.GIT` is `.git`). gdres/requests/paths.py is_engine_file() alike.
static func is_engine_file(path: String) -> bool:
	var parts: PackedStringArray = path.trim_prefix("res://").split("/")
	if folded(parts[0]) in _engine_folders:
		return true
	for part: String in parts:
		if part.length() == _git_folder.length() and folded(part) == _git_folder:
			return true
	return folded("/".join(parts)) in _engine_files


## `text` with the letters A to Z in lower case: the case folding every file system that ignores case
## agrees on (the engine's names and Windows' device names are made of these letters alone).
static func folded(text: String) -> String:
	var bytes: PackedByteArray = text.to_utf8_buffer()
	if bytes.size() == text.length():
		return text.to_lower()  # ASCII only: the engine's own lowering does the same, faster
	for i: int in bytes.size():
		if bytes[i] >= 65 and bytes[i] <= 90:
			bytes[i] += 32
	return bytes.get_string_from_utf8()


## Why `inner` (a path as written, less any res://) names no file in the project whatever is on
## disk, as [code, reason]; [] when nothing in how it is written stops it.
static func _written_wrong(inner: String) -> Array:
	# Quirk: some of the engine's String calls stop at a NUL; its check comes before any of them.
	if inner.to_utf8_buffer().has(0):
		return [Job.INVALID_PATH, "contains a NUL byte"]
	for rule: Array in _path_rules:
		var bad: RegExMatch = rule[0].search(inner)
		if bad != null:
			var found: String = bad.get_string()
			var code_point: String = "U+%04X" % found.unicode_at(0) if not found.is_empty() else ""
			return [Job.INVALID_PATH, rule[1].format({"found": JSON.stringify(found), "code_point": code_point})]
	var parts: PackedStringArray = inner.split("/")
	if inner.length() > _path_max or Array(parts).any(_too_long):
		return [Job.INVALID_PATH, "is longer than the system allows"]
	if _maybe_wrong_name.search(inner) == null:
		return []
	for part: String in parts:
		var wrong: String = _name_wrong(part)
		if not wrong.is_empty():
			return [Job.INVALID_PATH, "has the name %s, which %s" % [JSON.stringify(part), wrong]]
	return []


## Why Windows would not hold the name `part` as written, or "" (also for "", "." and "..").
static func _name_wrong(part: String) -> String:
	if part in ["", ".", ".."]:
		return ""
	for rule: Array in _name_rules:
		if rule[0].search(folded(part) if rule[2] else part) != null:
			return rule[1]
	return ""


static func _too_long(name: String) -> bool:
	return name.to_utf8_buffer().size() > _name_max


## `relative` with "." and "" parts dropped and each ".." taking away the part before it, when
## there is one: posixpath.normpath() for a relative path, as gdres/requests/paths.py normalises.
static func _normalised(relative: String) -> String:
	var parts: PackedStringArray = []
	for part: String in relative.split("/", false):
		if part == "..":
			if not parts.is_empty() and parts[-1] != "..":
				parts.remove_at(parts.size() - 1)
				continue
		elif part == ".":
			continue
		parts.append(part)
	return "/".join(parts) if not parts.is_empty() else "."


## The absolute path a res:// path (or a path relative to the project) names, lexically simplified.
static func absolute(res_path: String) -> String:
	var inner: String = res_path.trim_prefix("res://").simplify_path()
	return root if inner.is_empty() or inner == "." else root.path_join(inner)


## `path` (absolute, or res://) with every symbolic link resolved, as the OS would open it, and each
## name as the file system stores it (see _stored()); the components past the first that does not
## exist are kept as written.
static func real(path: String) -> String:
	return _walk(path)[0]


## [real(path), whether a link was followed on the way].
static func _walk(path: String) -> Array:
	var full: String = absolute(path) if path.begins_with("res://") else path.simplify_path()
	var current: String = ""
	var pending: PackedStringArray
	if full.begins_with(root + "/") and not full.contains("/../") and not full.ends_with("/.."):
		# The root is a real path already: only the components below it can be links.
		current = root
		pending = full.substr(root.length() + 1).split("/", false)
	else:
		pending = full.split("/", false)
	var hops: int = 0
	while not pending.is_empty():
		var part: String = pending[0]
		pending.remove_at(0)
		if part == ".":
			continue
		if part == "..":
			current = current.get_base_dir() if current != "/" else "/"
			continue
		var candidate: String = current + "/" + part if current != "/" else "/" + part
		if _dir != null and _dir.is_link(candidate):
			hops += 1
			if hops > _MAX_LINKS:
				return ["", true]  # a loop of links: it names nothing
			var target: String = _dir.read_link(candidate)
			if target.is_absolute_path():
				current = "/"
			pending = target.split("/", false) + pending
			continue
		var folder: String = current if not current.is_empty() else "/"
		current = folder.path_join(_stored(folder, part))
	return [current if not current.is_empty() else "/", hops > 0]


## The name under which `folder` stores the entry that `name` opens: `name` itself, unless the folder
## ignores case and holds it spelled otherwise (there `Mats` opens `mats`). One check of the name in
## the other case tells a folder that tells case apart (nothing more is done) from one that may not;
## only then is the folder listed. The listing must lack `name`, `name` must open something, and
## exactly one entry must fold to it; otherwise `name` is kept (gdres/requests/paths.py stored_name() alike).
static func _stored(folder: String, name: String) -> String:
	var other: String = _other_case(name)
	if other == name or _dir == null or not _exists(folder.path_join(other)):
		return name
	var entries: PackedStringArray = _entries(folder)
	if entries.has(name) or not _exists(folder.path_join(name)):
		return name
	var key: String = folded(name)
	var found: PackedStringArray = []
	for entry: String in entries:
		if entry.length() == name.length() and folded(entry) == key:
			found.append(entry)
	return found[0] if found.size() == 1 else name


## `name` with its letters a to z in upper case, or when it has none, its A to Z in lower case.
static func _other_case(name: String) -> String:
	var bytes: PackedByteArray = name.to_utf8_buffer()
	if bytes.size() == name.length():
		var upper: String = name.to_upper()  # ASCII only: the engine's own change of case does the same, faster
		return upper if upper != name else name.to_lower()
	var has_lower: bool = false
	for byte: int in bytes:
		if byte >= 97 and byte <= 122:
			has_lower = true
			break
	var low: int = 97 if has_lower else 65
	var shift: int = -32 if has_lower else 32
	for i: int in bytes.size():
		if bytes[i] >= low and bytes[i] <= low + 25:
			bytes[i] += shift
	return bytes.get_string_from_utf8()


## Whether anything is at absolute `path`, links followed.
static func _exists(path: String) -> bool:
	return _dir.file_exists(path) or _dir.dir_exists(path)


## The names in `folder`, hidden ones too; none when it cannot be listed.
static func _entries(folder: String) -> PackedStringArray:
	var names: PackedStringArray = []
	var listing: DirAccess = DirAccess.open(folder)
	if listing == null:
		return names
	listing.include_hidden = true
	listing.list_dir_begin()
	var name: String = listing.get_next()
	while not name.is_empty():
		names.append(name)
		name = listing.get_next()
	listing.list_dir_end()
	return names


## A DirAccess opened on the project's real path, for checks, renames and folders by absolute
## path (each DirAccess.*_absolute call opens one of its own).
static func project_dir() -> DirAccess:
	return _dir


## Whether a real path lies inside the project (the root itself excluded).
static func inside(real_path: String) -> bool:
	return real_path.begins_with(root + "/")


## Whether a path that the engine opens by itself (a property hinted as a file: res://, absolute,
## or relative to the working folder, which is the project) resolves inside the project.
static func opens_inside(named: String) -> bool:
	return inside(real(named if named.contains("://") or named.is_absolute_path() else "res://" + named))


## The res:// path of a real path inside the project.
static func to_res(real_path: String) -> String:
	return "res://" + real_path.trim_prefix(root + "/")


## The res:// paths of the files below `folder` that the editor's scan finds: not hidden, not in a
## hidden folder, a folder holding `.gdignore` or a linked folder (EditorFileSystem's rules).
static func scanned_files(folder: String = "res://") -> PackedStringArray:
	var found: PackedStringArray = []
	var dir: DirAccess = DirAccess.open(absolute(folder))
	if dir == null or dir.file_exists(".gdignore"):
		return found
	for name: String in dir.get_files():
		found.append(folder.path_join(name))
	for name: String in dir.get_directories():
		if not name.begins_with(".") and not dir.is_link(absolute(folder.path_join(name))):
			found.append_array(scanned_files(folder.path_join(name)))
	return found
