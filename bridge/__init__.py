"""godot-bridge: create and inspect Godot 4 resources through the real headless engine."""

from .api import Bridge
from .errors import BridgeError

__all__ = ["Bridge", "BridgeError"]
