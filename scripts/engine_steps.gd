extends MainLoop
## Time each step of the bridge's material_create inside one engine, against the same work done
## with typed calls (what bench.py's minimal loop does per material). Prints microseconds per step.
##
## godot --headless --path <empty project> --main-pack <the bridge's settings pack> \
##     -s scripts/engine_steps.gd -- <that project's real path> <bridge gdscript folder> [count]

const PROPERTIES: Dictionary = {
	"albedo_color": "#cc3311", "roughness": 0.4, "metallic": 0.7, "emission_enabled": true, "emission": "#221100"
}

var _spent: Dictionary = {}
var _at: int = 0


func _initialize() -> void:
	var args: PackedStringArray = OS.get_cmdline_user_args()
	var root: String = args[0]
	var bridge: String = args[1]
	var count: int = int(args[2]) if args.size() > 2 else 500
	var paths: GDScript = load(bridge.path_join("safety/paths.gd"))
	var codec: GDScript = load(bridge.path_join("values/codec.gd"))
	var job_script: GDScript = load(bridge.path_join("job.gd"))
	var saving: GDScript = load(bridge.path_join("files/saving.gd"))
	var material_op: GDScript = load(bridge.path_join("ops/material_create.gd"))
	var main: Object = load(bridge.path_join("main.gd")).new()
	paths.set_root(root)
	DirAccess.make_dir_recursive_absolute(root.path_join("steps"))
	var message: String = JSON.stringify(
		{"op": "material_create", "material_type": "StandardMaterial3D", "properties": PROPERTIES}
	)
	_at = Time.get_ticks_usec()
	for i: int in count:
		var request: Dictionary = JSON.parse_string(message)
		request["resource_path"] = "res://steps/whole%d.tres" % i
		_tick("whole request: JSON parse")
		var reply: Dictionary = main._serve(request)
		_tick("whole request: the operation")
		JSON.stringify(reply)
		_tick("whole request: JSON reply")
	for i: int in count:
		var job: RefCounted = job_script.new({})
		material_op.is_material_class("StandardMaterial3D")
		var material: Resource = ClassDB.instantiate("StandardMaterial3D")
		_tick("step: class check + instantiate")
		var values_set: Dictionary = codec.apply(material, PROPERTIES, job, "properties")
		_tick("step: convert + set + after-set check")
		var write: Dictionary = saving._begin("res://steps/m%d.tres" % i, job, "resource_path")
		_tick("step: confine + target checks (_begin)")
		write["uid"] = ResourceUID.id_to_text(ResourceUID.create_id())
		saving._save_stamped(material, "res://steps/m%d.tres" % i, write)
		_tick("step: ResourceSaver.save, ids of new sections, uid stamp")
		var written: Resource = ResourceLoader.load(write["temp"], "", ResourceLoader.CACHE_MODE_IGNORE)
		_tick("step: verify: load back")
		for name: String in values_set:
			saving._same(written.get(name), material.get(name), {})
		_tick("step: verify: values set")
		var same: bool = var_to_bytes_with_objects(written) == var_to_bytes_with_objects(material)
		_tick("step: verify: whole encoding")
		var writes: Array[Dictionary] = [write]
		saving.commit(writes, job)
		_tick("step: folder re-check + rename (commit)")
		if not same or job.failed():
			printerr("step %d did not verify" % i)
	for i: int in count:
		var typed: StandardMaterial3D = StandardMaterial3D.new()
		typed.albedo_color = Color("#cc3311")
		typed.roughness = 0.4
		typed.metallic = 0.7
		typed.emission_enabled = true
		typed.emission = Color("#221100")
		ResourceSaver.save(typed, root.path_join("steps/typed%d.tres" % i))
		_tick("minimal: typed new + sets + save")
	for name: String in _spent:
		print("%-42s %8.1f us" % [name, float(_spent[name]) / count])


func _process(_delta: float) -> bool:
	return true


func _tick(step: String) -> void:
	var now: int = Time.get_ticks_usec()
	_spent[step] = _spent.get(step, 0) + now - _at
	_at = Time.get_ticks_usec()
