"""Reply types: what each operation answers, as the operation methods return it and MCP declares it.

A reply echoes the request's `op`, its `id` when it had one, and the members naming its files as
the request spelled them (the operation methods and MCP tools spell them as written here). An error
reply is `ErrorReply` for every operation. The attribute docstrings are the members' descriptions
in the JSON Schema (MCP's output schemas), so people reading this file and agents read one text.
"""

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field
from typing_extensions import NotRequired, TypedDict

_DOCUMENTED = ConfigDict(use_attribute_docstrings=True)


class Answer(TypedDict):
    """What every success has."""

    __pydantic_config__ = _DOCUMENTED  # type: ignore[misc]

    op: Annotated[str, Field(description="The request's op.")]
    result: Literal["ok"]
    id: NotRequired[Annotated[str | int, Field(description="The request's id, if given.")]]


class Change(TypedDict):
    """A file a dry run would write."""

    __pydantic_config__ = _DOCUMENTED  # type: ignore[misc]

    path: str
    """The file, relative to the project."""
    action: Literal["create", "modify"]
    diff: str
    """Unified diff, as the real run would change it."""


class Written(Answer):
    """What every writing operation's success has."""

    dry_run: NotRequired[Annotated[Literal[True], Field(description="Present on a dry run: nothing was changed.")]]
    changes: NotRequired[Annotated[list[Change], Field(description="A dry run's files, in write order.")]]
    etag: NotRequired[Annotated[str, Field(description="sha256 of the file as written, for if_match.")]]


class ReadReply(Answer):
    """resource_read: the stored properties of a saved resource."""

    resource_path: str
    """The file read, as the request named it."""
    uid: str | None
    """The file's uid:// (null for a file that has none, such as one saved before Godot 4.0)."""
    etag: str
    """sha256 of the file's bytes as read, for a later write's if_match."""
    type: str
    """The resource's class."""
    script: str | None
    """The script the resource carries (res:// path), or null."""
    properties: dict[str, Any]
    """Stored properties, name -> value: colours and vectors as arrays of numbers, nested resources as
    objects ({"type", "properties"}; {"type", "path"} for a file of its own) down to the request's
    depth, as paths below it."""


class SavedReply(Written):
    """The resource made and where it is."""

    resource_path: str
    """The file written, as the request named it."""
    uid: str
    """The file's uid:// (an overwritten file keeps its own)."""
    type: str
    """The class of the resource written."""


class ShapeReply(Written):
    """shape_create: the shape made, and where it went."""

    shape_type: str
    type: str
    save_path: NotRequired[str]
    """The file written, when the request gave one."""
    uid: NotRequired[str]
    """That file's uid://, when the request gave save_path."""
    scene_path: NotRequired[str]
    """The scene changed, when the request gave one."""
    node_path: NotRequired[str]
    """The node of that scene that holds the shape."""


class DuplicateReply(Written):
    """resource_duplicate: the copy written."""

    source_path: str
    """The file copied, as the request named it."""
    dest_path: str
    """The copy written, as the request named it."""
    uid: str
    """The copy's uid:// (its own: a copy never takes the source's)."""
    type: str
    """The class of the copy."""


class UpdateReply(Written):
    """resource_update: what changed in the file."""

    resource_path: str
    """The file changed, as the request named it."""
    uid: str
    """The file's uid:// (kept as it was; a file saved before Godot 4.0 gets one)."""
    type: str
    """The resource's class."""
    changed: list[str]
    """Every stored property that changed, those set first; in an embedded resource as property.member."""
    converted_from_format: NotRequired[int]
    """The file's old format (2: Godot 3's), rewritten whole."""


class SceneNode(TypedDict):
    """A node of a scene."""

    __pydantic_config__ = _DOCUMENTED  # type: ignore[misc]

    path: str
    """As node_path takes it ("." is the root)."""
    name: str
    type: str
    """Its class (an instance's: its scene's root class)."""
    instance: str | None
    """The scene it instances, or null."""
    script: str | None
    groups: list[str]
    properties: dict[str, Any]
    """The values this file stores for it, as resource_read gives them."""


Connection = TypedDict("Connection", {"signal": str, "from": str, "to": str, "method": str, "flags": int,
                                      "binds": NotRequired[list[Any]], "unbinds": NotRequired[int]})
"""A signal connection of a scene ("from" is a keyword in Python, so the class is built by call)."""


class SceneReadReply(Answer):
    """scene_read: a scene's nodes as its file stores them."""

    scene_path: str
    node_path: NotRequired[str]
    uid: str | None
    etag: str
    nodes: list[SceneNode]
    """The nodes the file stores, in tree order."""
    connections: list[Connection]


class NodeReply(Written):
    """node_set_properties and node_add: the node changed or made."""

    scene_path: str
    node_path: str
    type: str
    changed: NotRequired[list[str]]
    """node_set_properties: the stored properties whose lines changed."""
    made_editable: NotRequired[list[str]]
    """Instances given Editable Children."""


class NodeRemoveReply(Written):
    """node_remove: what left the scene."""

    scene_path: str
    node_path: str
    type: str
    removed: list[str]
    """The node and those below it."""


class NotUpdated(TypedDict):
    file: str
    line: int
    text: str


class MoveReply(Written):
    """resource_move: what moved, and what followed."""

    source_path: str
    dest_path: str
    moved: list[list[str]]
    """[from, to], sidecars too."""
    updated: list[str]
    """Files rewritten to follow."""
    not_updated: list[NotUpdated]
    """Fix by hand."""


class ImportOption(TypedDict):
    name: str
    type: Literal["bool", "int", "float", "string", "other"]
    default: Any
    values: NotRequired[list[str]]
    """An enum's labels, by value."""


class ImportReadReply(Answer):
    """import_read: an asset's import settings."""

    source_path: str
    importer: str
    type: str
    params: dict[str, Any]
    options: list[ImportOption]
    """The importer's options, with defaults."""
    etag: str


class ImportUpdateReply(Written):
    """import_update: the settings changed, imported."""

    source_path: str
    importer: str
    changed: list[str]


class PropertyInfo(TypedDict):
    """One property a request may set, as class_info describes it."""

    __pydantic_config__ = _DOCUMENTED  # type: ignore[misc]

    name: str
    type: str
    """A Variant type name (float, int, bool, String, Color, Vector3, ...) or, for a resource, its class."""
    default: Any
    """The value a new resource has, in the reply value form (a colour as 4 numbers)."""
    enum: NotRequired[dict[str, int]]
    """The engine's named constants it takes, name -> value (given by name or number in requests)."""
    flags: NotRequired[bool]
    """Whether the constants combine ("A|B")."""
    range: NotRequired[dict[str, float | bool]]
    """The engine's range hint: min, max, step, and or_greater/or_less when it allows more."""


class ClassInfoReply(Answer):
    """class_info: what a request may do with a resource class."""

    class_name: str
    """The class described."""
    inherits: list[str]
    """Its ancestry, nearest first, ending in Object."""
    inheritors: list[str]
    """Every class under it that a request may create, by name."""
    properties: list[PropertyInfo]
    """Every property a request may set on it (those the engine saves), in the engine's order."""


class ErrorDetail(TypedDict):
    """The `error` member of an error reply."""

    __pydantic_config__ = _DOCUMENTED  # type: ignore[misc]

    code: str
    """Stable error code (docs/usage.md: Errors); new codes may appear, kept as sent."""
    message: str
    """What went wrong and what to do about it, for people."""
    field: NotRequired[str]
    """The request member at fault, as the request spelled it."""


class ErrorReply(TypedDict):
    """A failure of any operation: nothing was written."""

    __pydantic_config__ = _DOCUMENTED  # type: ignore[misc]

    op: str | None
    """The request's op (null when the request had none)."""
    id: NotRequired[str | int]
    """The request's id, when it had one."""
    result: Literal["error"]
    error: ErrorDetail
