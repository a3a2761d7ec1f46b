extends SceneTree
## Saves real binary resources with the running engine, crafts broken copies of one of them, runs
## safety/binary_format.gd over each, and prints one JSON line per file, then "DONE".
##
## Run: godot --headless -s tests/gdscript/binary_format_check.gd -- <workdir>
## Every file it writes is inside <workdir>. tests/engine/test_binary_format.py reads the lines.
##
## Each line: {"case", "kind", "unreadable", "classes", "loads", "script_set", "note"}, where kind is
## "clean" (must be vouched for), "scripted" (must show a script), "broken" (must be refused) or
## "crafted" (a hand-made but valid file; its checks are in the Python test).

const BinaryFormat = preload("../../gdscript/formats/binary_format.gd")
const Scan = preload("../../gdscript/formats/scan.gd")

const _MARKER: String = "MARKER_NAME_0123"
const _BLOB_SIZE: int = 9

var _dir: String = ""


func _init() -> void:
	var args: PackedStringArray = OS.get_cmdline_user_args()
	if args.size() != 1 or not DirAccess.dir_exists_absolute(args[0]):
		printerr("usage: godot --headless -s binary_format_check.gd -- <existing workdir>")
		quit(2)
		return
	_dir = args[0].simplify_path()
	_saved_cases()
	_crafted_cases()
	_fuzz_cases(["marker.res", "material.res", "scene.scn", "meta_sub.res", "class_name.res"], 400)
	print("DONE")
	quit()


# ----- files the engine saves ------------------------------------------------------------------


func _saved_cases() -> void:
	var node_script: Script = _write_script("node_tool.gd", "extends Node\n")
	var resource_script: Script = _write_script("tool.gd", "extends Resource\n")
	_save_and_scan("material", "material.res", _material(), "clean")
	_save_and_scan("mesh", "mesh.res", _mesh(), "clean")
	_save_and_scan("values", "values.res", _values(), "clean")
	_save_and_scan("typed", "typed.res", _typed(), "clean")
	_save_and_scan("meta_sub", "meta_sub.res", _meta_sub(), "clean")
	_save_and_scan("clean_scene", "clean_scene.scn", _clean_scene(), "clean")
	_save_and_scan("embedded_script", "embedded_script.res", _with_script(_embedded("extends Resource\n")), "scripted")
	_save_and_scan("external_script", "external_script.res", _with_script(resource_script), "scripted")
	_save_and_scan(
		"class_name_script",
		"class_name.res",
		_with_script(_embedded("class_name BinaryCheckThing\nextends Resource\n")),
		"scripted"
	)
	_save_and_scan("scripted_sub", "scripted_sub.res", _scripted_sub(), "scripted")
	_save_and_scan("typed_external_script", "typed_external_script.res", _typed_by_script(resource_script), "scripted")
	_save_and_scan(
		"typed_embedded_script",
		"typed_embedded_script.res",
		_typed_by_script(_embedded("extends Resource\n")),
		"scripted"
	)
	_save_and_scan("scene", "scene.scn", _scene(node_script), "scripted")
	_chain_cases()
	_save_and_scan("big_endian", "big_endian.res", _values(), "broken", ResourceSaver.FLAG_SAVE_BIG_ENDIAN)
	_save_and_scan("compressed", "compressed.res", _values(), "clean", ResourceSaver.FLAG_COMPRESS)
	_save_and_scan(
		"compressed_script",
		"compressed_script.res",
		_with_script(_embedded("extends Resource\n")),
		"scripted",
		ResourceSaver.FLAG_COMPRESS
	)
	var packed: PackedByteArray = FileAccess.get_file_as_bytes(_dir.path_join("compressed.res"))
	_report("compressed_cut", "broken", packed.slice(0, packed.size() - 40))
	_report("compressed_block_damaged", "broken", _patched(packed, packed.size() - 30, "garbage!".to_ascii_buffer()))
	_save_and_scan("too_deep", "too_deep.res", _deep(80), "broken")


## A .res that refers to another by external resource, and the same saved bundled and relative.
func _chain_cases() -> void:
	var base_path: String = _dir.path_join("base.res")
	var base: Resource = Resource.new()
	base.resource_name = "base"
	if not _saved("base", ResourceSaver.save(base, base_path)):
		return
	var loaded: Resource = ResourceLoader.load(base_path, "", ResourceLoader.CACHE_MODE_IGNORE)
	var note: Dictionary = {"target": base_path}
	_save_and_scan("chain", "chain.res", _pointing_at(loaded), "clean", 0, note)
	_save_and_scan("bundled", "bundled.res", _pointing_at(loaded), "clean", ResourceSaver.FLAG_BUNDLE_RESOURCES, note)
	DirAccess.make_dir_absolute(_dir.path_join("sub"))
	_save_and_scan(
		"relative", "sub/relative.res", _pointing_at(loaded), "clean", ResourceSaver.FLAG_RELATIVE_PATHS, note
	)
	_save_and_scan("marker", "marker.res", _marker(loaded), "clean", 0, note)


func _save_and_scan(
	name: String, file: String, resource: Resource, kind: String, flags: int = 0, note: Dictionary = {}
) -> void:
	var path: String = _dir.path_join(file)
	if _saved(name, ResourceSaver.save(resource, path, flags)):
		_report(name, kind, FileAccess.get_file_as_bytes(path), note)


func _saved(name: String, error: Error) -> bool:
	if error != OK:
		print(JSON.stringify({"case": name, "save_error": error_string(error)}))
	return error == OK


func _write_script(file: String, source: String) -> Script:
	var path: String = _dir.path_join(file)
	var out: FileAccess = FileAccess.open(path, FileAccess.WRITE)
	out.store_string(source)
	out.close()
	return ResourceLoader.load(path, "", ResourceLoader.CACHE_MODE_IGNORE)


func _embedded(source: String) -> GDScript:
	var script: GDScript = GDScript.new()
	script.source_code = source
	script.reload()
	return script


func _with_script(script: Script) -> Resource:
	var resource: Resource = Resource.new()
	resource.set_script(script)
	return resource


func _material() -> StandardMaterial3D:
	var gradient: Gradient = Gradient.new()
	gradient.add_point(0.5, Color.RED)
	var texture: GradientTexture1D = GradientTexture1D.new()
	texture.gradient = gradient
	var next: StandardMaterial3D = StandardMaterial3D.new()
	next.albedo_color = Color.BLUE
	var material: StandardMaterial3D = StandardMaterial3D.new()
	material.albedo_texture = texture
	material.next_pass = next
	material.roughness = 0.25
	return material


func _mesh() -> ArrayMesh:
	var vertices: PackedVector3Array = []
	var normals: PackedVector3Array = []
	for i: int in 30000:
		vertices.append(Vector3(i % 7, i % 11, i % 13))
		normals.append(Vector3.UP)
	var arrays: Array = []
	arrays.resize(Mesh.ARRAY_MAX)
	arrays[Mesh.ARRAY_VERTEX] = vertices
	arrays[Mesh.ARRAY_NORMAL] = normals
	var mesh: ArrayMesh = ArrayMesh.new()
	mesh.add_surface_from_arrays(Mesh.PRIMITIVE_TRIANGLES, arrays)
	mesh.set_meta("points", vertices)  # a large PackedVector3Array as a plain value too
	return mesh


## One value of every type the binary format stores.
func _values() -> Resource:
	var resource: Resource = Resource.new()
	var values: Dictionary = {
		"bool": true,
		"int": -7,
		"int64": 1 << 40,
		"float": 0.5,
		"double": 0.1,
		"string": "héllo",
		"string_name": &"a_name",
		"node_path": NodePath("/root/a/b:c:d"),
		"relative_path": NodePath("x"),
		"vector2": Vector2(1, 2),
		"vector2i": Vector2i(1, 2),
		"rect2": Rect2(1, 2, 3, 4),
		"rect2i": Rect2i(1, 2, 3, 4),
		"vector3": Vector3(1, 2, 3),
		"vector3i": Vector3i(1, 2, 3),
		"transform2d": Transform2D(0.5, Vector2(1, 2)),
		"vector4": Vector4(1, 2, 3, 4),
		"vector4i": Vector4i(1, 2, 3, 4),
		"plane": Plane(Vector3.UP, 2),
		"quaternion": Quaternion(0, 0, 0, 1),
		"aabb": AABB(Vector3.ONE, Vector3.ONE),
		"basis": Basis.IDENTITY,
		"transform3d": Transform3D.IDENTITY,
		"projection": Projection.IDENTITY,
		"color": Color(0.1, 0.2, 0.3, 0.4),
		"array": [1, "two", [3.0, {"four": 4}]],
		"dictionary": {1: "one", "two": [2], Vector2i(3, 3): null},
		"bytes": PackedByteArray([1, 2, 3, 4, 5]),
		"int32s": PackedInt32Array([1, -2]),
		"int64s": PackedInt64Array([1 << 40]),
		"float32s": PackedFloat32Array([0.5]),
		"float64s": PackedFloat64Array([0.1]),
		"strings": PackedStringArray(["a", "", "script"]),
		"vector2s": PackedVector2Array([Vector2.ONE]),
		"vector3s": PackedVector3Array([Vector3.ONE]),
		"colors": PackedColorArray([Color.RED]),
		"vector4s": PackedVector4Array([Vector4.ONE]),
		"callable": Callable(),
		"signal": Signal(),
		"rid": RID(),
	}
	for key: String in values:
		resource.set_meta(key, values[key])
	var big: PackedVector3Array = []
	big.resize(200000)
	resource.set_meta("big", big)
	return resource


func _typed() -> Resource:
	var numbers: Array[int] = [1, 2, 3]
	var materials: Array[StandardMaterial3D] = [StandardMaterial3D.new()]
	var names: Dictionary[String, int] = {"a": 1}
	var by_name: Dictionary[StringName, Resource] = {&"g": Gradient.new()}
	var resource: Resource = Resource.new()
	resource.set_meta("numbers", numbers)
	resource.set_meta("materials", materials)
	resource.set_meta("names", names)
	resource.set_meta("by_name", by_name)
	return resource


## An array whose element type is a script: the saver lists the script as a resource of the file.
func _typed_by_script(script: Script) -> Resource:
	var resource: Resource = Resource.new()
	resource.set_meta("typed", Array([], TYPE_OBJECT, &"Resource", script))
	return resource


func _meta_sub() -> Resource:
	var resource: Resource = Resource.new()
	resource.set_meta("gradient", Gradient.new())
	resource.set_meta("list", [Gradient.new(), Curve.new()])
	resource.set_meta("map", {"curve": Curve.new()})
	return resource


func _scripted_sub() -> Resource:
	var resource: Resource = Resource.new()
	resource.set_meta("inner", _with_script(_embedded("extends Resource\n")))
	return resource


func _pointing_at(target: Resource) -> Resource:
	var resource: Resource = Resource.new()
	resource.set_meta("next", target)
	return resource


## A file with landmarks that _crafted_cases() finds and breaks.
func _marker(target: Resource) -> Resource:
	var resource: Resource = Resource.new()
	resource.resource_name = _MARKER
	resource.set_meta("external", target)
	var blob: PackedByteArray = []
	blob.resize(_BLOB_SIZE)
	resource.set_meta("blob", blob)
	resource.set_meta("inner", Gradient.new())
	return resource


func _deep(levels: int) -> Resource:
	var value: Array = [1]
	for i: int in levels:
		value = [value]
	var resource: Resource = Resource.new()
	resource.set_meta("deep", value)
	return resource


func _clean_scene() -> PackedScene:
	var top: Node3D = Node3D.new()
	top.name = "Root"
	var child: MeshInstance3D = MeshInstance3D.new()
	child.name = "Box"
	child.mesh = BoxMesh.new()
	top.add_child(child)
	child.owner = top
	return _packed(top)


func _scene(node_script: Script) -> PackedScene:
	var top: Node3D = Node3D.new()
	top.name = "Root"
	var child: Node = Node.new()
	child.name = "Scripted"
	child.set_script(node_script)
	top.add_child(child)
	child.owner = top
	var other: Node = Node.new()
	other.name = "Embedded"
	other.set_script(_embedded("extends Node\n"))
	top.add_child(other)
	other.owner = top
	return _packed(top)


func _packed(top: Node) -> PackedScene:
	var scene: PackedScene = PackedScene.new()
	scene.pack(top)
	top.free()
	return scene


# ----- crafted copies of marker.res ------------------------------------------------------------


func _crafted_cases() -> void:
	var bytes: PackedByteArray = FileAccess.get_file_as_bytes(_dir.path_join("marker.res"))
	if bytes.is_empty():
		print(JSON.stringify({"case": "crafted", "save_error": "marker.res is missing"}))
		return
	var name_at: int = _find(bytes, _MARKER.to_utf8_buffer())
	var main_at: int = _main_offset_field(bytes)
	for cut: int in [0, 2, 10, 30, 60, name_at, int(bytes.size() / 2.0), bytes.size() - 10, bytes.size() - 1]:
		_report("truncated_at_%d" % cut, "broken", bytes.slice(0, cut))
		if cut <= bytes.size() - 4:
			var marked: PackedByteArray = bytes.slice(0, cut)
			marked.append_array("RSRC".to_ascii_buffer())  # the end marker alone must not make it pass
			_report("truncated_at_%d_marked" % cut, "broken", marked)
	_report("magic_rscc", "broken", _patched(bytes, 0, "RSCC".to_ascii_buffer()))
	_report("magic_other", "broken", _patched(bytes, 0, "XSRC".to_ascii_buffer()))
	_report("big_endian_flag", "broken", _with_u32(bytes, 4, 1))
	_report("use_real64_flag", "broken", _with_u32(bytes, 8, 1))
	_report("engine_major_3", "broken", _with_u32(bytes, 12, 3))
	_report("engine_major_5", "broken", _with_u32(bytes, 12, 5))
	_report("format_7", "broken", _with_u32(bytes, 20, 7))
	_report("format_3", "broken", _with_u32(bytes, 20, 3))
	var flags_at: int = 24 + 4 + "Resource".length() + 1 + 8
	_report("unknown_flag", "broken", _with_u32(bytes, flags_at, bytes.decode_u32(flags_at) | 16))
	_report("no_named_ids_flag", "broken", _with_u32(bytes, flags_at, bytes.decode_u32(flags_at) & ~1))
	_report("reserved_field", "broken", _with_u32(bytes, flags_at + 4 + 8, 1))
	_report("real_t_double_flag", "crafted", _with_u32(bytes, flags_at, bytes.decode_u32(flags_at) | 4))
	_report("no_end_marker", "broken", _patched(bytes, bytes.size() - 4, "XXXX".to_ascii_buffer()))
	_report("offset_past_end", "broken", _with_u64(bytes, main_at, bytes.size() + 100))
	_report("offset_in_header", "broken", _with_u64(bytes, main_at, 4))
	_report("offset_huge", "broken", _with_u64(bytes, main_at, -8))
	_variant_cases(bytes, name_at)
	_uid_cases(bytes)
	_scene_names_case()


## The scene's "names" stored as a generic Array: the scene would convert it, the reader refuses it.
func _scene_names_case() -> void:
	var bytes: PackedByteArray = FileAccess.get_file_as_bytes(_dir.path_join("scene.scn"))
	var key: PackedByteArray = _ustring("names")
	var at: int = _find(bytes, key) + key.size()
	_report("scene_names_not_packed", "broken", _with_u32(bytes, at, 30))


## The external resource's uid field (the 4.6 saver writes -1 outside a project): a real id is
## reported as uid:// text, and a negative one, which the loader cannot resolve, as none.
func _uid_cases(bytes: PackedByteArray) -> void:
	var target: PackedByteArray = _dir.path_join("base.res").to_utf8_buffer()
	var uid_at: int = _find(bytes, target) + target.size() + 1
	var uid: int = ResourceUID.create_id()
	_report("external_uid", "crafted", _with_u64(bytes, uid_at, uid), {"uid": ResourceUID.id_to_text(uid)})
	_report("external_uid_negative", "crafted", _with_u64(bytes, uid_at, -5), {"uid": ""})


## Breaks inside the main resource's values, found by their landmarks.
func _variant_cases(bytes: PackedByteArray, name_at: int) -> void:
	for type: int in [0, 6, 21, 25, 27, 54, 99, 0x7FFFFFFF]:
		_report("value_type_%d" % type, "broken", _with_u32(bytes, name_at - 8, type))
	_report("string_length_past_end", "broken", _with_u32(bytes, name_at - 4, 0x7FFFFF00))
	_report("string_length_negative", "broken", _with_u32(bytes, name_at - 4, 0xFFFFFFF0))
	var table_name: PackedByteArray = "resource_name".to_utf8_buffer()
	_report(
		"string_unterminated",
		"broken",
		_patched(bytes, _find(bytes, table_name) + table_name.size(), PackedByteArray([65]))
	)
	_report("name_index_past_table", "broken", _with_u32(bytes, name_at - 12, 999))
	_report("name_inline_past_end", "broken", _with_u32(bytes, name_at - 12, 0x80000000 | 0x7FFFFF))
	var blob_at: int = _find(bytes, _u32s([31, _BLOB_SIZE]))
	_report("packed_length_past_end", "broken", _with_u32(bytes, blob_at + 4, 0x10000000))
	var ref_at: int = _find(bytes, _u32s([24, 3, 0]))
	_report("object_kind_unknown", "broken", _with_u32(bytes, ref_at + 4, 7))
	_report("external_index_past_table", "crafted", _with_u32(bytes, ref_at + 8, 5))
	var inner_at: int = _find(bytes, _u32s([24, 2, 0]))
	_report("internal_index_past_table", "broken", _with_u32(bytes, inner_at + 8, 40))
	_report("property_count_huge", "broken", _with_u32(bytes, _main_start(bytes) + 4 + 9, 0x7FFFFFFF))
	var legacy: PackedByteArray = _u32s([24, 1])
	legacy.append_array(_ustring("Resource"))
	legacy.append_array(_ustring("legacy_target.res"))
	var crafted: PackedByteArray = bytes.slice(0, ref_at)
	crafted.append_array(legacy)
	crafted.append_array(bytes.slice(ref_at + 12))
	_report("legacy_external_reference", "crafted", crafted)
	_report("inline_script_name", "crafted", _inline_script(bytes, name_at))


## The main resource's string property renamed, by an inline name, to `script`.
func _inline_script(bytes: PackedByteArray, name_at: int) -> PackedByteArray:
	var crafted: PackedByteArray = bytes.slice(0, name_at - 12)
	crafted.append_array(_u32s([0x80000000 | 7]))
	crafted.append_array("script".to_utf8_buffer())
	crafted.append(0)
	crafted.append_array(bytes.slice(name_at - 8))
	return crafted


func _main_start(bytes: PackedByteArray) -> int:
	return bytes.decode_u64(_main_offset_field(bytes))


## Where the last entry of the internal resource table (the main resource) keeps its offset.
func _main_offset_field(bytes: PackedByteArray) -> int:
	var at: int = _find_last(bytes, "local://".to_ascii_buffer())
	return at + bytes.decode_u32(at - 4)


func _find(bytes: PackedByteArray, pattern: PackedByteArray) -> int:
	for i: int in bytes.size() - pattern.size() + 1:
		if bytes[i] == pattern[0] and bytes.slice(i, i + pattern.size()) == pattern:
			return i
	return -1


func _find_last(bytes: PackedByteArray, pattern: PackedByteArray) -> int:
	for i: int in range(bytes.size() - pattern.size(), -1, -1):
		if bytes[i] == pattern[0] and bytes.slice(i, i + pattern.size()) == pattern:
			return i
	return -1


func _u32s(values: Array[int]) -> PackedByteArray:
	var out: PackedByteArray = []
	out.resize(4 * values.size())
	for i: int in values.size():
		out.encode_u32(4 * i, values[i])
	return out


func _ustring(text: String) -> PackedByteArray:
	var utf8: PackedByteArray = text.to_utf8_buffer()
	var out: PackedByteArray = _u32s([utf8.size() + 1])
	out.append_array(utf8)
	out.append(0)
	return out


func _patched(bytes: PackedByteArray, at: int, part: PackedByteArray) -> PackedByteArray:
	var out: PackedByteArray = bytes.duplicate()
	for i: int in part.size():
		out[at + i] = part[i]
	return out


func _with_u32(bytes: PackedByteArray, at: int, value: int) -> PackedByteArray:
	var out: PackedByteArray = bytes.duplicate()
	out.encode_u32(at, value)
	return out


func _with_u64(bytes: PackedByteArray, at: int, value: int) -> PackedByteArray:
	var out: PackedByteArray = bytes.duplicate()
	out.encode_u64(at, value)
	return out


# ----- random damage: the reader must finish on anything ----------------------------------------


## Flip, set or clear a few random bytes of each file `runs` times; a script error in the reader
## shows on stderr (the Python test looks for it) and a crash loses the final "DONE".
func _fuzz_cases(files: Array[String], runs: int) -> void:
	var random: RandomNumberGenerator = RandomNumberGenerator.new()
	random.seed = 20240611
	var refused: int = 0
	for file: String in files:
		var bytes: PackedByteArray = FileAccess.get_file_as_bytes(_dir.path_join(file))
		for i: int in runs:
			var scan: Scan = Scan.new()
			BinaryFormat.read(_damaged(bytes, random), scan)
			refused += int(scan.stopped())
	print(JSON.stringify({"case": "fuzz", "kind": "fuzz", "runs": runs * files.size(), "refused": refused}))


func _damaged(bytes: PackedByteArray, random: RandomNumberGenerator) -> PackedByteArray:
	var out: PackedByteArray = bytes.duplicate()
	for i: int in random.randi_range(1, 4):
		var at: int = random.randi_range(0, out.size() - 1)
		match random.randi_range(0, 3):
			0:
				out[at] = random.randi_range(0, 255)
			1:
				out[at] = out[at] ^ (1 << random.randi_range(0, 7))
			2:
				out[at] = 0xFF  # makes counts, lengths and offsets huge, or sets their top bit
			_:
				out[at] = 0
	if random.randf() < 0.2:
		out = out.slice(0, random.randi_range(0, out.size()))
	return out


# ----- output ----------------------------------------------------------------------------------


func _report(name: String, kind: String, bytes: PackedByteArray, note: Dictionary = {}) -> void:
	var scan: Scan = Scan.new()
	BinaryFormat.read(bytes, scan)
	print(
		(
			JSON
			. stringify(
				{
					# Either reason a read stops for: not understood, or broken (then "corrupt" says so).
					"case": name,
					"kind": kind,
					"unreadable": scan.unreadable + scan.corrupt,
					"corrupt": not scan.corrupt.is_empty(),
					"finished": scan.finished,
					"classes": scan.classes,
					"loads": scan.loads,
					"script_set": scan.script_set,
					"note": note,
				}
			)
		)
	)
