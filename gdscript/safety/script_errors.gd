extends Logger
## Counts the GDScript runtime errors the engine reports, in Job.script_errors (main.gd installs it
## on Godot 4.5 and later, which have Logger): a request during which one happened commits no write
## (Saving.commit(), Job.hit_script_error()).

const Job = preload("../job.gd")


func _log_error(
	_function: String,
	_file: String,
	_line: int,
	_code: String,
	_rationale: String,
	_editor_notify: bool,
	error_type: int,
	_script_backtraces: Array[ScriptBacktrace]
) -> void:
	if error_type == Logger.ERROR_TYPE_SCRIPT:
		Job.script_errors += 1
