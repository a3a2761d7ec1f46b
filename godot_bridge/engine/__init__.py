"""One Godot: finding it (discovery.py, godot.py), starting it behind the wall (wall.py, process.py,
platform.py), and talking to it (worker.py, frames.py)."""
