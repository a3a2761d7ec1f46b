"""godot-bridge: create and inspect Godot 4 resources through the real headless engine.

`Bridge` serves requests (plain dicts, or its typed methods); a failed typed call raises the
`BridgeError` subclass of its error code, each exported here. `warm_run()` serves one request through
an engine kept warm for its project across processes (godot_bridge/front/warm.py). Messages about the engine's life
(imports, restarts) go to the `logging` logger "godot_bridge".
"""

from __future__ import annotations

from godot_bridge.errors import (
    BridgeError,
    EngineCrashed,
    EngineError,
    EngineNotFound,
    EngineOperationError,
    EngineUnsupported,
    ForbiddenProperty,
    IncompatibleNode,
    InvalidJson,
    InvalidPath,
    InvalidRequest,
    InvalidType,
    InvalidValue,
    LoadFailed,
    NodeNotFound,
    NotFound,
    NotImported,
    PathOutsideProject,
    ProjectNotFound,
    RequestError,
    SaveFailed,
    Skipped,
    Timeout,
    UnknownProperty,
    UnsafeResource,
)
from godot_bridge.version import __version__

# Types only: typing costs a warm `run` ~5 ms of its ~60. Type checkers take any TYPE_CHECKING as True.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from godot_bridge.front.api import Bridge
    from godot_bridge.front.warm import warm_run

__all__ = [
    "Bridge", "BridgeError", "EngineCrashed", "EngineError", "EngineNotFound", "EngineOperationError",
    "EngineUnsupported", "ForbiddenProperty", "IncompatibleNode", "InvalidJson", "InvalidPath", "InvalidRequest",
    "InvalidType", "InvalidValue", "LoadFailed", "NodeNotFound", "NotFound", "NotImported", "PathOutsideProject",
    "ProjectNotFound", "RequestError", "SaveFailed", "Skipped", "Timeout", "UnknownProperty", "UnsafeResource",
    "__version__", "warm_run",
]


def __getattr__(name: str) -> Any:
    # Bridge pulls in the serving machinery (~0.07 s), which a bare `import godot_bridge` does not need.
    if name == "Bridge":
        from godot_bridge.front.api import Bridge

        return Bridge
    if name == "warm_run":
        from godot_bridge.front.warm import warm_run

        return warm_run
    raise AttributeError(f"module 'godot_bridge' has no attribute {name!r}")
