extends ResourceFormatLoader
## The one gate at the engine's load boundary: while a worker serves a request, every load the
## engine performs is judged here, where the engine acts, not predicted beside it.
##
## What this relies on in Godot 4's source (core/io/resource_loader.cpp, checked against 4.6.3):
## - ResourceLoader::_load() asks each registered loader in turn `recognize_path(path, hint)` and
##   calls `load()` on those that answer yes; the first non-null resource wins, and a null result
##   lets the next loader try. add_resource_format_loader(loader, true) puts a loader first. So this
##   loader is asked before every other one, and answers null to let the engine load a file it
##   passed, or a placeholder Resource to stop a load it refused (a null would only move on to the
##   engine's own loader).
## - The path it is given is final: a uid:// resolved, a `.remap` beside the file and translation
##   remaps applied (ResourceLoader::_path_remap, before _load); the requested path comes as
##   `original_path` when they differ.
## - Every nested load goes through _load() too: ext_resources and inline Resource("...") of the
##   text and binary loaders (_load_start), a shader's #include (ShaderPreprocessor loads includes
##   with ResourceLoader::load), and ResourceFormatImporter, which loads an imported asset's
##   artefact (`.godot/imported/...`) by calling _load() again.
## - Not through it: a class that opens a file by itself with FileAccess (CompressedTexture2D's
##   load_path, hinted PROPERTY_HINT_FILE): the readers report such values (scan.gd) and the gate
##   confines them before the engine parses the file that sets them; values in requests are
##   confined by props.gd. An importer's parameters are read by the import process, which runs on
##   a shadow that tools/shadow.gd built from checked values alone.
## - A script runs when it is parsed (GDScript compiles a `script/source` set by the text loader at
##   once, and runs static initialisers), so the content of every resource file is read before the
##   engine parses it (text_format.gd, binary_format.gd) and refused when it makes a Script or a
##   GDExtension, sets a `script`, or holds anything the readers cannot vouch for.
## The file is read again by the engine's loader after the gate read it: a writer that swaps the
## file in between is outside the threat model (docs/security.md says why).

const Job = preload("../job.gd")
const Scan = preload("../formats/scan.gd")
const TextFormat = preload("../formats/text_format.gd")
const Paths = preload("paths.gd")
## Compiled on first use (own_script()), not preloaded: few requests read a binary resource or an
## imported asset, and an engine compiled these two at every start (~40 ms of it on a 2-core VM).
const _BINARY_FORMAT: String = "formats/binary_format.gd"
const _IMPORTED: String = "safety/imported.gd"
const _PROJECT_UIDS: String = "safety/project_uids.gd"

## Shader sources, whose #include lines the preprocessor loads.
const _SHADERS: Array[String] = ["gdshader", "gdshaderinc"]
## The text loader's extensions (ResourceFormatLoaderText recognizes no others).
const _TEXT_EXTENSIONS: Array[String] = ["tres", "tscn"]
const _ASSETS_KEPT: int = 256
## Scans kept (see read()); all are dropped when this many are kept.
const _SCANS_KEPT: int = 256
## Verdicts of _verdict() other than an error code.
const _PASS: String = "pass"
const _ASSET: String = "asset"
const _STAND_IN: String = "stand-in"
const _LFS_POINTER: String = "version https://git-lfs.github.com/spec/v1"
## What judge() and opened_file_fault() answer when the engine may go on, and _verdict() when it may
## load the file: never an empty array. A GDScript runtime error ends the function it happens in
## with its type's default ([] for an Array, null for a Variant) and lets the caller go on, so a
## check cut short must read as a refusal, never as a pass (Scan.finished does so for the readers).
const MAY: Array = [_PASS, ""]
const _CHECK_FAILED: String = "cannot be vouched for: the bridge's check of it failed (see the engine's output)"

## A shader's `#include "file"` line, as the preprocessor reads it.
static var _include: RegEx = RegEx.create_from_string('(?m)^[ \\t]*#[ \\t]*include[ \\t]+"([^"]*)"')
## An `#include` _include does not read: behind a comment or mid-line (the preprocessor drops comments
## before it reads a directive).
static var _hidden_include: RegEx = RegEx.create_from_string("#[ \\t]*(?:/\\*[\\s\\S]*?\\*/[ \\t]*)*include")
## An `#if` or `#elif`, however written: the preprocessor evaluates its condition with Expression,
## which calls functions (str_to_var() makes objects, scripts included: found by a red-team read).
static var _condition: RegEx = RegEx.create_from_string("#[ \\t]*(?:/\\*[\\s\\S]*?\\*/[ \\t]*)*(?:el)?if\\b")
## Scans of the files read so far, by what they depend on (_scan_key()).
static var _scans: Dictionary = {}
## A header line as the engine's saver writes it, its uid apart.
static var _saved_header: RegEx = RegEx.create_from_string(
	(
		'^(\\[gd_(?:resource|scene)(?: type="\\w+")?(?: script_class="\\w+")?(?: load_steps=\\d+)? format=\\d+)'
		+ ' uid="uid://[a-z0-9]+"(\\])$'
	)
)
## The request being served (loads outside one are the bridge's own scripts, from its own folder).
static var job: Job = null
## The request member and the file a load was started for, for messages.
static var _where: String = ""
static var _root: String = ""
## The bridge's own folder (real path), whose scripts load between requests.
static var _own: String = ""
## The bridge's scripts compiled on first use, by their path below its folder.
static var _own_scripts: Dictionary = {}
## Placeholders handed out for refused loads: taken out of the engine's cache once the request ends.
static var _refused: Array[Resource] = []
## The files passed for the current load, each res path -> the res paths it names (for messages).
static var _passed: Dictionary = {}
## Assets being loaded by the gate itself (it keeps them between requests).
static var _loading_asset: Dictionary = {}
## The imported assets kept loaded between requests (the engine's cache holds a resource only as
## long as something else does), res -> [import stamp when loaded, resource], least recently used
## first; the worker's memory limit (gdres/engine/worker.py) bounds the rest.
static var _assets: Dictionary = {}
## File extensions whose loader makes a Script or loads native code, and those any loader takes.
static var _code_extensions: PackedStringArray = []
static var _loadable_extensions: PackedStringArray = []


## Put `gate` (a new one of these) in front of the engine's loaders; `own` is the bridge's folder.
static func install(gate: ResourceFormatLoader, own: String) -> void:
	_own = own.trim_suffix("/") + "/"
	ResourceLoader.add_resource_format_loader(gate, true)


## Serve `p_job`: its loads are judged from now on, until done().
static func serve(p_job: Job) -> void:
	job = p_job


## The request is answered: no load belongs to it any more, and its refusals leave the cache.
static func done() -> void:
	job = null
	for placeholder: Resource in _refused:
		placeholder.resource_path = ""
	_refused.clear()
	_passed.clear()


## Load res:// `path` for request member `where` through the gate, with the engine's `cache_mode`.
static func load_checked(path: String, where: String, cache_mode: ResourceLoader.CacheMode) -> Resource:
	_where = where
	_root = path
	_passed.clear()
	var fault: String = remap_fault(path)
	if not fault.is_empty():
		_refuse(path, Job.UNSAFE_RESOURCE, fault)
		return null
	return ResourceLoader.load(path, "", cache_mode)


## Why the engine must not be handed `path` at all, or "": a `.remap` file beside it. The engine's
## ResourceLoader::_path_remap reads `<path>.remap` with its own VariantParser before it asks any
## loader (so before this gate), in load(), exists() and get_dependencies() alike, and that parser
## makes the objects a value names: an Object(GDScript, "script/source": ...) set as a script runs
## at once, and a `path` there sends the load anywhere. A project's sources hold no .remap (an
## export writes them), so any there is refused, unread; unless the request allows the project's
## code to run (allow_scripts), where the engine follows it as it would in the editor.
static func remap_fault(path: String) -> String:
	var file: String = path.get_slice("::", 0)
	if file.is_empty() or file.begins_with("uid://") or job != null and job.allow_scripts:
		return ""
	# The engine looks beside the path as given (links on the way followed by the system), as here.
	if FileAccess.file_exists(Paths.absolute(file) + ".remap"):
		return (
			"has a .remap file beside it, which the engine reads unchecked before any loader (its values"
			+ " can run code or lead out of the project); remove it"
		)
	return ""


func _recognize_path(_path: String, _type: StringName) -> bool:
	return true


func _get_recognized_extensions() -> PackedStringArray:
	return PackedStringArray()


func _handles_type(_type: StringName) -> bool:
	return false


func _load(path: String, original_path: String, _sub_threads: bool, _cache_mode: int) -> Variant:
	var answer: Variant = _answer(path, original_path)
	if answer == null:
		# _answer() was cut short (see MAY); a null from here would make the engine load the file
		# with its own loader, unchecked.
		return _refuse(path, Job.UNSAFE_RESOURCE, _CHECK_FAILED, original_path)
	return answer


## What _load() hands the engine: ERR_SKIP to let it load the file, a Resource (the asset kept, or a
## placeholder for a refused load), an error code; null only when cut short.
func _answer(path: String, original_path: String) -> Variant:
	if _loading_asset.has(path):
		return ERR_SKIP
	if job == null:
		return _between_requests(path)
	var verdict: Array = _verdict(path)
	if verdict == MAY:
		return ERR_SKIP
	if verdict.size() != 2:
		return null
	if verdict[0] == _STAND_IN:
		return _stand_in(path)
	return (
		_asset(path, verdict[1], original_path)
		if verdict[0] == _ASSET
		else _refuse(path, verdict[0], verdict[1], original_path)
	)


## Between requests only the bridge's own scripts load (the operations, and what the gate compiles
## on first use).
static func _between_requests(path: String) -> Variant:
	if Paths.real(path).begins_with(_own):
		return ERR_SKIP
	return _refuse(path, Job.UNSAFE_RESOURCE, "is not the bridge's")


## What to do with a load of `path` for the request: MAY, [_ASSET, its real path], or [error code,
## why] to refuse it.
static func _verdict(path: String) -> Array:
	var real: String = Paths.real(path)
	if not Paths.inside(real):
		return [
			Job.PATH_OUTSIDE_PROJECT,
			"is outside the project%s" % (" (it resolves to %s)" % real if real != path else "")
		]
	if not FileAccess.file_exists(real):
		return [Job.NOT_FOUND, "does not exist"]
	var extension: String = path.get_extension().to_lower()
	if not job.allow_scripts:
		var code: PackedStringArray = code_extensions()
		if code.is_empty():
			return [Job.UNSAFE_RESOURCE, _CHECK_FAILED]
		if extension in code:
			if job.script_stand_ins and extension != "gdextension":
				return [_STAND_IN, real]
			return [Job.UNSAFE_RESOURCE, "is a script or a native library, which the engine would run"]
	# Opened once: its first bytes tell an LFS pointer and a binary resource, the rest is read on.
	var file: FileAccess = FileAccess.open(real, FileAccess.READ)
	var head: PackedByteArray = file.get_buffer(64) if file != null else PackedByteArray()
	if head.get_string_from_utf8().begins_with(_LFS_POINTER):
		return [Job.NOT_FOUND, "is a Git LFS pointer, not the file itself (run `git lfs pull`)"]
	if FileAccess.file_exists(real + ".import") and not Paths.is_engine_file(path):
		return [_ASSET, real]
	if extension not in _loadable_extension_list():
		return [Job.NOT_IMPORTED, "has not been imported by the engine (the project has no import data for it)"]
	var magic: String = head.slice(0, 4).get_string_from_ascii()
	if not job.allow_scripts and extension in _SHADERS and file != null:
		var source: PackedByteArray = head + file.get_buffer(file.get_length() - head.size())
		var included: Array = includes_fault(source.get_string_from_utf8(), path)
		if not included.is_empty():
			return included
	if job.allow_scripts or not (extension in _TEXT_EXTENSIONS or magic == "RSRC" or magic == "RSCC"):
		return MAY
	var scan: Scan = read(head + file.get_buffer(file.get_length() - head.size()) if file != null else head)
	var problem: Array = judge(scan)
	if problem != MAY:
		return problem
	for source: Dictionary in scan.shader_code:
		var included: Array = includes_fault(source["code"], path)
		if not included.is_empty():
			return [included[0], "sets shader source (%s) that %s" % [source["where"], included[1]]]
	_mend_stale_uids(scan, path)
	if _names_unknown_uid_at_stale_path(scan, path):
		var uids: GDScript = own_script(_PROJECT_UIDS)
		if uids == null:
			return [Job.UNSAFE_RESOURCE, _CHECK_FAILED]
		uids.learn()
	var named_paths: Array = scan.loads.map(func(load: Dictionary) -> String: return named(load, path))
	# The engine's loaders take a known uid's path before the path written beside it: that file is
	# the one opened (and its .remap read), so it is held to the same checks.
	var opened: Array = scan.loads.map(func(load: Dictionary) -> String: return _by_uid(load))
	# A load the engine serves from its cache never reaches this gate (an inline Resource("...") is
	# loaded with the cache reused): every file named is held to the project here, before it loads.
	for i: int in named_paths.size():
		var both: Array = (
			[named_paths[i]] if opened[i].is_empty() or opened[i] == named_paths[i] else [named_paths[i], opened[i]]
		)
		for each: String in both:
			if not each.is_empty() and not Paths.inside(Paths.real(each)):
				return [
					Job.PATH_OUTSIDE_PROJECT, "names %s in %s, outside the project" % [each, scan.loads[i]["where"]]
				]
			var fault: String = remap_fault(each)
			if not fault.is_empty():
				return [Job.UNSAFE_RESOURCE, "names %s in %s, which %s" % [each, scan.loads[i]["where"], fault]]
	_passed[path] = named_paths + opened.filter(func(each: String) -> bool: return not each.is_empty())
	return MAY


## The path a load's uid leads to in this engine (ResourceUID), or "" when it names no uid it knows.
static func _by_uid(load: Dictionary) -> String:
	var text: String = load["uid"] if not load["uid"].is_empty() else load["path"]
	if not text.begins_with("uid://"):
		return ""
	var id: int = ResourceUID.text_to_id(text)
	return ResourceUID.get_id_path(id) if id != ResourceUID.INVALID_ID and ResourceUID.has_id(id) else ""


## Why the `#include`s of shader source `code` (of the file at `path`) must not be loaded, as [code,
## why], or []: the shader preprocessor loads each with ResourceLoader::load, which reads a `.remap`
## beside it first (remap_fault()), when the source is set, whether from a shader file, a resource's
## property or a request. Each included file is judged here in turn when it loads, its own includes
## with it. The preprocessor joins a line that ends in a backslash to the next and drops comments
## before it reads a directive: an `#include` hidden so is refused (found by a red-team read:
## `/**/#include` and `#\` then `include` loaded a `.remap` unread, which ran code).
static func includes_fault(code: String, path: String) -> Array:
	var joined: String = code.replace("\\\r\n", "").replace("\\\n", "")
	if _condition.search(joined) != null:
		var condition: String = "has an #if or #elif, whose condition the engine evaluates as code (#ifdef is fine)"
		return [Job.UNSAFE_RESOURCE, condition]
	if _hidden_include.search(_include.sub(joined, "", true)) != null:
		var why: String = "has an #include behind a comment or not on a line of its own, which the bridge does not follow"
		return [Job.UNSAFE_RESOURCE, why]
	for found: RegExMatch in _include.search_all(joined):
		var named: String = found.get_string(1)
		# The engine makes an absolute path inside the project a res:// one (and reads the .remap
		# there), where joining it here did not (found by a red-team read); a uid:// is looked up
		# before its .remap is read. A shader names its includes by res:// or relative paths alone.
		if named.is_absolute_path() and not named.begins_with("res://"):
			if not named.contains("://") and not Paths.inside(Paths.real(named)):
				return [Job.PATH_OUTSIDE_PROJECT, "includes %s, outside the project" % named]
			return [Job.UNSAFE_RESOURCE, "includes %s, which is not a res:// or relative path" % named]
		if not named.contains("://"):
			named = path.get_base_dir().path_join(named).simplify_path()
		if not Paths.inside(Paths.real(named)):
			return [Job.PATH_OUTSIDE_PROJECT, "includes %s, outside the project" % named]
		var fault: String = remap_fault(named)
		if not fault.is_empty():
			return [Job.UNSAFE_RESOURCE, "includes %s, which %s" % [named, fault]]
	return []


## Where a file names a file by a uid the engine knows at a path where nothing is, and by a path where
## the file is (a uid cache left stale by a move made outside the editor), let the uid lead there: the
## engine's loaders take the uid's path before the written one, and would fail.
static func _mend_stale_uids(scan: Scan, path: String) -> void:
	for load: Dictionary in scan.loads:
		var id: int = ResourceUID.text_to_id(load["uid"]) if not load["uid"].is_empty() else ResourceUID.INVALID_ID
		if id == ResourceUID.INVALID_ID or not ResourceUID.has_id(id) or load["path"].is_empty():
			continue
		var written: String = named({"path": load["path"], "uid": ""}, path)
		if (
			written.begins_with("res://")
			and not FileAccess.file_exists(Paths.real(ResourceUID.get_id_path(id)))
			and FileAccess.file_exists(Paths.real(written))
			and Paths.inside(Paths.real(written))
		):
			ResourceUID.set_id(id, written)


## Whether a file (its scan) names a file by a uid the engine does not know and a path where nothing
## is: a fresh clone's file whose dependency moved, which the editor finds by its uid.
static func _names_unknown_uid_at_stale_path(scan: Scan, path: String) -> bool:
	for load: Dictionary in scan.loads:
		var id: int = ResourceUID.text_to_id(load["uid"]) if not load["uid"].is_empty() else ResourceUID.INVALID_ID
		if id == ResourceUID.INVALID_ID or ResourceUID.has_id(id):
			continue
		# named() gives "" for a load by that unknown uid alone: nothing is there either.
		if not FileAccess.file_exists(Paths.real(named(load, path))):
			return true
	return false


## What the readers find in the bytes of a resource file (binary by its magic, text otherwise).
## A scan depends on the bytes alone, so each is kept (judge() still runs on it every time: what a
## file names is looked at where it is now): a worker that writes or reads many files alike reads
## each kind once (the text reader costs ~270 us for a small material, a gated load ~4x a plain one).
static func read(bytes: PackedByteArray) -> Scan:
	var key: String = _scan_key(bytes)
	var scan: Scan = _scans.get(key)
	if scan != null:
		return scan
	scan = Scan.new()
	var magic: String = bytes.slice(0, 4).get_string_from_ascii()
	if magic == "RSRC" or magic == "RSCC":
		var reader: GDScript = own_script(_BINARY_FORMAT)
		if reader == null:
			scan.unreadable = "the bridge's reader of binary resources did not load (is its install whole?)"
			return scan  # not kept: the reader may load next time
		reader.read(bytes, scan)
	else:
		TextFormat.new(bytes, scan).resource_file()
	if _scans.size() >= _SCANS_KEPT:
		_scans.clear()
	_scans[key] = scan
	return scan


## Keep `scan`, made by the same reader of the text file `bytes` (scene_text.gd reads a scene it
## writes once, for both its checks and this gate's, which then finds it when the file is loaded).
static func keep(bytes: PackedByteArray, scan: Scan) -> void:
	if _scans.size() >= _SCANS_KEPT:
		_scans.clear()
	_scans[_scan_key(bytes)] = scan


## What a scan of `bytes` depends on: the bytes, less the file's own uid in the header line of a
## text file (files alike but for their uid, as every file the bridge writes is, read alike). Only a
## header of ASCII in the exact form the saver writes is taken apart (its text is then exactly its
## bytes, and the uid nothing but the uid); any other is kept whole.
## The one header not read by text_format.gd: this only tells the saver's own form, which every
## reader takes alike, from any other (kept whole, so never shared). Reading the header there cost
## 41 us a key against 5 (every load of a request makes one).
static func _scan_key(bytes: PackedByteArray) -> String:
	var header: String = ""
	var rest: PackedByteArray = bytes
	var newline: int = bytes.find(10)
	if newline >= 0 and bytes.slice(0, 4).get_string_from_ascii() not in ["RSRC", "RSCC"]:
		var head: PackedByteArray = bytes.slice(0, newline)
		var text: String = head.get_string_from_ascii()
		var saved: RegExMatch = _saved_header.search(text) if text.to_ascii_buffer() == head else null
		if saved != null:
			header = saved.get_string(1) + saved.get_string(2)
			rest = bytes.slice(newline)
	var hashing: HashingContext = HashingContext.new()
	hashing.start(HashingContext.HASH_SHA256)
	hashing.update(rest)
	return "%d:%s:%s" % [header.length(), header, hashing.finish().hex_encode()]


## Why the engine must not load a file whose scan is `scan`: [code, reason], or MAY when it may.
## What was read before a reader stopped is what the engine would have acted on before it stopped
## too: a script there is reported as such.
static func judge(scan: Scan) -> Array:
	for entry: Dictionary in scan.classes:
		var type: String = entry["type"]
		if not ClassDB.class_exists(type):
			return [
				Job.UNSAFE_RESOURCE,
				(
					"carries code: %s is of class %s, which the engine does not know (a script class?)"
					% [entry["where"], JSON.stringify(type)]
				)
			]
		# An ext_resource's type is a hint: the file it names is judged when it loads (a script then
		# comes as a stand-in, for a request that reads scenes).
		var named_script: bool = entry["where"].begins_with("[ext_resource") and type == "Script"
		if named_script and job != null and job.script_stand_ins:
			continue
		if ClassDB.is_parent_class(type, "Script") or ClassDB.is_parent_class(type, "GDExtension"):
			return [Job.UNSAFE_RESOURCE, "carries code: %s is a %s" % [entry["where"], type]]
	# A scene's loader stores a node's `script` without running it; any script a file names through
	# the gate comes as a stand-in (see _stand_in()), and a script made in the file itself is refused
	# above. A file naming one inline (Resource("...")) is not read so: the engine may take that one
	# from its cache, past the gate, as the real script.
	var stand_ins: bool = job != null and job.script_stand_ins
	if stand_ins and not scan.inline_load.is_empty():
		return [
			Job.UNSAFE_RESOURCE,
			(
				"cannot be vouched for: it names a file inline (%s), which the engine may take from its cache"
				% scan.inline_load
			)
		]
	if not scan.script_set.is_empty() and not stand_ins:
		return [Job.UNSAFE_RESOURCE, "carries code: it sets a script in %s" % scan.script_set]
	if not scan.corrupt.is_empty():
		return [Job.LOAD_FAILED, "is not a valid resource file: %s (ERR_FILE_CORRUPT)" % scan.corrupt]
	if not scan.unreadable.is_empty() or not scan.finished:
		var why: String = (
			scan.unreadable if not scan.unreadable.is_empty() else "the check stopped before the end of the file"
		)
		return [Job.UNSAFE_RESOURCE, "cannot be vouched for: %s; the engine is not asked to load it" % why]
	for value: Dictionary in scan.file_values:
		var fault: Array = opened_file_fault(value["path"])
		if fault.size() != 2:
			return [Job.UNSAFE_RESOURCE, _CHECK_FAILED]
		if fault != MAY:
			return [fault[0], "names %s in %s: %s" % [fault[1], value["where"], JSON.stringify(value["path"])]]
	return MAY


## Why the engine must not open `named`, a path a property hinted as a file gives it to open by
## itself (FileAccess, not the loaders, so not through this gate): [code, what it is], or MAY when
## it may ("" names nothing). Files and requests (props.gd) are held to this one rule.
static func opened_file_fault(named: String) -> Array:
	if named.is_empty():
		return MAY
	if not Paths.opens_inside(named):
		return [Job.PATH_OUTSIDE_PROJECT, "a file outside the project"]
	if named.get_extension().to_lower() in code_extensions():
		return [Job.UNSAFE_RESOURCE, "a script"]
	return MAY


## An imported asset: refused when its import is unsafe or not current, else the kept copy while
## its import has not changed, else loaded now (through the engine's importer) and kept.
func _asset(path: String, real: String, original_path: String) -> Variant:
	var imported: GDScript = own_script(_IMPORTED)
	if imported == null:
		var why: String = "cannot be vouched for: the bridge's import checks did not load (is its install whole?)"
		return _refuse(path, Job.UNSAFE_RESOURCE, why, original_path)
	var sections: Array[Dictionary] = imported.config(real + ".import")
	# The engine's importer parses the whole .import as it loads the asset, its values made as
	# objects (found by a red-team read: an Object(GDScript, ...) there ran, with importer="keep").
	var inert: String = imported.inert(real + ".import")
	if not inert.is_empty():
		return _refuse(path, Job.UNSAFE_RESOURCE, "cannot be loaded: %s" % inert, original_path)
	# allow_scripts lifts the script rule (an import remapped to a script loads it), not the confinement.
	var code: PackedStringArray = PackedStringArray() if job.allow_scripts else code_extensions()
	var unsafe: Array = imported.unsafe_import(sections, code)
	if not unsafe[0].is_empty():
		var why: String = (
			"has not been imported by the engine: %s" if unsafe[0] == Job.NOT_IMPORTED else "cannot be loaded: %s"
		)
		return _refuse(path, unsafe[0], why % unsafe[1], original_path)
	var problem: String = imported.problem(path, real, sections)
	if not problem.is_empty():
		return _refuse(path, Job.NOT_IMPORTED, "has not been imported by the engine: %s" % problem, original_path)
	var stamp: Array = _import_stamp(path)
	var kept: Array = _assets.get(path, [])
	_assets.erase(path)  # put back last: the most recently used asset is the last to go
	if kept.is_empty() or kept[0] != stamp:
		_loading_asset[path] = true
		kept = [stamp, ResourceLoader.load(path, "", ResourceLoader.CACHE_MODE_IGNORE)]
		_loading_asset.erase(path)
		if kept[1] == null:
			return ERR_FILE_CORRUPT
	_assets[path] = kept
	while _assets.size() > _ASSETS_KEPT:
		_assets.erase(_assets.keys()[0])
	return kept[1]


## The bridge's script at `relative` (below its folder, where job.gd is), compiled once; null when
## it does not load (a broken or half-upgraded install), and the caller then refuses what it was
## needed for: never a file let through unread. It loads as between requests, when the gate lets
## through the bridge's own files alone (with the request's job set, it would be refused).
static func own_script(relative: String) -> GDScript:
	if not _own_scripts.has(relative):
		var serving: Job = job
		job = null
		var script: Resource = load((Job as Script).resource_path.get_base_dir().path_join(relative))
		job = serving
		if not (script is GDScript and (script as GDScript).can_instantiate()):
			return null
		_own_scripts[relative] = script
	return _own_scripts[relative]


## When an asset's import last changed: its .import file and the editor's record of the import.
static func _import_stamp(res: String) -> Array:
	var record: String = "res://.godot/imported/%s-%s.md5" % [res.get_file(), res.md5_text()]
	return [FileAccess.get_modified_time(res + ".import"), FileAccess.get_modified_time(record)]


## A script a scene names, for a request that reads scenes (Job.script_stand_ins): not loaded, and not
## a failure. The engine gets a plain Resource named by the script's path, which a SceneState stores as
## the node's `script` (nothing runs it: the bridge never instantiates a scene); a resource file that
## sets it on a sub-resource gets an error from the engine's set_script(), and no script.
static func _stand_in(path: String) -> Resource:
	var stand_in: Resource = Resource.new()
	stand_in.resource_name = path
	_refused.append(stand_in)
	return stand_in


## Fail the request for `path` and hand the engine a placeholder, which ends this load there.
static func _refuse(path: String, code: String, why: String, original_path: String = "") -> Resource:
	var placeholder: Resource = Resource.new()
	_refused.append(placeholder)
	if job == null:
		push_error("gdres: %s %s; not loaded" % [path, why])
		return placeholder
	if code == Job.NOT_IMPORTED and path not in job.unimported:
		job.unimported.append(path)
	var shown: String = path
	if not original_path.is_empty() and original_path != path:
		shown = "%s (the remap of %s)" % [path, original_path]
	if path != _root:
		shown += " (%s)" % _referrer(path)
	if code == Job.UNSAFE_RESOURCE and (why.begins_with("carries code") or why.begins_with("is a script")):
		why += "; loading it would run that code, so it is loaded only with allow_scripts: true"
	job.fail(code, "%s: %s %s" % [_where, shown, why], _where)
	return placeholder


## Which file made the engine load `path`: the last one passed that names it, or the file the load
## started from.
static func _referrer(path: String) -> String:
	var files: Array = _passed.keys()
	files.reverse()
	for file: String in files:
		if path in _passed[file]:
			return "named in %s" % file
	return "loaded with %s" % _root


## The res path a load recorded by a reader names (relative paths against `file`'s folder).
static func named(load: Dictionary, file: String) -> String:
	var named: String = load["path"]
	if named.is_empty() or named.begins_with("uid://"):
		var id: int = ResourceUID.text_to_id(load["uid"] if named.is_empty() else named)
		return ResourceUID.get_id_path(id) if ResourceUID.has_id(id) else ""
	if named.contains("://") or named.is_absolute_path():
		return named
	return file.get_base_dir().path_join(named).simplify_path()


## The extensions the engine loads without an import (its loaders are all registered at start-up).
static func _loadable_extension_list() -> PackedStringArray:
	if _loadable_extensions.is_empty():
		# The empty type asks every loader for all its extensions; "Resource" is no catch-all (each
		# loader answers only for the types it makes: the compressed-texture loader leaves out .ctex).
		_loadable_extensions = ResourceLoader.get_recognized_extensions_for_type("")
	return _loadable_extensions


## The extensions of files that are code: those of the loaders that make a Script or a GDExtension
## (from the engine, so a module's language counts), and GDScript's, C#'s and GDExtension's.
## Never empty once whole: an empty list is one cut short (see MAY), which _verdict() refuses.
static func code_extensions() -> PackedStringArray:
	if _code_extensions.is_empty():
		var found: PackedStringArray = ["gd", "gdc", "cs", "gdextension"]
		var resource_formats: PackedStringArray = ResourceLoader.get_recognized_extensions_for_type("PackedScene")
		for type: String in ["Script", "GDExtension"]:
			for extension: String in ResourceLoader.get_recognized_extensions_for_type(type):
				if extension not in resource_formats and extension not in ["tres", "res"]:
					if extension.to_lower() not in found:
						found.append(extension.to_lower())
		_code_extensions = found
	return _code_extensions
