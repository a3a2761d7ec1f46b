extends SceneTree
## An independent view of resource files, for the real-project tests to hold the bridge's replies
## against; run in the (imported) project's folder. It uses none of the bridge's GDScript.
##   -- view FILE...      one JSON line per file: its class and every stored property that differs
##                        from a new instance of the class, nested resources shown by class only
##   -- same A=B...       one JSON line per pair: the first place where the two files' resources differ
##                        ("" when none), comparing stored values recursively (an imported asset by path)


func _init() -> void:
	var args: PackedStringArray = OS.get_cmdline_user_args()
	for item: String in args.slice(1):
		if args[0] == "view":
			print(JSON.stringify({"file": item, "view": _view(load(item))}))
		else:
			var a: Resource = ResourceLoader.load(item.get_slice("=", 0), "", ResourceLoader.CACHE_MODE_IGNORE)
			var b: Resource = ResourceLoader.load(item.get_slice("=", 1), "", ResourceLoader.CACHE_MODE_IGNORE)
			print(JSON.stringify({"pair": item, "difference": _difference(a, b, "", {})}))
	quit()


func _view(resource: Resource) -> Dictionary:
	var fresh: Object = ClassDB.instantiate(resource.get_class())
	var stored: Dictionary = {}
	for info: Dictionary in resource.get_property_list():
		var name: String = info["name"]
		if info["usage"] & PROPERTY_USAGE_STORAGE == 0 or name == "script":
			continue
		var value: Variant = resource.get(name)
		var default: Variant = fresh.get(name)
		if (
			typeof(value) == typeof(default)
			and (value == default or (value is Object and _difference(value, default, "", {}) == ""))
		):
			continue
		stored[name] = _shown(value)
	return {"type": resource.get_class(), "stored": stored}


func _shown(value: Variant) -> Variant:
	if value is Resource:
		return {"type": value.get_class()}
	if value is Array:
		return value.map(_shown)
	if value is Dictionary:
		var shown: Dictionary = {}
		for key: Variant in value:
			shown[str(key)] = _shown(value[key])
		return shown
	if typeof(value) in [TYPE_NIL, TYPE_BOOL, TYPE_INT, TYPE_FLOAT, TYPE_STRING]:
		return value
	return JSON.from_native(value)


func _difference(a: Variant, b: Variant, at: String, seen: Dictionary) -> String:
	if typeof(a) != typeof(b):
		return at + " (type)"
	if typeof(a) == TYPE_OBJECT and (a == null or b == null):
		return "" if a == b else at + " (null)"
	if a is Resource:
		return _resource_difference(a, b, at, seen)
	if a is Array or a is Dictionary:
		return _items_difference(a, b, at, seen)
	return "" if a == b else at


func _resource_difference(a: Resource, b: Resource, at: String, seen: Dictionary) -> String:
	if a.get_class() != b.get_class():
		return at + " (class)"
	var file: String = a.resource_path.get_slice("::", 0)
	if not file.is_empty() and FileAccess.file_exists(file + ".import"):
		return "" if a.resource_path == b.resource_path else at + " (imported asset)"
	if seen.has(a):
		return ""
	seen[a] = true
	for info: Dictionary in a.get_property_list():
		if info["usage"] & PROPERTY_USAGE_STORAGE != 0 and info["name"] != "resource_path":
			var found: String = _difference(a.get(info["name"]), b.get(info["name"]), at + "/" + info["name"], seen)
			if not found.is_empty():
				return found
	return ""


## Two arrays or two dictionaries: their sizes (or keys), then each item.
func _items_difference(a: Variant, b: Variant, at: String, seen: Dictionary) -> String:
	if a is Array and a.size() != b.size():
		return "%s (%d items, %d items)" % [at, a.size(), b.size()]
	if a is Dictionary and a.keys() != b.keys():
		return at + " (keys)"
	for key: Variant in range(a.size()) if a is Array else a.keys():
		var found: String = _difference(a[key], b[key], "%s[%s]" % [at, key], seen)
		if not found.is_empty():
			return found
	return ""
