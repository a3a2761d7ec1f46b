"""Request models: one per operation, each declaring all that every surface needs of it (its
members and their checks, title, example, the files it names and what it does to them, its reply
type), and the union of them tagged by `op`, built once at import from the models defined here.

The command line, the Python API's `call()`, the MCP tools, the JSON Schema and the engine's
dispatch (gdscript/ops/<op>.gd) all come from these: adding an operation is a model here and its
script there."""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Generic, Literal, TypeVar, Union, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    TypeAdapter,
    ValidationError,
    ValidatorFunctionWrapHandler,
    model_validator,
)

from gdres.errors import InvalidRequest, InvalidType
from gdres.requests import paths
from gdres.requests.replies import (
    Answer,
    ClassInfoReply,
    DuplicateReply,
    ImportReadReply,
    ImportUpdateReply,
    MoveReply,
    NodeRemoveReply,
    NodeReply,
    ReadReply,
    SavedReply,
    SceneReadReply,
    ShapeReply,
    UpdateReply,
)
from gdres.scripts import godot3_names

ShapeType3D = Literal[
    "BoxShape3D",
    "SphereShape3D",
    "CapsuleShape3D",
    "CylinderShape3D",
    "ConcavePolygonShape3D",
    "ConvexPolygonShape3D",
    "WorldBoundaryShape3D",
    "SeparationRayShape3D",
    "HeightMapShape3D",
]
ShapeType2D = Literal[
    "CircleShape2D",
    "RectangleShape2D",
    "CapsuleShape2D",
    "SegmentShape2D",
    "ConvexPolygonShape2D",
    "ConcavePolygonShape2D",
    "WorldBoundaryShape2D",
    "SeparationRayShape2D",
]
StyleType = Literal["StyleBoxFlat", "StyleBoxTexture", "StyleBoxLine", "StyleBoxEmpty"]
SHAPE_TYPES_3D: tuple[str, ...] = get_args(ShapeType3D)
SHAPE_TYPES_2D: tuple[str, ...] = get_args(ShapeType2D)
ShapeType = Literal[ShapeType3D, ShapeType2D]
SHAPE_TYPES = SHAPE_TYPES_3D + SHAPE_TYPES_2D
STYLE_TYPES: tuple[str, ...] = get_args(StyleType)
Properties = dict[str, Any]
"""Property name to JSON value; the engine converts each value by the property's own type."""


VALUES_HELP = (
    'name -> value, names as the engine has them; colors "#rrggbb" or [r, g, b(, a)] in 0-1, vectors '
    '[x, y(, z)], resources as a path or {"type", "properties"}.'
)
"""How every properties-like member takes its values (said in each such member's description)."""


R = TypeVar("R", bound=Answer)


@dataclass(frozen=True)
class FileMember:
    """A request member that names a project file: the suffixes it may have, and what the request
    does to the file. The one table of file roles: confinement, ordering in the pool and locks all
    read it."""

    suffixes: tuple[str, ...]
    writes: bool = False
    """The request creates or replaces the file (else it only reads it)."""
    in_place: bool = False
    """The engine reads the file, changes it and writes it back (an update, a scene edit): the
    request holds the file's lock while it is in flight (gdres/serving/locks.py)."""


class Answers(Generic[R]):
    """Names an operation's success reply type: `class ResourceRead(Request, Answers[ReadReply])`."""


_DEFINED: list[type[Request]] = []
"""Each operation's model, in the order defined (a model that narrows `op` names an operation)."""


def _op_required(schema: dict[str, Any]) -> None:
    """A model's `op` defaults to its own name, so that `ResourceRead(project_path=...)` needs no
    `op=`; a request sent as JSON must give it, and its JSON Schema says so."""
    schema["properties"]["op"].pop("default", None)
    schema["required"] = ["op", *[name for name in schema.get("required", []) if name != "op"]]


class Request(BaseModel):
    """Members every request has, and what each operation's model declares about itself."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, json_schema_extra=_op_required)

    title: ClassVar[str]
    """A few words for people and agents (the MCP tool's title)."""
    example: ClassVar[dict[str, Any]]
    """The members of one request, less op and project_path (MCP tool descriptions show it)."""
    files: ClassVar[dict[str, FileMember]] = {}
    """The members that name project files."""
    echoed: ClassVar[tuple[str, ...]] = ("resource_path",)
    """The members a success reply repeats as the request gave them, when it gave them."""
    importer_options: ClassVar[bool] = False
    """The engine needs the options each importer declares (gdres/serving/imports.py importer_options())."""
    reaches_project: ClassVar[bool] = False
    """The operation may write any file of the project (a move rewrites what names the file): it runs
    alone on its project, all-or-nothing through a journal (gdres/serving/journal.py)."""

    spellings: ClassVar[dict[str, tuple[str, ...]]] = {}
    """Members that have variant spellings: the member, then each other name it may go by. A request
    gives each at most once, under any of its names; the model holds it under the first."""
    _spelled: dict[str, str] = PrivateAttr(default_factory=dict)

    op: str = Field(description="The operation; each model narrows it to its own name.")
    id: str | int | None = Field(None, description="Any caller-chosen id; the reply echoes it.")
    project_path: str = Field(
        description="The Godot project folder (holding project.godot): absolute, or relative to the folder the "
        "command line or MCP server runs in."
    )
    allow_scripts: bool = Field(
        False,
        description="Allow loading resources that carry a script (loading would run its code).",
    )

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        if "op" in inspect.get_annotations(cls):
            _DEFINED.append(cls)

    @model_validator(mode="wrap")
    @classmethod
    def _normalise(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Request:
        """Null means absent; a member given under a variant name moves to its own name (the name
        used is kept for the reply)."""
        spelled: dict[str, str] = {}
        if isinstance(data, dict):
            # Copied before anything moves: the caller's dict stays as it was.
            data = {key: value for key, value in data.items() if value is not None}
            for member, variants in cls.spellings.items():
                given = [name for name in variants if name in data]
                if not given:
                    continue
                if member in data or len(given) > 1:
                    names = [name for name in (member, *variants) if name in data]
                    raise ValueError(f"give {member} once, as {' or '.join(names)}, not both")
                spelled[member] = given[0]
                if isinstance(data[given[0]], (str, dict)):
                    data[member] = data.pop(given[0])
        model = handler(data)
        assert isinstance(model, Request)
        model._spelled = spelled
        return model

    @model_validator(mode="after")
    def _main_file_given(self) -> Request:
        key = self.main_file
        if key is not None and getattr(self, key) is None:
            raise ValueError(f"{key} is required")
        return self

    @classmethod
    def own_names(cls) -> dict[str, str]:
        """Each variant spelling the model takes, with the member it spells (`path` -> resource_path)."""
        return {variant: member for member, variants in cls.spellings.items() for variant in variants}

    @classmethod
    def writes(cls) -> bool:
        """Whether the operation writes files (its model is a Writing one, and takes dry_run)."""
        return False

    @property
    def main_file(self) -> str | None:
        """The member naming the file the operation is about (None for shape_create)."""
        return "resource_path" if "resource_path" in self.spellings else None

    @property
    def subject(self) -> str | None:
        """The member naming the file whose etag the reply gives and a write's if_match guards: the file
        the request edits in place, else the one it writes, else the one it reads (None: no file)."""
        files = type(self).files
        given = [key for key in files if getattr(self, key) is not None]
        for key in given:
            if files[key].in_place:
                return key
        return next((key for key in given if files[key].writes), given[0] if given else None)

    def spelled(self, member: str) -> str:
        """Return the name the request gave `member` under (its own name when it was not given)."""
        return self._spellings().get(member, member)

    @property
    def respelled(self) -> dict[str, str]:
        """The members the request gave under a variant spelling, each with the name it used."""
        return dict(self._spellings())

    def _spellings(self) -> dict[str, str]:
        # Read from pydantic's store of private values: `self._spelled` goes through the model's
        # __getattr__, 2.6 us a read, and a request is read about five times on its way.
        private = self.__pydantic_private__
        assert private is not None  # a model with private attributes always has their store
        spelled: dict[str, str] = private["_spelled"]
        return spelled

    @property
    def path_key(self) -> str | None:
        """Return the name the request gave its main file under."""
        main = self.main_file
        return self.spelled(main) if main is not None else None


class Writing(Request):
    """Members every writing operation has."""

    dry_run: bool = Field(
        False, description="Do everything but change the project: the reply lists each file the request would "
        "create or modify, with a unified diff, and nothing is written (no import runs either)."
    )
    if_match: str | None = Field(
        None, pattern="^[0-9a-f]{64}$", description="The etag an earlier reply gave of the file this request "
        "rewrites: if the file has changed since, the request is refused (conflict) and nothing is written."
    )

    @classmethod
    def writes(cls) -> bool:
        return True


class ResourceRead(Request, Answers[ReadReply]):
    """Read properties of a saved resource (`.tres`, `.res`, or a `.tscn` scene's root)."""

    title: ClassVar[str] = "Read a Godot resource"
    example: ClassVar[dict[str, Any]] = {"resource_path": "materials/red.tres", "depth": 0}
    files: ClassVar[dict[str, FileMember]] = {"resource_path": FileMember(paths.READABLE_SUFFIXES)}

    spellings: ClassVar[dict[str, tuple[str, ...]]] = {"resource_path": ("path",)}

    op: Literal["resource_read"] = "resource_read"
    resource_path: str | None = Field(
        None, description="The .tres, .res or .tscn file to read, relative to the project (res:// accepted), or its "
        "uid://."
    )
    path: str | None = Field(None, description="Variant spelling of resource_path.")
    depth: int = Field(
        1, ge=0, description="Levels of nested resources shown as objects; deeper ones (and all at 0) as paths. "
        "Imported assets (textures, fonts) are always {type, path}."
    )
    properties: list[str] | None = Field(
        None, description="Return exactly these properties, defaults included."
    )
    include_defaults: bool = Field(
        False, description="Return every stored property, also those at their class default (normally left out)."
    )


class MaterialCreate(Writing, Answers[SavedReply]):
    """Create a material (any Material subclass, or PhysicsMaterial) and save it."""

    title: ClassVar[str] = "Create a Godot material"
    example: ClassVar[dict[str, Any]] = {"material_type": "StandardMaterial3D", "resource_path": "materials/red.tres",
                                         "properties": {"albedo_color": "#ff0000", "roughness": 0.4}}
    files: ClassVar[dict[str, FileMember]] = {"resource_path": FileMember(paths.RESOURCE_SUFFIXES, writes=True),
                                              "shader_path": FileMember(paths.SHADER_SUFFIXES)}

    spellings: ClassVar[dict[str, tuple[str, ...]]] = {"resource_path": ("save_path",)}

    op: Literal["material_create"] = "material_create"
    material_type: str = Field(
        description="A Material class (StandardMaterial3D, ORMMaterial3D, ShaderMaterial, CanvasItemMaterial, "
        "ParticleProcessMaterial, ...) or PhysicsMaterial."
    )
    resource_path: str | None = Field(None, description="Where to save, a .tres file.")
    save_path: str | None = Field(None, description="Variant spelling of resource_path.")
    properties: Properties | None = Field(None, description="Properties set after creation: " + VALUES_HELP)
    shader_path: str | None = Field(
        None, description="ShaderMaterial only: a .gdshader assigned before the properties."
    )

    @model_validator(mode="after")
    def _shader_only_for_shader_material(self) -> MaterialCreate:
        if self.shader_path is not None and self.material_type != "ShaderMaterial":
            raise ValueError(
                f"shader_path goes with material_type ShaderMaterial, not {self.material_type}"
            )
        return self


class ShapeCreate(Writing, Answers[ShapeReply]):
    """Create a collision shape; optionally save it and/or assign it to a scene node."""

    title: ClassVar[str] = "Create a collision shape"
    example: ClassVar[dict[str, Any]] = {"shape_type": "CapsuleShape3D", "shape_params": {"radius": 0.4, "height": 1.8},
                                         "scene_path": "player.tscn", "node_path": "CollisionShape3D"}
    files: ClassVar[dict[str, FileMember]] = {
        "save_path": FileMember(paths.RESOURCE_SUFFIXES, writes=True),
        "scene_path": FileMember(paths.SCENE_SUFFIXES, writes=True, in_place=True),
    }
    echoed: ClassVar[tuple[str, ...]] = ("save_path", "shape_type", "scene_path", "node_path")

    spellings: ClassVar[dict[str, tuple[str, ...]]] = {"shape_params": ("properties",)}

    op: Literal["shape_create"] = "shape_create"
    shape_type: ShapeType = Field(description="One of the listed shape classes.")
    shape_params: Properties | None = Field(
        None, description="The shape's properties (size, radius, height, points...): " + VALUES_HELP
    )
    properties: Properties | None = Field(None, description="Variant spelling of shape_params.")
    save_path: str | None = Field(None, description="Save the shape as this .tres file.")
    scene_path: str | None = Field(None, description="Scene (.tscn) whose node gets the shape.")
    node_path: str | None = Field(
        None, description="CollisionShape2D/3D node in that scene; required with scene_path."
    )

    @model_validator(mode="after")
    def _check(self) -> ShapeCreate:
        if self.scene_path is not None and self.node_path is None:
            raise ValueError("node_path is required when scene_path is set")
        if self.node_path is not None and self.scene_path is None:
            raise ValueError("node_path needs scene_path")
        return self



class StyleBoxCreate(Writing, Answers[SavedReply]):
    """Create a UI style box and save it."""

    title: ClassVar[str] = "Create a UI style box"
    example: ClassVar[dict[str, Any]] = {"style_type": "StyleBoxFlat", "resource_path": "ui/panel.tres",
                                         "properties": {"bg_color": "#202830", "corner_radius_top_left": 6}}
    files: ClassVar[dict[str, FileMember]] = {"resource_path": FileMember(paths.RESOURCE_SUFFIXES, writes=True)}

    spellings: ClassVar[dict[str, tuple[str, ...]]] = {"resource_path": ("save_path",)}

    op: Literal["style_box_create"] = "style_box_create"
    style_type: StyleType = Field(description="One of the four style box classes.")
    resource_path: str | None = Field(None, description="Where to save, a .tres file.")
    save_path: str | None = Field(None, description="Variant spelling of resource_path.")
    properties: Properties | None = Field(None, description="Properties set after creation: " + VALUES_HELP)


class ResourceDuplicate(Writing, Answers[DuplicateReply]):
    """Copy a saved resource to a new file, optionally overriding properties on the copy."""

    title: ClassVar[str] = "Duplicate a Godot resource"
    example: ClassVar[dict[str, Any]] = {"source_path": "materials/red.tres", "dest_path": "materials/blue.tres",
                                         "property_overrides": {"albedo_color": "#0000ff"}}
    files: ClassVar[dict[str, FileMember]] = {"source_path": FileMember(paths.READABLE_SUFFIXES),
                                              "dest_path": FileMember(paths.RESOURCE_SUFFIXES, writes=True)}
    echoed: ClassVar[tuple[str, ...]] = ("source_path", "dest_path")

    op: Literal["resource_duplicate"] = "resource_duplicate"
    source_path: str = Field(description="Resource to copy, relative to the project, or its uid://.")
    dest_path: str = Field(description="Where the copy is saved, a .tres file.")
    deep_copy: bool = Field(
        False, description="Copy nested resources into the file instead of sharing them."
    )
    property_overrides: Properties | None = Field(
        None, description="Properties set on the copy; all others keep the source's values. " + VALUES_HELP
    )


class ResourceUpdate(Writing, Answers[UpdateReply]):
    """Change properties of a saved resource in place (its uid, ids and other lines stay as they are)."""

    title: ClassVar[str] = "Change a Godot resource"
    example: ClassVar[dict[str, Any]] = {"resource_path": "materials/red.tres", "properties": {"roughness": 0.8},
                                         "reset": ["metallic"]}
    files: ClassVar[dict[str, FileMember]] = {
        "resource_path": FileMember(paths.UPDATABLE_SUFFIXES, writes=True, in_place=True)}

    spellings: ClassVar[dict[str, tuple[str, ...]]] = {"resource_path": ("path",)}

    op: Literal["resource_update"] = "resource_update"
    resource_path: str | None = Field(None, description="Resource to change, a .tres or .res file (or its uid://).")
    path: str | None = Field(None, description="Variant spelling of resource_path.")
    properties: Properties | None = Field(
        None, description="New values, name -> value (a ShaderMaterial's uniforms as shader_parameter/<name>)."
    )
    reset: list[str] | None = Field(
        None, description="Properties put back to the class default (their lines leave the file)."
    )

    @model_validator(mode="after")
    def _something_to_do(self) -> ResourceUpdate:
        if not self.properties and not self.reset:
            raise ValueError("give properties to set or names to reset (or both)")
        both = sorted(set(self.properties or {}) & set(self.reset or []))
        if both:
            raise ValueError(f"{', '.join(both)} is both set and reset; give each property once")
        return self


class ResourceCreate(Writing, Answers[SavedReply]):
    """Create a resource of any class that holds no code (Gradient, Curve, Environment, Theme, ...) and save it."""

    title: ClassVar[str] = "Create any Godot resource"
    example: ClassVar[dict[str, Any]] = {"resource_type": "Gradient", "resource_path": "ui/fade.tres",
                                         "properties": {"colors": [[0, 0, 0, 1], [1, 1, 1, 0]]}}
    files: ClassVar[dict[str, FileMember]] = {"resource_path": FileMember(paths.RESOURCE_SUFFIXES, writes=True)}

    spellings: ClassVar[dict[str, tuple[str, ...]]] = {"resource_path": ("save_path",)}

    op: Literal["resource_create"] = "resource_create"
    resource_type: str = Field(description="Engine class name, e.g. Gradient, NoiseTexture2D, Environment.")
    resource_path: str | None = Field(None, description="Where to save, a .tres file.")
    save_path: str | None = Field(None, description="Variant spelling of resource_path.")
    properties: Properties | None = Field(
        None, description='Properties set after creation; a nested resource as a path or {"type", "properties"}.'
    )


class ClassInfo(Request, Answers[ClassInfoReply]):
    """Describe a resource class as the engine has it: what it inherits, the classes a request may
    create from it, and every property a request may set on it (type, default, named constants,
    range). Ask this first when you do not know a class or its property names."""

    title: ClassVar[str] = "Describe a Godot resource class"
    example: ClassVar[dict[str, Any]] = {"class_name": "StandardMaterial3D"}
    echoed: ClassVar[tuple[str, ...]] = ("class_name",)

    op: Literal["class_info"] = "class_info"
    class_name: str = Field(description="Engine class name, e.g. StandardMaterial3D, BoxShape3D, Gradient, Material.")


class SceneRead(Request, Answers[SceneReadReply]):
    """Read a scene's nodes (.tscn) as its file stores them, in tree order, and its signal connections.
    Runs none of its scripts."""

    title: ClassVar[str] = "Read a Godot scene's nodes"
    example: ClassVar[dict[str, Any]] = {"scene_path": "levels/level.tscn", "node_path": "Floor"}
    files: ClassVar[dict[str, FileMember]] = {"scene_path": FileMember(paths.INSTANCE_SUFFIXES)}
    echoed: ClassVar[tuple[str, ...]] = ("scene_path", "node_path")

    op: Literal["scene_read"] = "scene_read"
    scene_path: str = Field(description="The scene to read (.tscn, or an imported model: .glb, .gltf, .blend...), "
                            "relative to the project (res:// accepted), or its uid://.")
    node_path: str | None = Field(
        None, description='Only this node and those below it: "." is the root, "Floor/Mesh" a node under Floor.'
    )
    depth: int = Field(
        1, ge=0, description="Levels of nested resources shown as objects, as in resource_read."
    )


NODE_PATH_HELP = ('A node of the scene, as the editor\'s "Copy Node Path" gives it: "." is the root, "Floor/Mesh" '
                  "a node under Floor (also one inside an instanced scene).")


class SceneEdit(Writing):
    """Members every operation that changes a scene's nodes has."""

    files: ClassVar[dict[str, FileMember]] = {
        "scene_path": FileMember(paths.SCENE_SUFFIXES, writes=True, in_place=True)}
    echoed: ClassVar[tuple[str, ...]] = ("scene_path", "node_path")

    scene_path: str = Field(description="The .tscn scene to change, relative to the project (res:// accepted), or "
                            "its uid://.")


class NodeSetProperties(SceneEdit, Answers[NodeReply]):
    """Set properties of a scene node (.tscn) as the editor stores them: only its lines change; null puts
    one back to its default."""

    title: ClassVar[str] = "Set properties of a scene node"
    example: ClassVar[dict[str, Any]] = {"scene_path": "levels/level.tscn", "node_path": "Floor/Mesh",
                                         "properties": {"material_override": "materials/stone.tres"}}
    op: Literal["node_set_properties"] = "node_set_properties"
    node_path: str = Field(description=NODE_PATH_HELP)
    properties: Properties = Field(
        description="Properties to set, null to put one back to its default: " + VALUES_HELP, min_length=1
    )


class NodeAdd(SceneEdit, Answers[NodeReply]):
    """Add a node to a scene (.tscn): of an engine class (`type`) or an instance of a scene (`instance`)."""

    title: ClassVar[str] = "Add a node to a scene"
    example: ClassVar[dict[str, Any]] = {"scene_path": "levels/level.tscn", "parent_path": ".", "name": "Lamp",
                                         "type": "OmniLight3D", "properties": {"light_energy": 2}}
    files: ClassVar[dict[str, FileMember]] = {**SceneEdit.files, "instance": FileMember(paths.INSTANCE_SUFFIXES)}
    echoed: ClassVar[tuple[str, ...]] = ("scene_path",)

    op: Literal["node_add"] = "node_add"
    parent_path: str = Field(description="The new node's parent. " + NODE_PATH_HELP)
    name: str = Field(description="The new node's name; a name its parent already has is refused.")
    type: str | None = Field(None, description="An engine node class (MeshInstance3D, Area3D, Label, ...).")
    instance: str | None = Field(
        None, description="Instead of type: a scene to instance (.tscn, .scn, or an imported .glb/.gltf/.blend...)."
    )
    properties: Properties | None = Field(None, description="The new node's properties: " + VALUES_HELP)
    index: int | None = Field(None, ge=0, description="Its place among its parent's children (0: first); "
                              "left out: last.")

    @model_validator(mode="after")
    def _type_or_instance(self) -> NodeAdd:
        if (self.type is None) == (self.instance is None):
            raise ValueError("give the new node a type or an instance (one of them)")
        return self


class NodeRemove(SceneEdit, Answers[NodeRemoveReply]):
    """Remove a node from a scene (.tscn) with what lies below it, its connections and the resources
    only they used."""

    title: ClassVar[str] = "Remove a node from a scene"
    example: ClassVar[dict[str, Any]] = {"scene_path": "levels/level.tscn", "node_path": "Floor/OldLamp"}
    op: Literal["node_remove"] = "node_remove"
    node_path: str = Field(description="The node to remove (not the root). " + NODE_PATH_HELP)


class ResourceMove(Writing, Answers[MoveReply]):
    """Move or rename a file (with its .import and .uid) or a folder, rewriting every reference to it in
    scenes, resources and project settings; scripts that name it are listed, not edited."""

    title: ClassVar[str] = "Move a file or folder with its references"
    example: ClassVar[dict[str, Any]] = {"source_path": "materials/red.tres", "dest_path": "materials/old/red.tres"}
    files: ClassVar[dict[str, FileMember]] = {
        "source_path": FileMember(paths.ANY_SUFFIX, writes=True, in_place=True),
        "dest_path": FileMember(paths.ANY_SUFFIX, writes=True)}
    echoed: ClassVar[tuple[str, ...]] = ("source_path", "dest_path")
    reaches_project: ClassVar[bool] = True

    op: Literal["resource_move"] = "resource_move"
    source_path: str = Field(description="The file or folder to move, relative to the project (res:// accepted), "
                             "or its uid://.")
    dest_path: str = Field(description="Its new path, where nothing is yet (a file keeps its extension).")


class ImportRead(Request, Answers[ImportReadReply]):
    """Read an imported asset's import settings (its .import): importer, params, and every option with its
    default and, for enums, its values."""

    title: ClassVar[str] = "Read an asset's import settings"
    example: ClassVar[dict[str, Any]] = {"source_path": "art/player.png"}
    files: ClassVar[dict[str, FileMember]] = {"source_path": FileMember(paths.ANY_SUFFIX)}
    echoed: ClassVar[tuple[str, ...]] = ("source_path",)
    importer_options: ClassVar[bool] = True

    op: Literal["import_read"] = "import_read"
    source_path: str = Field(description="The asset (a texture, sound, font, 3D scene...), relative to the project.")


class ImportUpdate(Writing, Answers[ImportUpdateReply]):
    """Change an asset's import settings (only those .import lines) and import it again with them."""

    title: ClassVar[str] = "Change an asset's import settings"
    example: ClassVar[dict[str, Any]] = {"source_path": "art/player.png", "params": {"mipmaps/generate": True}}
    files: ClassVar[dict[str, FileMember]] = {
        "source_path": FileMember(paths.ANY_SUFFIX, writes=True, in_place=True)}
    echoed: ClassVar[tuple[str, ...]] = ("source_path",)
    importer_options: ClassVar[bool] = True

    op: Literal["import_update"] = "import_update"
    source_path: str = Field(description="The asset, relative to the project.")
    params: dict[str, Any] = Field(description="Option -> value, as import_read names them (an enum: its "
                                   "label or number).", min_length=1)


def _op(model: type[Request]) -> str:
    (name,) = get_args(model.model_fields["op"].annotation)
    return str(name)


def reply_type(model: type[Request]) -> type[Answer]:
    """The success reply type an operation's model names (`Answers[...]`)."""
    (answers,) = [base for base in getattr(model, "__orig_bases__", ()) if getattr(base, "__origin__", None) is Answers]
    reply: type[Answer] = get_args(answers)[0]
    return reply


REQUEST_MODELS: dict[str, type[Request]] = {_op(model): model for model in _DEFINED}
"""Each operation's request model: every model defined above, in that order."""
OPERATIONS = tuple(REQUEST_MODELS)
REPLIES: dict[str, type[Answer]] = {op: reply_type(model) for op, model in REQUEST_MODELS.items()}
"""Each operation's success reply type."""

# Built from the models above, so the union is a runtime value; to a type checker a request is a Request.
AnyRequest = Request
REQUEST_ADAPTER: TypeAdapter[Request] = TypeAdapter(
    Annotated[Union.__getitem__(tuple(REQUEST_MODELS.values())), Field(discriminator="op")]  # type: ignore[arg-type]
)


def request_schema() -> dict[str, Any]:
    """Return the JSON Schema of every request."""
    return REQUEST_ADAPTER.json_schema()


def parse_request(raw: Any) -> AnyRequest:
    """Validate a decoded JSON value as a request, or raise the error its reply should carry."""
    if not isinstance(raw, dict):
        raise InvalidRequest(f"a request is a JSON object, not {type(raw).__name__}")
    op = raw.get("op")
    if op not in OPERATIONS:
        shown = "missing" if op is None else repr(op)
        raise InvalidRequest(
            f"op is {shown}; use one of {', '.join(OPERATIONS)}", field="op"
        )
    try:
        return REQUEST_ADAPTER.validate_python(raw)
    except ValidationError as exc:
        raise _request_error(exc) from None


CLOSED_SETS: dict[str, tuple[str, tuple[str, ...]]] = {
    "shape_type": ("a shape class this tool creates", SHAPE_TYPES),
    "style_type": ("a style box class", STYLE_TYPES),
}
"""Members whose value is one of a closed set of class names: what they name, and the set."""

_PLAIN_WORDING = {
    "int_type": "must be an integer", "int_parsing": "must be an integer", "int_from_float": "must be an integer",
    "bool_type": "must be true or false", "bool_parsing": "must be true or false",
    "string_type": "must be a string", "float_type": "must be a number", "float_parsing": "must be a number",
    "dict_type": "must be an object", "list_type": "must be an array",
}
"""Pydantic's error kinds in the words of a JSON request (its own say "Input should be a valid ...")."""


def _request_error(exc: ValidationError) -> InvalidRequest | InvalidType:
    errors = exc.errors(include_url=False)
    first = errors[0]
    ctx_error = first.get("ctx", {}).get("error")
    if isinstance(ctx_error, InvalidType):
        return ctx_error
    loc = _where(first)
    field = loc[0] if loc else None
    where = ".".join(loc)
    kind = first["type"]
    given = first.get("input")
    if kind == "literal_error" and field in CLOSED_SETS and isinstance(given, str):
        what, accepted = CLOSED_SETS[field]
        return InvalidType(f"{field} {given!r} is not {what}"
                           f"{suggest_class(given, accepted) or '; use one of ' + ', '.join(accepted)}", field=field)
    if kind == "literal_error" and not isinstance(given, str):
        kind = "string_type"
    if kind == "extra_forbidden":
        op = str(first["loc"][0]) if first["loc"] else ""
        known = _member_names(REQUEST_MODELS[op]) if op in REQUEST_MODELS and len(loc) == 1 else []
        close = difflib.get_close_matches(where, known, n=1, cutoff=0.75)
        return InvalidRequest(f"unknown member {where!r}{f'; did you mean {close[0]!r}?' if close else ''}",
                              field=field)
    if kind == "missing":
        unknown = [".".join(_where(error)) for error in errors if error["type"] == "extra_forbidden"]
        meant = _meant(where, unknown)
        hint = f" (the request has {meant!r}: is that it?)" if meant else ""
        return InvalidRequest(f"{where} is required{hint}", field=field)
    message = _PLAIN_WORDING.get(kind) or str(first["msg"]).removeprefix("Value error, ")
    if kind == "greater_than_equal":
        message = f"must be at least {first.get('ctx', {}).get('ge')}"
    if where:
        message = f"{where}: {message} (got {_shown(first.get('input'))})"
    return InvalidRequest(message, field=field)


def _member_names(model: type[Request]) -> list[str]:
    """The members a request of `model` may have, as requests spell them."""
    return [info.alias if isinstance(info.alias, str) else name for name, info in model.model_fields.items()]


def _where(error: Any) -> list[str]:
    loc = [str(part) for part in error["loc"] if not str(part).startswith(("function-", "op"))]
    # The discriminated union puts the op name first in every location; drop it.
    return loc[1:] if loc and loc[0] in OPERATIONS else loc


def _meant(missing: str, unknown: list[str]) -> str | None:
    """The unknown member most likely meant for a missing one: the same name in another spelling
    (materialType, Material-Type) or one a typo away."""
    def plain(name: str) -> str:
        return name.replace("_", "").replace("-", "").lower()
    same = [name for name in unknown if plain(name) == plain(missing)]
    close = difflib.get_close_matches(missing, unknown, n=1, cutoff=0.75)
    return same[0] if same else close[0] if close else None


def suggest_class(name: str, accepted: Sequence[str]) -> str:
    """"; did you mean ..." for a class name not in `accepted`: another case, the Godot 4 name of a
    Godot 3 class, or the closest names; "" when none is near."""
    for candidate in accepted:
        if candidate.lower() == name.lower():
            return f"; did you mean {candidate}?"
    renamed = godot3_names()["classes"].get(name)
    if renamed in accepted:
        return f"; did you mean {renamed} (its name since Godot 4)?"
    close = difflib.get_close_matches(name, accepted, n=3, cutoff=0.6)
    return f"; did you mean {', '.join(close)}?" if close else ""


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
