"""The unit tier: no Godot process (a fake engine at most); runs without Godot installed."""
