"""The engine tier: each test runs the real Godot binary (GODOT_BIN), never skipped."""
