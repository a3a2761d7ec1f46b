extends SceneTree
## Build a project the way users keep one in git, in two stages run in the project's folder:
##   godot --headless --path P -s build.gd -- assets      (source files: images, font, mesh, sound)
##   godot --headless --path P --import                   (the editor writes the *.import files)
##   godot --headless --path P -s build.gd -- resources   (resources, made and saved by the engine)
## then the caller deletes .godot/, which projects do not commit (tests/corpus/__init__.py).

## How many textured materials (each with a texture of its own) the project has in many/.
const MANY: int = 50
const PROFILES: Array[String] = [
	"/interaction_profiles/khr/simple_controller",
	"/interaction_profiles/oculus/touch_controller",
	"/interaction_profiles/valve/index_controller",
	"/interaction_profiles/htc/vive_controller",
	"/interaction_profiles/microsoft/motion_controller",
	"/interaction_profiles/hp/mixed_reality_controller",
	"/interaction_profiles/bytedance/pico4_controller",
	"/interaction_profiles/htc/vive_cosmos_controller",
	"/interaction_profiles/htc/vive_focus3_controller",
	"/interaction_profiles/huawei/controller",
	"/interaction_profiles/samsung/odyssey_controller",
	"/interaction_profiles/ext/hand_interaction_ext",
	"/interaction_profiles/microsoft/hand_interaction",
	"/interaction_profiles/htc/vive_tracker_htcx",
]

var _failed: bool = false
var _uids: Dictionary = {}  # text file saved -> the uid it was given


func _init() -> void:
	var stage: String = OS.get_cmdline_user_args()[0]
	if stage == "assets":
		_assets()
	else:
		_resources()
	quit(1 if _failed else 0)


func _assets() -> void:
	for folder: String in [
		"icons", "fonts", "meshes", "sounds", "materials", "tiles", "ui", "xr", "binary", "scenes", "scripts", "many"
	]:
		DirAccess.make_dir_recursive_absolute("res://" + folder)
	for spec: Array in [["albedo", Color.ORANGE], ["normal", Color(0.5, 0.5, 1.0)], ["tiles", Color.DARK_GREEN]]:
		var image: Image = Image.create(32, 32, false, Image.FORMAT_RGBA8)
		image.fill(spec[1])
		image.fill_rect(Rect2i(0, 0, 16, 16), Color.WHITE)
		image.save_png("res://icons/%s.png" % spec[0])
	for i: int in MANY:
		var image: Image = Image.create(16, 16, false, Image.FORMAT_RGB8)
		image.fill(Color.from_hsv(i / float(MANY), 0.8, 0.9))
		image.save_png("res://many/texture_%02d.png" % i)
	# The engine's own fallback font: a real WOFF2 file, whatever fonts the machine has.
	_write("res://fonts/body.woff2", (ThemeDB.fallback_font as FontFile).data)
	var obj: String = "o box\n"
	for v: Vector3 in [Vector3(0, 0, 0), Vector3(1, 0, 0), Vector3(1, 1, 0), Vector3(0, 1, 0)]:
		obj += "v %f %f %f\n" % [v.x, v.y, v.z]
	_write("res://meshes/quad.obj", (obj + "vn 0 0 1\nf 1//1 2//1 3//1\nf 1//1 3//1 4//1\n").to_utf8_buffer())
	var beep: AudioStreamWAV = AudioStreamWAV.new()
	beep.format = AudioStreamWAV.FORMAT_8_BITS
	var samples: PackedByteArray = PackedByteArray()
	for i: int in 800:
		samples.append(128 + int(100 * sin(i * 0.3)) & 0xff)
	beep.data = samples
	beep.save_to_wav("res://sounds/beep.wav")
	_write("res://scripts/player.gd", "extends CharacterBody3D\n\n@export var speed: float = 4.0\n".to_utf8_buffer())


func _resources() -> void:
	var albedo: Texture2D = load("res://icons/albedo.png")
	var normal: Texture2D = load("res://icons/normal.png")
	var font: FontFile = load("res://fonts/body.woff2")
	var mesh: Mesh = load("res://meshes/quad.obj")

	for i: int in MANY:
		var each: StandardMaterial3D = StandardMaterial3D.new()
		each.albedo_texture = load("res://many/texture_%02d.png" % i)
		each.metallic = i / float(MANY)
		_save(each, "res://many/material_%02d.tres" % i)

	var textured: StandardMaterial3D = StandardMaterial3D.new()
	textured.albedo_texture = albedo
	textured.normal_enabled = true
	textured.normal_texture = normal
	textured.roughness = 0.4
	_save(textured, "res://materials/textured.tres")

	# A next_pass chain: a file, whose own next_pass is embedded in it.
	var last: StandardMaterial3D = StandardMaterial3D.new()
	last.albedo_color = Color.RED
	var middle: StandardMaterial3D = StandardMaterial3D.new()
	middle.metallic = 0.75
	middle.next_pass = last
	_save(middle, "res://materials/middle.tres")
	var first: StandardMaterial3D = StandardMaterial3D.new()
	first.albedo_texture = albedo
	first.next_pass = load("res://materials/middle.tres")
	_save(first, "res://materials/chain.tres")

	var tiles: TileSet = TileSet.new()
	tiles.tile_size = Vector2i(16, 16)
	var atlas: TileSetAtlasSource = TileSetAtlasSource.new()
	atlas.texture = load("res://icons/tiles.png")
	atlas.texture_region_size = Vector2i(16, 16)
	for x: int in 2:
		for y: int in 2:
			atlas.create_tile(Vector2i(x, y))
	tiles.add_source(atlas)
	_save(tiles, "res://tiles/tileset.tres")

	var theme: Theme = Theme.new()
	var panel: StyleBoxTexture = StyleBoxTexture.new()
	panel.texture = albedo
	panel.texture_margin_left = 4.0
	theme.set_stylebox("panel", "PanelContainer", panel)
	var bold: FontVariation = FontVariation.new()
	bold.base_font = font
	bold.variation_embolden = 0.5
	theme.default_font = bold
	theme.set_font_size("font_size", "Label", 18)
	_save(theme, "res://ui/theme.tres")
	var fallbacks: FontVariation = FontVariation.new()
	fallbacks.base_font = font
	fallbacks.fallbacks = [font]
	_save(fallbacks, "res://ui/with_fallbacks.tres")

	_save(_action_map(), "res://xr/action_map.tres")

	var box: BoxShape3D = BoxShape3D.new()
	box.size = Vector3(2, 1, 3)
	_save(box, "res://binary/box.res")
	var binary: StandardMaterial3D = textured.duplicate()
	binary.albedo_color = Color(0.2, 0.4, 0.6)
	_save(binary, "res://binary/textured.res")
	var noise: NoiseTexture2D = NoiseTexture2D.new()
	noise.width = 8
	noise.height = 8
	noise.noise = FastNoiseLite.new()
	_save(noise, "res://materials/noise.tres")
	var sounds: AudioStreamRandomizer = AudioStreamRandomizer.new()
	sounds.add_stream(0, load("res://sounds/beep.wav"))
	sounds.random_pitch = 1.2
	_save(sounds, "res://sounds/random.tres")

	var player: CharacterBody3D = CharacterBody3D.new()
	player.name = "Player"
	player.set_script(load("res://scripts/player.gd"))
	var body: MeshInstance3D = MeshInstance3D.new()
	body.name = "Body"
	body.mesh = mesh
	body.material_override = load("res://materials/textured.tres")
	player.add_child(body)
	body.owner = player
	_save_scene(player, "res://scenes/player.tscn")
	var level: Node3D = Node3D.new()
	level.name = "Level"
	var instance: Node = (load("res://scenes/player.tscn") as PackedScene).instantiate(
		PackedScene.GEN_EDIT_STATE_INSTANCE
	)
	level.add_child(instance)
	instance.owner = level
	_save_scene(level, "res://scenes/level.tscn")


## An action map the size of the XR demos': interaction profiles holding arrays of bindings, which
## name actions held by an action set (arrays of sub-resources two levels deep).
func _action_map() -> OpenXRActionMap:
	var map: OpenXRActionMap = OpenXRActionMap.new()
	var actions: OpenXRActionSet = OpenXRActionSet.new()
	actions.resource_name = "godot"
	actions.localized_name = "Godot action set"
	for i: int in 6:
		var action: OpenXRAction = OpenXRAction.new()
		action.resource_name = "action_%d" % i
		action.localized_name = "Action %d" % i
		action.action_type = OpenXRAction.OPENXR_ACTION_FLOAT
		action.toplevel_paths = PackedStringArray(["/user/hand/left", "/user/hand/right"])
		actions.add_action(action)
	map.add_action_set(actions)
	for path: String in PROFILES:
		var profile: OpenXRInteractionProfile = OpenXRInteractionProfile.new()
		profile.interaction_profile_path = path
		var bindings: Array = []
		for action: OpenXRAction in actions.actions:
			for hand: String in ["left", "right"]:
				var binding: OpenXRIPBinding = OpenXRIPBinding.new()
				binding.action = action
				binding.binding_path = "/user/hand/%s/input/trigger/value" % hand
				bindings.append(binding)
		profile.bindings = bindings
		map.add_interaction_profile(profile)
	return map


func _save(resource: Resource, path: String) -> void:
	var err: Error = ResourceSaver.save(resource, path)
	if err != OK:
		push_error("saving %s: %s" % [path, error_string(err)])
		_failed = true
	elif path.get_extension() in ["tres", "tscn"]:
		_add_uids(path)


## Give a text file the uids the editor writes (a script run with -s saves without them): one of its
## own in the header, and its target's on each ext_resource.
func _add_uids(path: String) -> void:
	var lines: PackedStringArray = FileAccess.get_file_as_string(path).split("\n")
	_uids[path] = ResourceUID.id_to_text(ResourceUID.create_id())
	lines[0] = lines[0].replace(" format=3]", ' format=3 uid="%s"]' % _uids[path])
	for i: int in lines.size():
		if lines[i].begins_with("[ext_resource ") and not lines[i].contains(" uid="):
			var target: String = lines[i].get_slice('path="', 1).get_slice('"', 0)
			var uid: String = _uids.get(target, ResourceUID.id_to_text(ResourceLoader.get_resource_uid(target)))
			lines[i] = lines[i].replace(" path=", ' uid="%s" path=' % uid)
	_write(path, "\n".join(lines).to_utf8_buffer())


func _save_scene(root: Node, path: String) -> void:
	var scene: PackedScene = PackedScene.new()
	scene.pack(root)
	_save(scene, path)
	root.free()


func _write(path: String, bytes: PackedByteArray) -> void:
	var file: FileAccess = FileAccess.open(path, FileAccess.WRITE)
	file.store_buffer(bytes)
	file.close()
