extends RefCounted
## An asset's `.import` file as its settings: the importer, the resource type, the `[params]` the
## editor imports it with, and each option the importer declares.
##
## What an importer declares comes from this engine's own editor (gdres/serving/imports.py
## importer_options(): the `.import` it wrote for one stand-in asset per importer, every option with
## its default), so the names and defaults are those of the Godot that imports. The allowed values of
## the enum options are not in those files (the editor keeps its hint strings to itself): _ENUMS has
## them for the importers users set most, from the importers' get_import_options() in Godot 4.4-4.6
## (editor/import/resource_importer_*.cpp), shown only for options this engine declares.
##
## Read with the bridge's own reader of the engine's config syntax (formats/text_format.gd), never
## ConfigFile: the engine's parser loads a `Resource("...")` value as it reads the file.

const Job = preload("../job.gd")
const Paths = preload("../safety/paths.gd")
const Scan = preload("../formats/scan.gd")
const TextFormat = preload("../formats/text_format.gd")
const Imported = preload("../safety/imported.gd")

const _CHANNELS: Array = [
	"Red",
	"Green",
	"Blue",
	"Alpha",
	"Inverted Red",
	"Inverted Green",
	"Inverted Blue",
	"Inverted Alpha",
	"Unused",
	"Zero",
	"One"
]
## Importer -> option -> its enum's labels, in the order of their values.
const _ENUMS: Dictionary = {
	"texture":
	{
		"compress/mode": ["Lossless", "Lossy", "VRAM Compressed", "VRAM Uncompressed", "Basis Universal"],
		"compress/uastc_level": ["Fastest", "Faster", "Medium", "Slower", "Slowest"],
		"compress/hdr_compression": ["Disabled", "Opaque Only", "Always"],
		"compress/normal_map": ["Detect", "Enable", "Disabled"],
		"compress/channel_pack": ["sRGB Friendly", "Optimized"],
		"roughness/mode": ["Detect", "Disabled", "Red", "Green", "Blue", "Alpha", "Gray"],
		"process/channel_remap/red": _CHANNELS,
		"process/channel_remap/green": _CHANNELS,
		"process/channel_remap/blue": _CHANNELS,
		"process/channel_remap/alpha": _CHANNELS,
		"detect_3d/compress_to": ["Disabled", "VRAM Compressed", "Basis Universal"],
	},
	"wav":
	{
		"edit/loop_mode": ["Detect From WAV", "Disabled", "Forward", "Ping-Pong", "Backward"],
		"compress/mode": ["PCM (Uncompressed)", "IMA ADPCM", "Quite OK Audio"],
	},
	"font_data_dynamic":
	{
		"antialiasing": ["None", "Grayscale", "LCD Subpixel"],
		"hinting": ["None", "Light", "Full"],
		"subpixel_positioning":
		["Disabled", "Auto", "One Half of a Pixel", "One Quarter of a Pixel", "Auto (Except Pixel Fonts)"],
	},
}
## The JSON name of each type an option's default has (an option's type is its default's).
const _TYPES: Dictionary = {
	TYPE_BOOL: "bool", TYPE_INT: "int", TYPE_FLOAT: "float", TYPE_STRING: "string", TYPE_STRING_NAME: "string"
}

## The asset, res://.
var asset: String = ""
## Its `.import`, res://.
var path: String = ""
var importer: String = ""
var type: String = ""
## The file's text, split in lines.
var lines: PackedStringArray = []
## Each [params] key -> [its line's index, its value as read (OTHER for a composite one)].
var params: Dictionary = {}
## The index of the [params] header line (-1: none).
var params_header: int = -1
## Whether a value makes the engine load a file or make an object (a Resource("..."), an Object(...)):
## the import of the asset would be refused, so its settings are not changed here.
var makes_objects: bool = false


## Read the `.import` of the asset at res:// `p_asset`; fails the job when there is none, or it is
## not one the bridge can read.
func read(p_asset: String, job: Job, where: String) -> void:
	asset = p_asset
	path = asset + ".import"
	var real: String = Paths.real(path)
	if not Paths.inside(real) or not FileAccess.file_exists(real):
		job.fail(
			Job.NOT_FOUND,
			(
				"%s: %s has no .import beside it, so it is no imported asset (textures, sounds, fonts, scenes...)"
				% [where, asset]
			),
			where
		)
		return
	if real != Paths.absolute(path) or Paths.real(asset) + ".import" != real:
		job.fail(Job.INVALID_PATH, "%s: %s is a link; the bridge reads no settings through one" % [where, path], where)
		return
	var bytes: PackedByteArray = FileAccess.get_file_as_bytes(real)
	var scan: Scan = Scan.new()
	var sections: Array[Dictionary] = TextFormat.new(bytes, scan, true).config_file()
	var why: String = scan.unreadable if not scan.unreadable.is_empty() else scan.corrupt
	var text: String = bytes.get_string_from_utf8()
	if why.is_empty() and text.to_utf8_buffer() != bytes:
		why = "it is not UTF-8 text"
	elif why.is_empty() and text.replace("\r\n", "").contains("\r"):
		why = "its lines end in a bare CR"
	elif why.is_empty() and sections.filter(func(each: Dictionary) -> bool: return each["name"] == "params").size() > 1:
		why = "it has two [params] sections (the editor would take the last)"
	if not why.is_empty():
		job.fail(Job.LOAD_FAILED, "%s: %s cannot be read: %s" % [where, path, why], where)
		return
	makes_objects = not scan.loads.is_empty() or not scan.classes.is_empty()
	var remap: Dictionary = Imported.remap_values(sections)
	importer = str(remap.get("importer", ""))
	type = str(remap.get("type", ""))
	var values: Dictionary = Imported.section(sections, "params")
	lines = text.split("\n")
	var section: String = ""
	for i: int in lines.size():
		var line: String = lines[i].strip_edges()
		if line.begins_with("["):
			section = line.trim_prefix("[").get_slice("]", 0).strip_edges()
			if section == "params":
				params_header = i
		elif section == "params" and line.contains("="):
			var key: String = line.get_slice("=", 0).strip_edges()
			if values.has(key) and not params.has(key):
				params[key] = [i, values[key]]
	# A line that only looks like a setting (inside a string of several lines) would be edited instead
	# of the setting: every setting must be met on a line of its own, and none may span lines.
	for key: Variant in values:
		var value: Variant = values[key]
		if not params.has(key) or typeof(value) == TYPE_STRING and value != TextFormat.OTHER and value.contains("\n"):
			job.fail(
				Job.LOAD_FAILED, "%s: %s cannot be edited line by line (%s spans lines)" % [where, path, key], where
			)
			return


## The options importer `importer` declares, from the folder `folder` of the engine's own
## `.import` files: [{name, type, default, values?}], the groups left out; [] when it has none there.
func options(folder: String) -> Array[Dictionary]:
	var found: Array[Dictionary] = []
	var dir: DirAccess = DirAccess.open(folder)
	if dir == null or importer.is_empty():
		return found
	for name: String in dir.get_files():
		if not name.begins_with(importer + ".") or not name.ends_with(".import") or name.count(".") != 2:
			continue
		var sections: Array[Dictionary] = Imported.config(folder.path_join(name))
		var declared: Dictionary = Imported.section(sections, "params")
		var enums: Dictionary = _ENUMS.get(importer, {})
		for option: Variant in declared:
			var value: Variant = declared[option]
			if value == null:
				continue  # a group's header (Rendering=null), not an option
			var composite: bool = typeof(value) == TYPE_STRING and value == TextFormat.OTHER
			var entry: Dictionary = {
				"name": str(option),
				"type": "other" if composite else _TYPES.get(typeof(value), "other"),
				"default": value if typeof(value) in _TYPES and not composite else null
			}
			if enums.has(option):
				entry["values"] = enums[option]
			found.append(entry)
	return found


## A param's value as a reply shows it: as read, or for a composite value the text the file holds.
func shown(key: String) -> Variant:
	var value: Variant = params[key][1]
	if typeof(value) == TYPE_STRING and value == TextFormat.OTHER:
		return lines[params[key][0]].get_slice("=", 1).strip_edges()
	return value


## The file's text with `values` (key -> value) set in [params]: each one's line rewritten, or added at
## the section's end; every other byte as it was.
func with_params(values: Dictionary) -> PackedByteArray:
	var edited: PackedStringArray = lines.duplicate()
	var added: PackedStringArray = []
	for key: String in values:
		var line: String = "%s=%s" % [key, var_to_str(values[key])]
		if params.has(key):
			# A file checked out with Windows line ends keeps them.
			edited[params[key][0]] = line + ("\r" if edited[params[key][0]].ends_with("\r") else "")
		else:
			added.append(line)
	if not added.is_empty():
		var at: int = params_header + 1
		while at < edited.size() and not edited[at].strip_edges().begins_with("["):
			at += 1
		while at > params_header + 1 and edited[at - 1].strip_edges().is_empty():
			at -= 1
		if at == params_header + 1 and at < edited.size() and edited[at].strip_edges().is_empty():
			at += 1  # an empty section: after its blank line, as the editor writes it
		if params_header < 0:
			edited.append_array(["", "[params]", ""])
			at = edited.size()
		for i: int in added.size():
			edited.insert(at + i, added[i])
	return "\n".join(edited).to_utf8_buffer()
