"""One exception tree for every failure the bridge reports, each class carrying its wire code."""

from __future__ import annotations

# Types only: typing costs a warm `run` ~5 ms of its ~60. Type checkers take any TYPE_CHECKING as True.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class BridgeError(Exception):
    """Root of every error that becomes an error reply."""

    code = "internal_error"

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field

    def to_wire(self) -> dict[str, Any]:
        """Return the `error` member of an error reply."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.field is not None:
            error["field"] = self.field
        return error


class RequestError(BridgeError):
    """The request itself is wrong; fixing the request fixes it."""


class InvalidJson(RequestError):
    code = "invalid_json"


class InvalidRequest(RequestError):
    code = "invalid_request"


class ProjectNotFound(RequestError):
    code = "project_not_found"


class InvalidPath(RequestError):
    code = "invalid_path"


class PathOutsideProject(RequestError):
    code = "path_outside_project"


class NotFound(RequestError):
    code = "not_found"


class NotImported(RequestError):
    code = "not_imported"


class InvalidType(RequestError):
    code = "invalid_type"


class UnknownProperty(RequestError):
    code = "unknown_property"


class ForbiddenProperty(RequestError):
    code = "forbidden_property"


class InvalidValue(RequestError):
    code = "invalid_value"


class NodeNotFound(RequestError):
    code = "node_not_found"


class IncompatibleNode(RequestError):
    code = "incompatible_node"


class UnsafeResource(RequestError):
    code = "unsafe_resource"


class EngineOperationError(BridgeError):
    """The engine was asked correctly but could not do the work."""


class LoadFailed(EngineOperationError):
    code = "load_failed"


class SaveFailed(EngineOperationError):
    code = "save_failed"


class EngineError(BridgeError):
    """The engine process itself: missing, too old, dead or too slow."""


class EngineNotFound(EngineError):
    code = "engine_not_found"


class EngineUnsupported(EngineError):
    code = "engine_unsupported"


class EngineCrashed(EngineError):
    code = "engine_crashed"


class Timeout(EngineError):
    code = "timeout"


class Conflict(BridgeError):
    """The file a write's if_match guards changed since the reply that gave its etag: nothing was written."""

    code = "conflict"


class Skipped(BridgeError):
    code = "skipped"


class RolledBack(BridgeError):
    """A write of an atomic batch that was undone because a later request of the batch failed."""

    code = "rolled_back"


def _all_subclasses(cls: type[BridgeError]) -> list[type[BridgeError]]:
    found: list[type[BridgeError]] = []
    for sub in cls.__subclasses__():
        found.append(sub)
        found.extend(_all_subclasses(sub))
    return found


ERROR_CLASSES: dict[str, type[BridgeError]] = {
    cls.code: cls for cls in _all_subclasses(BridgeError) if "code" in cls.__dict__
}
"""Wire code to exception class: the one table both directions use."""


def from_wire(error: dict[str, Any]) -> BridgeError:
    """Rebuild the exception that an `error` member of a reply describes; a code this bridge does
    not know (from a newer engine side) is kept as it came."""
    code = str(error.get("code"))
    cls = ERROR_CLASSES.get(code)
    rebuilt = (cls or BridgeError)(str(error.get("message", "")), field=error.get("field"))
    if cls is None:
        rebuilt.code = code
    return rebuilt
