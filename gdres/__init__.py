"""gdres: create and inspect Godot 4 resources through the real headless engine.

`Bridge` serves requests (plain dicts, or its operation methods); a failed method call raises the
`BridgeError` subclass of its error code, each exported here. `warm_run()` serves one request through
an engine kept warm for its project across processes (gdres/front/warm.py). Messages about the engine's life
(imports, restarts) go to the `logging` logger "gdres".
"""

from __future__ import annotations

from gdres.errors import (
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
from gdres.version import __version__

# Types only: typing costs a warm `run` ~5 ms of its ~60. Type checkers take any TYPE_CHECKING as True.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from gdres.front.api import Bridge
    from gdres.front.warm import warm_run

__all__ = [
    "Bridge", "BridgeError", "EngineCrashed", "EngineError", "EngineNotFound", "EngineOperationError",
    "EngineUnsupported", "ForbiddenProperty", "IncompatibleNode", "InvalidJson", "InvalidPath", "InvalidRequest",
    "InvalidType", "InvalidValue", "LoadFailed", "NodeNotFound", "NotFound", "NotImported", "PathOutsideProject",
    "ProjectNotFound", "RequestError", "SaveFailed", "Skipped", "Timeout", "UnknownProperty", "UnsafeResource",
    "__version__", "warm_run",
]


def __getattr__(name: str) -> Any:
    # Bridge pulls in the serving machinery (~0.07 s), which a bare `import gdres` does not need.
    if name == "Bridge":
        from gdres.front.api import Bridge

        return Bridge
    if name == "warm_run":
        from gdres.front.warm import warm_run

        return warm_run
    raise AttributeError(f"module 'gdres' has no attribute {name!r}")
