"""godot-bridge: create and inspect Godot 4 resources through the real headless engine."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import BridgeError

if TYPE_CHECKING:
    from .api import Bridge

__all__ = ["Bridge", "BridgeError"]


def __getattr__(name: str) -> Any:
    # Bridge pulls in pydantic (~0.1 s); `godot-bridge run` imports it while the engine starts.
    if name == "Bridge":
        from .api import Bridge

        return Bridge
    raise AttributeError(f"module 'bridge' has no attribute {name!r}")
