extends MainLoop
## Entry of a gdres worker: serve framed requests from stdin until stdin ends.
##
## In: `<byte length as 15 digits>\n<JSON>` on stdin (a fixed-size header, so it can be read
## with read_buffer_from_stdin like the payload). Out: `<token> <byte length> <JSON>\n` on stderr, which the
## engine always flushes (stdout is left to project scripts and engine chatter). User arguments: the
## token (nothing else this process prints can contain it), the project's real path, and "trusted"
## for an engine that may serve allow_scripts requests ("safe" or nothing: it may not).
##
## A MainLoop, not a SceneTree: the engine adds a project's autoloads (and runs their code) only
## for a SceneTree. The bridge also starts the engine with its own settings pack (see
## tools/make_pack.gd), so `res://` resolves against the working folder, which is the project.

const Job = preload("job.gd")
const Gate = preload("safety/gate.gd")
const Paths = preload("safety/paths.gd")
## Each operation is the script ops/<op>.gd, compiled on its first request: the engine compiles
## GDScript slowly (~0.3 s for all of the bridge's on a 2-core VM, 75 us a line), and a
## `gdres run` needs one operation, not all. The bridge sends only the ops its models declare.
const _OP_NAME: String = "^[a-z][a-z_]*$"

const HEADER_SIZE: int = 16
const _BEAT_MSEC: int = 250

## Tells the heartbeat thread to end (the engine is quitting).
static var _stopping: bool = false

var _token: String = ""
## Whether this engine may serve allow_scripts requests: said on its command line, never by a request.
var _trusted: bool = false
var _heartbeat: Thread = Thread.new()
var _operations: Dictionary = {}


func _initialize() -> void:
	var args: PackedStringArray = OS.get_cmdline_user_args()
	_token = args[0] if args.size() > 0 else ""
	Paths.set_root(args[1] if args.size() > 1 else OS.get_environment("PWD"))
	_trusted = args.size() > 2 and args[2] == "trusted"
	Gate.install(Gate.new(), ProjectSettings.globalize_path(get_script().resource_path.get_base_dir()))
	# Each request's script errors are counted (Job.hit_script_error()); Godot 4.4 has no Logger.
	if ClassDB.class_exists("Logger"):
		var counter: String = get_script().resource_path.get_base_dir().path_join("safety/script_errors.gd")
		OS.call("add_logger", load(counter).new())
	# Headless, the engine cannot draw, so it sleeps this long after every frame (6.9 ms by
	# default), which capped a worker at ~145 requests/s. Reading stdin blocks while idle anyway.
	OS.low_processor_usage_mode_sleep_usec = 0
	_heartbeat.start(_beat)
	_send({"seq": 0, "ready": true, "version": Engine.get_version_info().string})


func _finalize() -> void:
	_stopping = true
	_heartbeat.wait_to_finish()


## Write an empty line to stdout four times a second, from a thread of its own. The bridge reads
## this process's stdout and throws it away; once the bridge is gone (killed, even in the middle of
## a long request) the pipe has no reader, and the next write ends this process with SIGPIPE, whose
## default action the engine keeps. So no engine outlives its bridge. (The settings pack makes
## every print flush at once; Windows has no SIGPIPE: see gdres/engine/platform.py.)
static func _beat() -> void:
	var slept: int = 0
	while not _stopping:
		OS.delay_msec(10)
		slept += 10
		if slept >= _BEAT_MSEC:
			slept = 0
			print("")


func _process(_delta: float) -> bool:
	var header: PackedByteArray = OS.read_buffer_from_stdin(HEADER_SIZE)
	if header.size() < HEADER_SIZE:
		return true
	var started: int = Time.get_ticks_usec()
	var payload: PackedByteArray = OS.read_buffer_from_stdin(header.get_string_from_ascii().to_int())
	var request: Variant = JSON.parse_string(payload.get_string_from_utf8())
	if typeof(request) != TYPE_DICTIONARY:
		_send(
			{
				"seq": -1,
				"ok": false,
				"error":
				{"code": Job.INVALID_JSON, "message": "the engine received a request that is not a JSON object"}
			}
		)
		return false
	var framed: Dictionary = _serve(request)
	# The bridge paces its reading of replies by this (gdres/serving/pool.py, NAP_SHARE): the
	# engine's own time, which its waits for the bridge do not inflate.
	framed["busy_us"] = Time.get_ticks_usec() - started
	_send(framed)
	return false


func _serve(request: Dictionary) -> Dictionary:
	var job: Job = Job.new(request)
	var operation: GDScript = _operation(request.get("op", ""))
	var reply: Dictionary = {}
	if operation == null:
		job.fail(Job.INVALID_REQUEST, "the engine has no operation %s" % JSON.stringify(request.get("op")), "op")
	elif job.allow_scripts and not _trusted:
		var refused: String = "allow_scripts: this engine was started without leave to run project code"
		job.fail(Job.UNSAFE_RESOURCE, refused + ", so it serves no request that asks for it", "allow_scripts")
	else:
		Gate.serve(job)
		reply = operation.run(request, job)
		Gate.done()
		if job.hit_script_error() and not job.failed():
			(
				job
				. fail(
					Job.INVALID_REQUEST,
					"the bridge's engine side hit a script error while serving this request (the engine's output says where)"
				)
			)
	var framed: Dictionary = {"seq": request.get("seq", -1)}
	if job.failed():
		framed["ok"] = false
		framed["error"] = job.to_wire()
	else:
		framed["ok"] = true
		if job.dry_run:
			reply["dry_run"] = true
			reply["changes"] = job.changes
		framed["reply"] = reply
		if not job.etags.is_empty():
			framed["etags"] = job.etags
	return framed


## The script of operation `name`, compiled once; null for a name that is none.
func _operation(name: Variant) -> GDScript:
	if not _operations.has(name):
		if typeof(name) != TYPE_STRING or RegEx.create_from_string(_OP_NAME).search(name) == null:
			return null
		var script: String = get_script().resource_path.get_base_dir().path_join("ops/%s.gd" % name)
		if not ResourceLoader.exists(script, "GDScript"):
			return null
		_operations[name] = load(script)
	return _operations[name]


func _send(message: Dictionary) -> void:
	var text: String = JSON.stringify(message, "", false, true)
	printerr("%s %d %s" % [_token, text.to_utf8_buffer().size(), text])
