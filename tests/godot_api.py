"""What one Godot version offers a script, read from its class reference and kept in a small JSON file.

Both forms of the class reference are read: the XML that `godot --doctool DIR` writes for the engine at hand,
and the reStructuredText that the godot-docs repository keeps for a release (scripts/vendor_godot_api.py
turns that into tests/godot_api/<major>.<minor>.json). Both come from the engine's ClassDB plus the two
pseudo-classes @GlobalScope (utility functions, singletons, global enums) and @GDScript (the language's own
functions, constants and annotations).
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

GLOBAL_SCOPE = "@GlobalScope"
GDSCRIPT = "@GDScript"


@dataclass
class ClassInfo:
    """One class of the reference: its parent and its members' names (methods and properties with a type)."""

    inherits: str = ""
    methods: dict[str, str] = field(default_factory=dict)
    properties: dict[str, str] = field(default_factory=dict)
    constants: set[str] = field(default_factory=set)
    enums: set[str] = field(default_factory=set)
    signals: set[str] = field(default_factory=set)
    annotations: set[str] = field(default_factory=set)

    def members(self) -> set[str]:
        """Return every name that may follow `Class.` or `value.`."""
        return {*self.methods, *self.properties, *self.constants, *self.enums, *self.signals}

    def to_json(self) -> dict[str, Any]:
        """Return this class as the vendored file stores it (sorted, empty parts left out)."""
        out: dict[str, Any] = {"inherits": self.inherits} if self.inherits else {}
        for name in ("methods", "properties"):
            if getattr(self, name):
                out[name] = dict(sorted(getattr(self, name).items()))
        for name in ("constants", "enums", "signals", "annotations"):
            if getattr(self, name):
                out[name] = sorted(getattr(self, name))
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ClassInfo:
        """Return the class stored by to_json()."""
        return cls(
            inherits=data.get("inherits", ""),
            methods=dict(data.get("methods", {})),
            properties=dict(data.get("properties", {})),
            constants=set(data.get("constants", [])),
            enums=set(data.get("enums", [])),
            signals=set(data.get("signals", [])),
            annotations=set(data.get("annotations", [])),
        )


@dataclass
class Api:
    """The class reference of one Godot version: every class, built-in type and pseudo-class by name."""

    version: str
    classes: dict[str, ClassInfo]
    source: dict[str, str] = field(default_factory=dict)

    # ----- files ---------------------------------------------------------------------------------------

    def to_json(self) -> str:
        """Return the vendored file's text: one class a line, so a diff between versions reads well."""
        lines = [
            f'"{name}": {json.dumps(info.to_json(), sort_keys=True)}'
            for name, info in sorted(self.classes.items())
        ]
        head = json.dumps({"version": self.version, "source": self.source}, indent=1)[:-2]
        return head + ',\n "classes": {\n' + ",\n".join(lines) + "\n }\n}\n"

    @classmethod
    def load(cls, path: Path) -> Api:
        """Return the API stored in `path` by to_json()."""
        data = json.loads(path.read_text(encoding="utf-8"))
        classes = {name: ClassInfo.from_json(info) for name, info in data["classes"].items()}
        return cls(version=data["version"], classes=classes, source=data.get("source", {}))

    # ----- questions -----------------------------------------------------------------------------------

    def lineage(self, name: str) -> list[ClassInfo]:
        """Return the class `name` and its ancestors, nearest first ([] for an unknown name)."""
        chain: list[ClassInfo] = []
        while name in self.classes and len(chain) < 64:
            chain.append(self.classes[name])
            name = self.classes[name].inherits
        return chain

    def inherits(self, name: str, base: str) -> bool:
        """Whether class `name` is `base` or one of its descendants."""
        return base in self.classes and any(info is self.classes[base] for info in self.lineage(name))

    def is_object_class(self, name: str) -> bool:
        """Whether `name` is Object or one of its descendants (not a built-in type like String)."""
        return self.inherits(name, "Object")

    def has_member(self, owner: str, name: str) -> bool:
        """Whether `owner` (or a class it inherits from) has a method, property, constant, enum or signal `name`."""
        return any(name in info.members() for info in self.lineage(owner))

    def has_member_below(self, owner: str, name: str) -> bool:
        """Whether a class that inherits from the Object class `owner` has a member `name`."""
        if not self.is_object_class(owner):
            return False
        return any(
            name in info.members() and any(base is self.classes[owner] for base in self.lineage(cls)[1:])
            for cls, info in self.classes.items()
        )

    def return_type(self, owner: str, name: str) -> str:
        """Return the type of method or property `name` of `owner` ("" when unknown or not a class)."""
        for info in self.lineage(owner):
            if name in info.methods:
                return _known(info.methods[name])
            if name in info.properties:
                return _known(info.properties[name])
        return ""

    def any_member(self, name: str) -> bool:
        """Whether some class or built-in type has a member `name`."""
        return any(name in info.members() for info in self.classes.values())

    def has_type(self, name: str) -> bool:
        """Whether `name` is a class, a built-in type, a global enum or a class's enum ("Class.Enum")."""
        if name in self.classes and not name.startswith("@"):
            return True
        if name in self.classes.get(GLOBAL_SCOPE, ClassInfo()).enums:
            return True
        owner, _, enum = name.rpartition(".")
        return bool(owner) and any(enum in info.enums for info in self.lineage(owner))

    def singleton_type(self, name: str) -> str:
        """Return the class of the singleton `name` (Engine, OS, ResourceLoader...), or ""."""
        return self.classes.get(GLOBAL_SCOPE, ClassInfo()).properties.get(name, "")

    def global_function(self, name: str) -> str | None:
        """Return the return type of utility or GDScript function `name`, or None when there is none."""
        for scope in (GLOBAL_SCOPE, GDSCRIPT):
            info = self.classes.get(scope, ClassInfo())
            if name in info.methods:
                return _known(info.methods[name])
        return None

    def global_constant(self, name: str) -> bool:
        """Whether `name` is a global constant (OK, TYPE_INT, PROPERTY_USAGE_STORAGE, PI, INF...)."""
        return any(name in self.classes.get(scope, ClassInfo()).constants for scope in (GLOBAL_SCOPE, GDSCRIPT))

    def annotation(self, name: str) -> bool:
        """Whether the language has annotation `name` ("@export")."""
        return name in self.classes.get(GDSCRIPT, ClassInfo()).annotations


def _known(type_name: str) -> str:
    """A declared type as far as it tells what a value is: a Variant could be anything."""
    return "" if type_name == "Variant" else type_name


# ----- reading the class reference ------------------------------------------------------------------------


def _type_of(text: str, enum: str | None = None) -> str:
    """The type the script sees: an enum or bitfield is an int; a typed Array is an Array."""
    if enum:
        return "int"
    return text.split("[", 1)[0] if text else ""


def from_xml(folder: Path) -> dict[str, ClassInfo]:
    """Read every class from the XML class reference under `folder` (`godot --doctool` output)."""
    classes: dict[str, ClassInfo] = {}
    for path in sorted(folder.rglob("*.xml")):
        root = ET.parse(path).getroot()
        if root.tag != "class":
            continue
        info = ClassInfo(inherits=root.get("inherits", ""))
        for method in root.iterfind("methods/method"):
            returned = method.find("return")
            if returned is None:
                info.methods[method.get("name", "")] = ""
            else:
                info.methods[method.get("name", "")] = _type_of(returned.get("type", ""), returned.get("enum"))
        for member in root.iterfind("members/member"):
            if "/" not in member.get("name", "/"):  # a setting ("rendering/x/y") is no script's `.name`
                info.properties[member.get("name", "")] = _type_of(member.get("type", ""), member.get("enum"))
        for constant in root.iterfind("constants/constant"):
            info.constants.add(constant.get("name", ""))
            if constant.get("enum"):
                info.enums.add(constant.get("enum", ""))
        info.signals.update(signal.get("name", "") for signal in root.iterfind("signals/signal"))
        info.annotations.update(note.get("name", "") for note in root.iterfind("annotations/annotation"))
        classes[root.get("name", path.stem)] = info
    return classes


_ANCHOR = re.compile(r"^\.\. _(class|enum)_(.+?):$")
_KINDS = ("method", "property", "constant", "signal", "annotation")
_REF = re.compile(r":ref:`([^<`]+)<(class|enum)_([^>`]+)>`")


def from_rst(files: Iterable[str]) -> dict[str, ClassInfo]:
    """Read every class from the texts of godot-docs' classes/class_*.rst files."""
    classes: dict[str, ClassInfo] = {}
    for text in files:
        lines = text.splitlines()
        anchors = [(i, m.group(1), m.group(2)) for i, line in enumerate(lines) if (m := _ANCHOR.match(line))]
        if not anchors or anchors[0][1] != "class":
            continue
        name = anchors[0][2]
        info = ClassInfo()
        for line in lines:
            if line.startswith("**Inherits:**"):
                found = _REF.search(line)
                info.inherits = found.group(1) if found else ""
                break
        for i, kind, target in anchors[1:]:
            if not target.startswith(name + "_"):
                continue
            rest = target[len(name) + 1 :]
            if kind == "enum":
                info.enums.add(rest)
                continue
            part, _, member = rest.partition("_")
            if part not in _KINDS or not member:
                continue
            if part == "property" and "/" in member:
                continue
            if part in ("method", "property"):
                (info.methods if part == "method" else info.properties)[member] = _declared_type(lines, i)
            elif part == "constant":
                info.constants.add(member)
            elif part == "signal":
                info.signals.add(member)
            else:
                info.annotations.add(member)
        classes[name] = info
    return classes


def _declared_type(lines: list[str], anchor: int) -> str:
    """The type on the signature line that follows the anchor at `anchor` ("" for void or none)."""
    for line in lines[anchor + 1 : anchor + 8]:
        if not line or line.startswith(".. "):
            continue
        if line.startswith("|void|"):
            return ""
        found = _REF.match(line)
        if found is None:
            return ""
        return _type_of(found.group(1), found.group(3) if found.group(2) == "enum" else None)
    return ""
