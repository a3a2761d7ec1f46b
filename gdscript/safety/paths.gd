extends RefCounted
## Paths the engine opens, as real paths checked against the project root.
##
## The worker runs with the bridge's own settings pack (see main.gd), so the engine knows no project
## path: FileAccess turns `res://x` into `x` by plain text replacement, relative to the working
## directory (the project). Quirk: `res:///x` then names `/x` at the file system root, so paths are
## joined with path_join and files are written through absolute paths made here. The root comes
## from the bridge as an absolute real path, and every check here is on real paths (symbolic links
## followed), as the operating system will follow them when the file is opened.

const _MAX_LINKS: int = 40

## The project's real path, without a trailing slash (set once by main.gd).
static var root: String = ""
static var _dir: DirAccess = null


## Set the project root (an absolute real path).
static func set_root(path: String) -> void:
	root = path.trim_suffix("/") if path != "/" else path
	_dir = DirAccess.open(root)


## The absolute path a res:// path (or a path relative to the project) names, lexically simplified.
static func absolute(res_path: String) -> String:
	var inner: String = res_path.trim_prefix("res://").simplify_path()
	return root if inner.is_empty() or inner == "." else root.path_join(inner)


## `path` (absolute, or res://) with every symbolic link resolved, as the OS would open it; the
## components past the first that does not exist are kept as written.
static func real(path: String) -> String:
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
				return ""  # a loop of links: it names nothing
			var target: String = _dir.read_link(candidate)
			if target.is_absolute_path():
				current = "/"
			pending = target.split("/", false) + pending
			continue
		current = candidate
	return current if not current.is_empty() else "/"


## A DirAccess opened on the project's real path, for checks, renames and folders by absolute
## path (each DirAccess.*_absolute call opens one of its own).
static func project_dir() -> DirAccess:
	return _dir


## Whether a real path lies inside the project (the root itself excluded).
static func inside(real_path: String) -> bool:
	return real_path.begins_with(root + "/")


## The res:// path of a real path inside the project.
static func to_res(real_path: String) -> String:
	return "res://" + real_path.trim_prefix(root + "/")
