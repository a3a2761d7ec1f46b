extends MainLoop
## Build the shadow project that the editor's import runs on, from values read and checked, never
## from the project's files as they are (gdres/serving/imports.py runs the import on it).
##
## `godot --import` starts the editor, which loads whatever the project names: its settings
## (`gui/theme/custom` and its like are loaded at start), its `.godot/` folder, and every value of a
## `.import` file (the editor's ConfigFile parser loads a `Resource("…")` while it reads). So the
## shadow holds only:
## - the source bytes of each asset to import (and of the raw files a scene asset names);
## - each asset's `.import`, written anew: the importer's name, the asset's uid, and of its
##   `[params]` only the options its importer declares, each of the type the importer declares.
##   A value that makes the engine load or create an object, names a script, a file outside the
##   project or a file the importer would write, refuses the asset;
## - a `project.godot` with only the settings that change how assets import, each of its type.
## Nothing of the project's `.godot/` goes in: an asset to import has no usable artefacts.
##
## What an importer declares comes from this engine's own editor (`OPTIONS`: the `.import` files it
## wrote for one stand-in asset per importer; EditorFileSystem::_reimport_file writes every option
## of the importer's get_import_options(), with its default, even when the import fails). The
## editor reads from a `.import` only those options (the same loop over get_import_options()), so
## leaving out the others changes nothing of the import.
##
## Run behind the wall (reads: the project; writes: the shadow), with the safe settings pack:
## godot --headless --path PROJECT --main-pack PACK -s shadow.gd -- PROJECT SHADOW OPTIONS NEEDED
## NEEDED: a file of res:// paths of the assets to import, one a line; `*` alone: every asset.
## Prints one line `SHADOW <json>`: {"imported": [res path...], "refused": {res path: why}}.

const Paths = preload("../safety/paths.gd")
const Scan = preload("../formats/scan.gd")
const TextFormat = preload("../formats/text_format.gd")
const Gate = preload("../safety/gate.gd")
const Imported = preload("../safety/imported.gd")

## Importers of assets that are used as they are, or never: nothing to import.
const _NOT_IMPORTED: Array[String] = ["keep", "skip"]
## The extensions the editor's importers read (their recognized extensions in 4.4-4.6: textures,
## fonts, sounds, translations, scenes, shaders): the only files that go into the shadow as assets,
## with a `.import` or (imported with the importer's defaults, as the editor does) without one. A
## file of another kind is refused whatever its `.import` says: the engine reads some files by their
## name alone (override.cfg, project.binary, a .remap), and in the shadow they would act unchecked.
const _IMPORTED_EXTENSIONS: Array[String] = [
	"png",
	"jpg",
	"jpeg",
	"webp",
	"bmp",
	"tga",
	"svg",
	"svgz",
	"hdr",
	"exr",
	"dds",
	"ktx",
	"ktx2",
	"ttf",
	"ttc",
	"otf",
	"otc",
	"woff",
	"woff2",
	"pfb",
	"pfm",
	"fnt",
	"font",
	"wav",
	"ogg",
	"mp3",
	"csv",
	"glb",
	"gltf",
	"fbx",
	"dae",
	"obj",
	"glsl",
]
## Scene formats the editor imports by running another program (Blender): never in a shadow.
const _PROGRAM_EXTENSIONS: Array[String] = ["blend"]
## Options whose String value names a file (PROPERTY_HINT_FILE, _SAVE_FILE or _DIR in the importers'
## get_import_options(), Godot 4.6): what a non-empty value means. "texture": an asset the import
## reads (ResourceImporterTexture's normal map for roughness), imported with it; "script": a script
## the importer runs (EditorScenePostImport); "writes": where the importer writes files of its own.
const _PATH_OPTIONS: Dictionary = {
	"roughness/src_normal": "texture",
	"import_script/path": "script",
	"atlas_file": "writes",
	"materials/extract_path": "writes",
}
## Project settings that change what an import makes (read by the importers and the texture
## compressor in Godot 4.4-4.6); any other setting stays at its default in the shadow.
const _IMPORT_SETTINGS: Array[String] = [
	"rendering/textures/vram_compression/import_s3tc_bc",
	"rendering/textures/vram_compression/import_etc2_astc",
	"rendering/textures/vram_compression/compress_with_gpu",
	"rendering/textures/lossless_compression/force_png",
	"rendering/textures/webp_compression/compression_method",
	"rendering/textures/webp_compression/lossless_compression_factor",
	"editor/import/atlas_max_width",
	"editor/import/use_multiple_threads",
]
## The raw files a scene asset may name (a glTF's buffers and images, an OBJ's material library),
## copied as bytes when they have no `.import` of their own.
const _RAW_EXTENSIONS: Array[String] = ["bin", "mtl", "png", "jpg", "jpeg", "webp", "ktx2"]
const _MAX_DEPTH: int = 16
const _NUMBERS: Array[int] = [TYPE_INT, TYPE_FLOAT]

var _shadow: String = ""
## Importer -> {"type": resource type, "params": {option: default}}.
var _importers: Dictionary = {}
var _imported: PackedStringArray = []
var _refused: Dictionary = {}
var _seen: Dictionary = {}


func _initialize() -> void:
	var args: PackedStringArray = OS.get_cmdline_user_args()
	Paths.set_root(args[0])
	_shadow = args[1]
	_importers = _declared(args[2])
	var needed: PackedStringArray = FileAccess.get_file_as_string(args[3]).split("\n", false)
	if needed.size() == 1 and needed[0] == "*":
		needed = _every_asset()
		needed = PackedStringArray(Array(needed).filter(_not_current))
	for source: String in needed:
		_take(source, 0)
	_write_project()
	print("SHADOW " + JSON.stringify({"imported": _imported, "refused": _refused}))


func _process(_delta: float) -> bool:
	return true


## What each importer of this engine declares, from the `.import` files its editor wrote.
static func _declared(folder: String) -> Dictionary:
	var found: Dictionary = {}
	for name: String in DirAccess.get_files_at(folder):
		var config: ConfigFile = ConfigFile.new()
		if not name.ends_with(".import") or config.load(folder.path_join(name)) != OK:
			continue
		var importer: String = config.get_value("remap", "importer", "")
		# A stand-in is named for the importer it asked for: an engine without that importer
		# imported it with another, which says nothing of the one asked for.
		if importer != name.get_slice(".", 0):
			continue
		var params: Dictionary = {}
		if config.has_section("params"):
			for key: String in config.get_section_keys("params"):
				params[key] = config.get_value("params", key)
		found[importer] = {"type": config.get_value("remap", "type", ""), "params": params}
	return found


## Every asset of the project as the editor finds them (Paths.scanned_files()): files that have a
## `.import` beside them or are of a kind it imports by itself.
static func _every_asset() -> PackedStringArray:
	var found: PackedStringArray = []
	for path: String in Paths.scanned_files():
		var extension: String = path.get_extension().to_lower()
		if extension != "import" and (FileAccess.file_exists(path + ".import") or extension in _IMPORTED_EXTENSIONS):
			found.append(path)
	return found


## Whether the asset at res:// `source` needs importing: its artefacts are missing or stale, as the
## serving engine judges them (safety/imported.gd).
static func _not_current(source: String) -> bool:
	var real: String = Paths.real(source)
	return not Imported.problem(source, real, Imported.config(real + ".import")).is_empty()


## Put the asset at res:// `source` in the shadow, or note why it is refused.
func _take(source: String, depth: int) -> void:
	if _seen.has(source):
		return
	_seen[source] = true
	var why: String = _put(source, depth)
	if not why.is_empty():
		_refused[source] = why


## Put `source`, its `.import` written anew, and what it needs in the shadow; return why not, or "".
func _put(source: String, depth: int) -> String:
	var why: String = _source_problem(source, depth)
	var settings: ConfigFile = ConfigFile.new()
	if why.is_empty():
		why = _read_settings(source, settings)
	var importer: String = settings.get_value("remap", "importer", "") if why.is_empty() else ""
	if not why.is_empty() or importer in _NOT_IMPORTED:
		return why
	if importer.is_empty() and FileAccess.file_exists(Paths.real(source + ".import")):
		# Without an importer the editor would take the file for one of its own kinds: a resource
		# file (a .tres named by a glTF) would be loaded as it is, script and all.
		return "its .import file names no importer"
	var written: ConfigFile = ConfigFile.new()
	why = _rewritten(source, importer, settings, written, depth)
	if why.is_empty():
		why = _take_named(source, Paths.real(source), source.get_extension().to_lower(), depth)
	var target: String = _shadow.path_join(source.trim_prefix("res://"))
	if why.is_empty():
		why = _copy(Paths.real(source), target)
	if why.is_empty() and not importer.is_empty():
		var saved: Error = written.save(target + ".import")
		why = "" if saved == OK else "its .import could not be written in the shadow (%s)" % error_string(saved)
	if why.is_empty():
		_imported.append(source)
	return why


## Why the file at `source` is no asset to import, or "".
static func _source_problem(source: String, depth: int) -> String:
	if depth > _MAX_DEPTH:
		return "it is named through more than %d other assets" % _MAX_DEPTH
	var real: String = Paths.real(source)
	if _leaves_root(source) or not Paths.inside(real) or not FileAccess.file_exists(real):
		return "it is not a file inside the project"
	if _hidden(source):
		return "it is hidden (a name that begins with a dot), and the editor imports no hidden file"
	var extension: String = source.get_extension().to_lower()
	if extension in _PROGRAM_EXTENSIONS:
		return "the editor imports a .%s file by running another program, which the bridge does not run" % extension
	if extension in Gate.code_extensions():
		return "it is a script or a native library"
	if extension in ResourceLoader.get_recognized_extensions_for_type(""):
		# A resource file is loaded as it is, never imported: in the shadow, the editor (or an
		# importer that names it) would load it, and whatever script it carries.
		return "it is a resource file, which the engine loads as it is, not an asset to import"
	if extension not in _IMPORTED_EXTENSIONS:
		# Only what an importer reads goes in: a file the engine reads by its name alone
		# (override.cfg, project.binary, a .remap) would act on the shadow's editor unchecked.
		return "the editor's importers take no .%s file" % extension
	return ""


## Whether a res:// path, simplified, climbs above the project's folder: checked against the real
## project it may come back in, but the shadow lies elsewhere, and there it would lead out.
static func _leaves_root(path: String) -> bool:
	var inner: String = path.simplify_path().trim_prefix("res://")
	return inner == ".." or inner.begins_with("../")


## Whether a res:// path has a hidden part (the editor skips those, `.godot/` among them).
static func _hidden(path: String) -> bool:
	for part: String in path.trim_prefix("res://").split("/", false):
		if part.begins_with("."):
			return true
	return false


## Read the `.import` of `source` into `settings` (left empty when it has none); return why it
## cannot be imported, or "".
static func _read_settings(source: String, settings: ConfigFile) -> String:
	var import_real: String = Paths.real(source + ".import")
	if FileAccess.file_exists(import_real):
		if not Paths.inside(import_real):
			return "its .import file leads out of the project"
		return _read_config(import_real, settings, "its .import file")
	if source.get_extension().to_lower() not in _IMPORTED_EXTENSIONS:
		return "it has no .import file, and the editor imports no .%s file by itself" % source.get_extension()
	return ""


## Fill `written` with the `.import` of `source` for the shadow: `importer`, the asset's uid, and the
## options of `settings` its importer declares, each checked; return why not, or "". An asset with
## no importer named (no `.import`) gets none: the editor imports it with its defaults.
func _rewritten(source: String, importer: String, settings: ConfigFile, written: ConfigFile, depth: int) -> String:
	if importer.is_empty():
		return ""
	if not _importers.has(importer):
		return "its importer %s is not one this Godot has" % importer
	var uid: Variant = settings.get_value("remap", "uid", "")
	written.set_value("remap", "importer", importer)
	written.set_value("remap", "type", _importers[importer]["type"])
	if typeof(uid) == TYPE_STRING and ResourceUID.text_to_id(uid) != ResourceUID.INVALID_ID:
		written.set_value("remap", "uid", uid)
	written.set_value("deps", "source_file", source)
	var declared: Dictionary = _importers[importer]["params"]
	for option: String in declared:
		if settings.has_section_key("params", option):
			var checked: Array = _checked(option, settings.get_value("params", option), declared[option], depth)
			if checked[0] is String:
				return checked[0]
			written.set_value("params", option, checked[1])
	return ""


## Read the config file at `real` into `config` when it makes the engine load or create nothing:
## the gate's reader (formats/text_format.gd) looks first, the engine's own parser reads only then.
## Return why it was not read, or "".
static func _read_config(real: String, config: ConfigFile, what: String) -> String:
	var inert: String = Imported.inert(real, what)
	if not inert.is_empty():
		return inert
	if config.parse(FileAccess.get_file_as_bytes(real).get_string_from_utf8()) != OK:
		return "%s cannot be parsed by the engine" % what
	return ""


## [null, the value to write] for option `option` of value `value`, whose importer's default is
## `default`; or [why the asset is refused].
func _checked(option: String, value: Variant, default: Variant, depth: int) -> Array:
	var typed: Array = _typed(option, value, default)
	if typed[0] is String:
		return typed
	if _PATH_OPTIONS.has(option) and not str(typed[1]).is_empty():
		var why: String = _path_option(option, typed[1], depth)
		return [why] if not why.is_empty() else typed
	var why: String = _inert(option, typed[1])
	return [why] if not why.is_empty() else typed


## [null, `value`] when it is of the type of `default`, or [why not]. An option whose default is null
## holds an object (a root script) or heads a group: only null is inert there. A number stands for
## either kind of number: an importer's default need not be of the type it declares (the MP3
## importer declares loop_offset a float with the default 0, an int), and the importer converts.
static func _typed(option: String, value: Variant, default: Variant) -> Array:
	if typeof(default) == TYPE_NIL:
		return [null, null] if value == null else ["its import option %s names an object" % option]
	if typeof(default) in _NUMBERS and typeof(value) in _NUMBERS:
		return [null, value]
	if typeof(value) != typeof(default):
		var types: Array = [type_string(typeof(value)), type_string(typeof(default))]
		return ["its import option %s is a %s, where the importer takes a %s" % ([option] + types)]
	return [null, value]


## Why the file an option of _PATH_OPTIONS names refuses its asset, or "" (a texture the import
## reads, put in the shadow too).
func _path_option(option: String, value: String, depth: int) -> String:
	match _PATH_OPTIONS[option]:
		"texture":
			var named: String = _project_path(value)
			if named.is_empty():
				return "its import option %s names %s, outside the project" % [option, value]
			_take(named, depth + 1)
			if _refused.has(named):
				return "its import option %s names %s, which is not imported: %s" % [option, named, _refused[named]]
			return ""
		"script":
			return "its import option %s names %s, a script the importer would run" % [option, value]
	return "its import option %s names %s, where the importer would write files" % [option, value]


## Why a value (or what it holds) names a file, or "": strings that are paths, except a subresource's
## path whose `…/enabled` beside it is false (the scene importer neither loads nor writes it then).
static func _inert(where: String, value: Variant, owner: Dictionary = {}, key: String = "", depth: int = 0) -> String:
	if depth > _MAX_DEPTH:
		return "its import option %s is nested more than %d levels deep" % [where, _MAX_DEPTH]
	match typeof(value):
		TYPE_STRING, TYPE_STRING_NAME:
			var text: String = value
			var path: bool = text.contains("://") or text.is_absolute_path() or (key.ends_with("path") and text != "")
			if path and not _disabled(owner, key):
				return "its import option %s names %s, a file the importer would open" % [where, text]
		TYPE_ARRAY:
			for item: Variant in value:
				var why: String = _inert(where, item, {}, "", depth + 1)
				if not why.is_empty():
					return why
		TYPE_DICTIONARY:
			for item_key: Variant in value:
				if typeof(item_key) != TYPE_STRING and typeof(item_key) != TYPE_STRING_NAME:
					return "its import option %s has a key that is not a name" % where
				var why: String = _inert("%s/%s" % [where, item_key], value[item_key], value, item_key, depth + 1)
				if not why.is_empty():
					return why
		TYPE_OBJECT, TYPE_RID, TYPE_CALLABLE, TYPE_SIGNAL, TYPE_NODE_PATH:
			return "its import option %s holds a %s" % [where, type_string(typeof(value))]
	return ""


static func _disabled(owner: Dictionary, key: String) -> bool:
	if not key.ends_with("/path"):
		return false
	return owner.get(key.trim_suffix("/path") + "/enabled", null) == false


## The res:// path of a file inside the project that an import option names, or "".
static func _project_path(named: String) -> String:
	var path: String = named if named.contains("://") or named.is_absolute_path() else "res://" + named
	var real: String = Paths.real(path)
	var inside: bool = Paths.inside(real) and not _leaves_root(path) and not named.begins_with("uid://")
	return Paths.to_res(real) if inside else ""


## Take in what a scene asset names beside itself: a glTF's buffers and images, an OBJ's material
## library and its textures. An asset among them is imported with it, a raw file goes in as bytes;
## return why the asset is refused (it names a file outside the project, or one that is neither), or "".
## The named files are checked where the importer would open them: a URI the shadow lacks would be
## looked for by the importer on its own, and its bytes end up in the artefact (a glTF's buffer).
func _take_named(source: String, real: String, extension: String, depth: int) -> String:
	var named: PackedStringArray = []
	match extension:
		"gltf":
			named = _gltf_uris(JSON.parse_string(FileAccess.get_file_as_string(real)))
		"glb":
			named = _gltf_uris(_glb_json(real))
		"obj", "mtl":
			for line: String in FileAccess.get_file_as_string(real).split("\n"):
				var words: PackedStringArray = line.strip_edges().split(" ", false)
				if words.size() >= 2 and (words[0] == "mtllib" or words[0].begins_with("map_")):
					named.append(words[words.size() - 1])
	for uri: String in named:
		if uri.begins_with("data:"):
			continue
		var decoded: String = uri.uri_decode()
		var path: String = source.get_base_dir().path_join(decoded).simplify_path()
		var file_real: String = Paths.real(path)
		if decoded.contains("://") or decoded.is_absolute_path() or _leaves_root(path) or not Paths.inside(file_real):
			return "it names %s, outside the project" % uri
		var why: String = _take_file(path, file_real, depth)
		if not why.is_empty():
			return "it names %s, which %s" % [path, why]
	return ""


## Put a file a scene asset names in the shadow: an asset (it has a `.import`) imported too, a raw file
## as bytes; return why not (after "which"), or "".
func _take_file(path: String, real: String, depth: int) -> String:
	if FileAccess.file_exists(real + ".import"):
		_take(path, depth + 1)
		return "is not imported: %s" % _refused[path] if _refused.has(path) else ""
	if path.get_extension().to_lower() not in _RAW_EXTENSIONS or _hidden(path):
		return "is neither an asset nor a raw file"
	if _seen.has(path) or not FileAccess.file_exists(real):
		return ""
	_seen[path] = true
	var why: String = _take_named(path, real, path.get_extension().to_lower(), depth + 1)
	if why.is_empty():
		why = _copy(real, _shadow.path_join(path.trim_prefix("res://")))
	return why


static func _gltf_uris(json: Variant) -> PackedStringArray:
	var uris: PackedStringArray = []
	if typeof(json) != TYPE_DICTIONARY:
		return uris
	for kind: String in ["buffers", "images"]:
		var items: Variant = json.get(kind, [])
		if typeof(items) != TYPE_ARRAY:
			continue
		for item: Variant in items:
			if typeof(item) == TYPE_DICTIONARY and typeof(item.get("uri")) == TYPE_STRING:
				uris.append(item["uri"])
	return uris


## The JSON chunk of a binary glTF (a 12-byte header, then chunks of length, type, bytes).
static func _glb_json(real: String) -> Variant:
	var file: FileAccess = FileAccess.open(real, FileAccess.READ)
	if file == null or file.get_length() < 20:
		return null
	file.seek(12)
	var length: int = file.get_32()
	if file.get_32() != 0x4E4F534A or length > file.get_length() - 20:  # "JSON"
		return null
	return JSON.parse_string(file.get_buffer(length).get_string_from_utf8())


## Copy the bytes of `real` to `target` (folders made); return why not, or "".
static func _copy(real: String, target: String) -> String:
	DirAccess.make_dir_recursive_absolute(target.get_base_dir())
	var bytes: PackedByteArray = FileAccess.get_file_as_bytes(real)
	if bytes.is_empty() and FileAccess.get_open_error() != OK:
		return "it could not be read (%s)" % error_string(FileAccess.get_open_error())
	var file: FileAccess = FileAccess.open(target, FileAccess.WRITE)
	if file == null or not file.store_buffer(bytes):
		return "it could not be copied into the shadow"
	return ""


## The shadow's project.godot: the settings of the project's that change how assets import, each of
## the type the engine gives it, the importers' defaults the project set (checked as a `.import`'s
## options are), and importers that run other programs turned off.
func _write_project() -> void:
	var project: ConfigFile = ConfigFile.new()
	var why: String = _read_config(Paths.absolute("res://project.godot"), project, "project.godot")
	var lines: PackedStringArray = ["config_version=5", "", "[application]", "", 'config/name="gdres import"']
	var sections: Dictionary = {
		"filesystem": ["import/blender/enabled=false", "import/fbx2gltf/enabled=false"],
	}
	if not why.is_empty():
		push_warning("gdres: the shadow imports with default settings: %s" % why)
		project = ConfigFile.new()
	for setting: String in _IMPORT_SETTINGS:
		var section: String = setting.get_slice("/", 0)
		var key: String = setting.trim_prefix(section + "/")
		if not project.has_section_key(section, key) or not ProjectSettings.has_setting(setting):
			continue
		var value: Variant = project.get_value(section, key)
		var kind: int = typeof(ProjectSettings.get_setting(setting))
		if typeof(value) == TYPE_INT and kind == TYPE_FLOAT:
			value = float(value)
		if typeof(value) == kind and kind in [TYPE_BOOL, TYPE_INT, TYPE_FLOAT]:
			sections.get_or_add(section, []).append("%s=%s" % [key, var_to_str(value)])
	if project.has_section("importer_defaults"):
		for importer: String in project.get_section_keys("importer_defaults"):
			var defaults: Variant = project.get_value("importer_defaults", importer)
			if _importers.has(importer) and typeof(defaults) == TYPE_DICTIONARY:
				var kept: Dictionary = _kept_defaults(defaults, _importers[importer]["params"])
				if not kept.is_empty():
					sections.get_or_add("importer_defaults", []).append("%s=%s" % [importer, var_to_str(kept)])
	for section: String in sections:
		lines.append_array(["", "[%s]" % section, ""])
		lines.append_array(sections[section])
	var file: FileAccess = FileAccess.open(_shadow.path_join("project.godot"), FileAccess.WRITE)
	if file != null:
		file.store_string("\n".join(lines) + "\n")


## The defaults a project sets for an importer, less any that a `.import` could not hold either.
func _kept_defaults(defaults: Dictionary, declared: Dictionary) -> Dictionary:
	var kept: Dictionary = {}
	for option: Variant in defaults:
		if typeof(option) == TYPE_STRING and declared.has(option) and not _PATH_OPTIONS.has(option):
			var checked: Array = _checked(option, defaults[option], declared[option], _MAX_DEPTH)
			if checked[0] == null:
				kept[option] = checked[1]
	return kept
