"""`python -m godot_bridge` is `godot-bridge`."""

from godot_bridge.front.cli import entry

entry()
