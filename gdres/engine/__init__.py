"""One Godot: finding it (discovery.py, godot.py), starting it behind the wall (wall.py, process.py),
and talking to it (worker.py, frames.py). The settings they share with the layers above are in
gdres/settings.py; what differs by system, in gdres/platform.py."""
