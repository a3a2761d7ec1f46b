"""Find what the bundled GDScript takes from the engine: classes, members, global names and syntax.

A static scan over gdtoolkit's parse tree (the parser scripts/lint.sh already runs). It knows the type of
a value where the code says it (typed variables and arguments, `:=` from a constructor or a typed call,
`as`, literals) and follows method return types through the API it is checked against. What it cannot type
still counts: every `.name` the code writes must be a member of some class ("somewhere" below). Not seen:
a method named in a string (`obj.call("name")`), which a script needs only to use what a newer engine has,
behind a check.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeAlias

from gdtoolkit.parser import parser  # type: ignore[import-untyped]
from lark import Token, Tree

from godot_api import Api

_Tree: TypeAlias = "Tree[Token]"
_Node: TypeAlias = "Tree[Token] | Token"

# The syntax a script may use, with the Godot version that brought it and where that is recorded.
SYNTAX: dict[str, tuple[tuple[int, int], str]] = {
    "static var": ((4, 1), "godotengine/godot#76264"),
    "typed for-loop variable": ((4, 2), "godotengine/godot#80247"),
    "is not": ((4, 3), "godotengine/godot#87939"),
    "typed Dictionary": ((4, 4), "godotengine/godot#78656"),
    "variadic function": ((4, 5), "godotengine/godot#82808"),
}

_KEYWORDS = {"true": "bool", "false": "bool", "null": "", "self": "", "super": ""}
_INDEXED = {
    "String": "String",
    "PackedStringArray": "String",
    "PackedByteArray": "int",
    "PackedInt32Array": "int",
    "PackedInt64Array": "int",
    "PackedFloat32Array": "float",
    "PackedFloat64Array": "float",
}
_TYPED = re.compile(r"^(Array|Dictionary)\[(.+)\]$")


@dataclass(frozen=True)
class Use:
    """One thing the code takes from the engine.

    kind: "type" (a class or built-in type named in code), "member" (owner.name on a value of a known
    type, or on a class), "global" (a name used bare: OK, TYPE_INT, str(), preload()), "somewhere"
    (a `.name` on a value of unknown type), "annotation", or "syntax".
    """

    kind: str
    owner: str
    name: str
    where: str

    def __str__(self) -> str:
        name = f"{self.owner}.{self.name}" if self.owner else self.name
        return f"{self.where}: {self.kind} {name}"


@dataclass
class _Scope:
    """What one script (or inner class) defines: its members' types, its functions' return types."""

    path: str
    extends: str = "RefCounted"
    types: dict[str, str] = field(default_factory=dict)
    functions: dict[str, str] = field(default_factory=dict)
    scripts: set[str] = field(default_factory=set)
    outer: _Scope | None = None
    # The script this one extends by path (`extends "base.gd"`), whose members it has.
    base: _Scope | None = None

    def _scopes(self) -> Iterator[_Scope]:
        """This scope and the scripts it extends, then the same of each scope around it."""
        scope: _Scope | None = self
        while scope is not None:
            inherited: _Scope | None = scope
            while inherited is not None:
                yield inherited
                inherited = inherited.base
            scope = scope.outer

    def lookup(self, name: str) -> str | None:
        return next((scope.types[name] for scope in self._scopes() if name in scope.types), None)

    def function(self, name: str) -> str | None:
        return next((scope.functions[name] for scope in self._scopes() if name in scope.functions), None)

    def is_script(self, name: str) -> bool:
        return any(name in scope.scripts for scope in self._scopes())

    def engine_class(self) -> str:
        """The engine class this script extends, through the scripts it extends by path."""
        return self.base.engine_class() if self.base is not None else self.extends


def _name(node: _Node) -> str:
    return str(node) if isinstance(node, Token) else ""


def _where(path: str, node: _Node) -> str:
    line = node.line if isinstance(node, Token) else getattr(node.meta, "line", 0)
    return f"{path}:{line}"


class Scanner:
    """Walk the scripts under a folder and collect their Uses, typed through `api` where it can."""

    def __init__(self, api: Api) -> None:
        self.api = api
        self.uses: list[Use] = []
        self.script_names: set[str] = set()

    # ----- entry ---------------------------------------------------------------------------------------

    def scan(self, folder: Path) -> list[Use]:
        """Return every Use in the .gd files under `folder`, in file order."""
        trees = {}
        for path in sorted(folder.rglob("*.gd")):
            rel = path.relative_to(folder.parent).as_posix()
            trees[rel] = parser.parse(path.read_text(encoding="utf-8"), gather_metadata=True)
        for tree in trees.values():
            self.script_names |= _defined_names(tree)
        scopes = {rel: _Scope(rel) for rel in trees}
        for rel, tree in trees.items():
            for node in tree.children:  # first what each script defines, so that code above a definition sees it
                self._declare(node, scopes[rel])
        for rel, scope in scopes.items():
            if scope.extends.endswith(".gd"):
                scope.base = scopes[posixpath.normpath(posixpath.join(posixpath.dirname(rel), scope.extends))]
        for rel, tree in trees.items():
            self._statements(tree, scopes[rel])
        return self.uses

    def _use(self, kind: str, owner: str, name: str, node: _Node, scope: _Scope) -> None:
        self.uses.append(Use(kind, owner, name, _where(scope.path, node)))

    # ----- declarations --------------------------------------------------------------------------------

    def _script(self, tree: _Tree, scope: _Scope) -> None:
        for node in tree.children:  # first what the script defines, so that code above a definition sees it
            self._declare(node, scope)
        self._statements(tree, scope)

    def _statements(self, tree: _Tree, scope: _Scope) -> None:
        for node in tree.children:
            self._statement(node, scope, {})

    def _declare(self, node: _Node, scope: _Scope) -> None:
        if not isinstance(node, Tree):
            return
        if node.data == "extends_stmt":
            named = node.children[0]  # a class name, or a string: the path of a script
            scope.extends = _name(named if isinstance(named, Token) else named.children[0]).strip('"')
        elif node.data in ("class_var_stmt", "static_class_var_stmt", "const_stmt"):
            declared = node.children[0]
            if node.data == "static_class_var_stmt":
                self._use("syntax", "", "static var", node, scope)
                declared = declared.children[0] if isinstance(declared, Tree) else declared
            if isinstance(declared, Tree):
                self._declare_value(declared, scope)
        elif node.data in ("func_def", "static_func_def"):
            header = _header(node.children[0] if node.data == "static_func_def" else node)
            returned = header.children[2] if len(header.children) > 2 else None
            scope.functions[_name(header.children[0])] = self._type_name(returned, scope) if returned else ""
        elif node.data == "class_def":
            scope.scripts.add(_name(node.children[0]))
        elif node.data == "enum_stmt":
            for enum in node.children:
                if isinstance(enum, Tree) and enum.data == "enum_named":
                    scope.scripts.add(_name(enum.children[0]))
                elif isinstance(enum, Tree):  # an unnamed enum's values are the script's constants
                    for value in enum.find_data("enum_element"):
                        scope.types[_name(value.children[0])] = "int"

    def _declare_value(self, node: _Tree, scope: _Scope) -> None:
        name = _name(node.children[0])
        rest = node.children[1:]
        hint = rest[0] if rest and isinstance(rest[0], Token) and rest[0].type == "TYPE_HINT" else None
        value = rest[-1] if rest and isinstance(rest[-1], Tree) and rest[-1].data == "expr" else None
        if value is not None and _is_preload(value):
            scope.scripts.add(name)
            scope.types[name] = ""
        elif hint is not None:
            scope.types[name] = str(hint)
        else:
            scope.types[name] = ""

    # ----- statements ----------------------------------------------------------------------------------

    def _statement(self, node: _Node, scope: _Scope, local: dict[str, str]) -> None:
        if not isinstance(node, Tree):
            return
        data = node.data
        if data == "extends_stmt":
            self._type(node.children[0], scope, node)
        elif data == "annotation":
            self._use("annotation", "", "@" + _name(node.children[0]), node, scope)
            for child in node.children[1:]:
                self._statement(child, scope, local)
        elif data == "class_def":
            inner = _Scope(scope.path, outer=scope)
            self._script(Tree("start", node.children[1:]), inner)
        elif data in ("func_def", "static_func_def"):
            self._function(node if data == "func_def" else _tree(node.children[0]), scope)
        elif data in ("class_var_stmt", "static_class_var_stmt", "const_stmt", "func_var_stmt"):
            declared = node.children[0]
            if isinstance(declared, Tree) and declared.data == "class_var_stmt":
                declared = declared.children[0]
            if isinstance(declared, Tree):
                self._variable(declared, scope, local, declare=data == "func_var_stmt")
            for extra in node.children[1:]:
                self._statement(extra, scope, local)
        elif data in ("for_stmt", "for_stmt_typed"):
            self._for(node, scope, local)
        elif data == "match_stmt":
            self._expr(node.children[0], scope, local)
            for branch in node.children[1:]:
                self._match_branch(branch, scope, local)
        elif data == "expr":
            self._expr(node, scope, local)
        else:
            for child in node.children:
                if isinstance(child, Tree) and child.data in _EXPRESSIONS:
                    self._expr(child, scope, local)
                else:
                    self._statement(child, scope, local)

    def _function(self, node: _Tree, scope: _Scope) -> None:
        header = _header(node)
        local: dict[str, str] = {}
        for child in header.children[1:]:
            if isinstance(child, Tree) and child.data == "func_args":
                self._arguments(child, scope, local)
            elif isinstance(child, Token) and child.type == "TYPE_HINT":
                self._type(child, scope, child)
        for statement in node.children[1:]:
            self._statement(statement, scope, local)

    def _arguments(self, args: _Tree, scope: _Scope, local: dict[str, str]) -> None:
        for arg in args.children:
            if isinstance(arg, Token):
                local[str(arg)] = ""
                continue
            if arg.data == "func_arg_variadic":
                self._use("syntax", "", "variadic function", arg, scope)
                self._arguments(Tree("func_args", arg.children), scope, local)
                continue
            name = _name(arg.children[0])
            local[name] = ""
            for part in arg.children[1:]:
                if isinstance(part, Token) and part.type == "TYPE_HINT":
                    local[name] = self._type(part, scope, part)
                elif isinstance(part, Tree):
                    found = self._expr(part, scope, local)
                    if arg.data == "func_arg_inf":
                        local[name] = found

    def _variable(self, node: _Tree, scope: _Scope, local: dict[str, str], declare: bool) -> None:
        name = _name(node.children[0])
        found = ""
        typed = False
        for part in node.children[1:]:
            if isinstance(part, Token) and part.type == "TYPE_HINT":
                found = self._type(part, scope, part)
                typed = True
            elif isinstance(part, Tree):
                if part.data in ("inline_property_body", "property_body_def"):
                    self._statement(part, scope, local)
                    continue
                inferred = self._expr(part, scope, local)
                if not typed and node.data.endswith("_inf"):
                    found = inferred
        if declare:
            local[name] = found
        elif found and not scope.types.get(name) and not scope.is_script(name):
            scope.types[name] = found

    def _for(self, node: _Tree, scope: _Scope, local: dict[str, str]) -> None:
        name = _name(node.children[0])
        rest = node.children[1:]
        local[name] = ""
        if node.data == "for_stmt_typed":
            self._use("syntax", "", "typed for-loop variable", node, scope)
            local[name] = self._type(rest[0], scope, rest[0])
            rest = rest[1:]
        self._expr(rest[0], scope, local)
        for statement in rest[1:]:
            self._statement(statement, scope, local)

    def _match_branch(self, branch: _Node, scope: _Scope, local: dict[str, str]) -> None:
        if not isinstance(branch, Tree):
            return
        for child in branch.children:
            if isinstance(child, Tree) and child.data == "pattern":
                self._pattern(child, scope, local)
            else:
                self._statement(child, scope, local)

    def _pattern(self, node: _Node, scope: _Scope, local: dict[str, str]) -> None:
        if isinstance(node, Token):
            if node.type == "NAME":
                self._reference(node, scope, local)
            return
        if node.data == "var_capture_pattern":
            local[_name(node.children[0])] = ""
        elif node.data == "attr_pattern":
            self._attributes(node.children, scope, local, call=False)
        else:
            for child in node.children:
                self._pattern(child, scope, local)

    # ----- types ---------------------------------------------------------------------------------------

    def _type(self, hint: _Node, scope: _Scope, node: _Node) -> str:
        """Record the types a hint names; return the one a value of it has ("" for a script's own)."""
        text = _name(hint)
        typed = _TYPED.match(text)
        if typed:
            if typed.group(1) == "Dictionary":
                self._use("syntax", "", "typed Dictionary", node, scope)
            for part in typed.group(2).split(","):
                self._type(Token("TYPE_HINT", part.strip()), scope, node)
            return typed.group(1)
        return self._type_name(Token("TYPE_HINT", text), scope, node)

    def _type_name(self, hint: _Node, scope: _Scope, node: _Node | None = None) -> str:
        text = _name(hint)
        if _TYPED.match(text):
            return self._type(hint, scope, node or hint)
        head = text.split(".", 1)[0]
        if not text or text in ("void", "Variant") or text.startswith('"') or scope.is_script(head):
            return ""
        if node is not None:
            self._use("type", "", text, node, scope)
        return text

    # ----- expressions ---------------------------------------------------------------------------------

    def _expr(self, node: _Node, scope: _Scope, local: dict[str, str]) -> str:
        """Walk an expression, recording its Uses; return its type where known ("" otherwise)."""
        if isinstance(node, Token):
            if node.type == "NAME":
                return self._reference(node, scope, local)
            if node.type == "NUMBER":
                return "float" if "." in node or "e" in node.lower() else "int"
            if node.type == "HEX":
                return "int"
            return ""
        data = node.data
        if data in ("expr", "par_expr") and len(node.children) == 1:
            return self._expr(node.children[0], scope, local)
        if data == "string":
            return "String"
        if data == "string_name":
            return "StringName"
        if data == "getattr":
            return self._attributes(node.children, scope, local, call=False)
        if data == "getattr_call":
            found = self._attributes(_tree(node.children[0]).children, scope, local, call=True)
            for arg in node.children[1:]:
                self._expr(arg, scope, local)
            return found
        if data == "standalone_call":
            return self._call(node, scope, local)
        if data == "subscr_expr":
            base = self._expr(node.children[0], scope, local)
            for index in node.children[1:]:
                self._expr(index, scope, local)
            return _INDEXED.get(base, "")
        if data in ("actual_type_cast", "type_test", "asless_type_test"):
            return self._type_check(node, scope, local)
        if data == "lambda":
            self._lambda(node, scope, local)
            return "Callable"
        found = ""
        for child in node.children:
            found = self._expr(child, scope, local) or found
        if data in ("array", "list_pattern"):
            return "Array"
        if data == "dict":
            return "Dictionary"
        if data in _BOOLEAN:
            return "bool"
        return found if data in ("arith_expr", "mdr_expr", "test_expr", "asless_arith_expr") else ""

    def _lambda(self, node: _Tree, scope: _Scope, outer: dict[str, str]) -> None:
        local = dict(outer)  # a lambda sees the variables around it
        for part in _header(node).children:
            if isinstance(part, Tree) and part.data == "func_args":
                self._arguments(part, scope, local)
            elif isinstance(part, Token) and part.type == "TYPE_HINT":
                self._type(part, scope, part)
        for statement in node.children[1:]:
            self._statement(statement, scope, local)

    def _type_check(self, node: _Tree, scope: _Scope, local: dict[str, str]) -> str:
        self._expr(node.children[0], scope, local)
        words = " ".join(str(c) for c in node.children[1:-1] if isinstance(c, Token)).split()
        if words[:2] == ["is", "not"]:
            self._use("syntax", "", "is not", node, scope)
        target = node.children[-1]
        if isinstance(target, Token):
            found = self._type_name(Token("TYPE_HINT", str(target)), scope, node)
        else:
            found = self._expr(target, scope, local)
        return "bool" if "is" in words else found

    def _reference(self, token: Token, scope: _Scope, local: dict[str, str]) -> str:
        name = str(token)
        if name in local:
            return local[name]
        if name in _KEYWORDS:
            return _KEYWORDS[name]
        found = scope.lookup(name)
        if found is not None:
            return found
        if scope.function(name) is not None or scope.is_script(name):
            return ""
        self._use("global", "", name, token, scope)
        singleton = self.api.singleton_type(name)
        if singleton:
            return singleton
        if self.api.has_type(name):
            return "class:" + name
        return "int" if self.api.global_constant(name) else ""

    def _attributes(self, parts: list[_Node], scope: _Scope, local: dict[str, str], call: bool) -> str:
        """Walk `base.a.b...` (the last a method when `call`); return the type of the whole."""
        current = self._expr(parts[0], scope, local)
        names = [part for part in parts[1:] if isinstance(part, Token) and part.type == "NAME"]
        for position, token in enumerate(names):
            is_call = call and position == len(names) - 1
            current = self._member(current, token, scope, is_call)
        return current

    def _member(self, owner: str, token: Token, scope: _Scope, is_call: bool) -> str:
        name = str(token)
        static = owner.startswith("class:")
        owner = owner.removeprefix("class:")
        if owner == "Dictionary" and not is_call:
            return ""  # `dict.key` reads an entry
        if name == "new" and is_call:
            if owner and static and not self.api.is_object_class(owner):
                self._use("member", owner, name, token, scope)
            return owner if static else ""
        if owner and self.api.inherits(owner, "Script") and not self.api.has_member(owner, name):
            owner = ""  # a loaded script: `script.run()` calls the script's own static function
        if owner and self.api.lineage(owner):
            self._use("member", owner, name, token, scope)
            return self.api.return_type(owner, name)
        if name not in self.script_names:
            self._use("somewhere", "", name, token, scope)
        return ""

    def _call(self, node: _Tree, scope: _Scope, local: dict[str, str]) -> str:
        callee = node.children[0]
        name = _name(callee)
        for arg in node.children[1:]:
            self._expr(arg, scope, local)
        if name in local:
            return ""
        declared = scope.function(name)
        if declared is not None:
            return declared
        if self.api.global_function(name) is not None:
            self._use("global", "", name, callee, scope)
            return self.api.global_function(name) or ""
        if self.api.has_type(name) and not self.api.is_object_class(name):
            self._use("type", "", name, callee, scope)
            return name
        owner = scope.engine_class()
        self._use("member", owner, name, callee, scope)
        return self.api.return_type(owner, name)


_EXPRESSIONS = {
    "getattr", "getattr_call", "standalone_call", "subscr_expr", "string", "string_name", "array", "dict",
    "lambda", "par_expr", "actual_type_cast", "type_test", "asless_type_test",
}  # fmt: skip
_BOOLEAN = {
    "and_test", "or_test", "not_test", "comparison", "content_test", "asless_actual_not_test",
    "asless_comparison", "asless_content_test", "asless_and_test", "asless_or_test", "not_in_op",
}  # fmt: skip


def _header(node: _Node) -> _Tree:
    """The func_header (or lambda_header) of a function or lambda node."""
    return _tree(_tree(node).children[0])


def _tree(node: _Node) -> _Tree:
    assert isinstance(node, Tree), f"gdtoolkit's tree changed: {node!r} where a rule was expected"
    return node


def _is_preload(value: _Tree) -> bool:
    inner = value.children[0] if value.children else None
    return isinstance(inner, Tree) and inner.data == "standalone_call" and _name(inner.children[0]) == "preload"


def _defined_names(tree: _Tree) -> set[str]:
    """Every name a script defines: its functions, variables, constants, enums and inner classes."""
    names: set[str] = set()
    for node in tree.iter_subtrees():
        declares = node.data in ("func_header", "class_def", "enum_named", "enum_element", "signal_stmt")
        if declares or (node.data.startswith(("class_var_", "const_")) and node.children):
            names.add(_name(node.children[0]))
    return names - {""}


# ----- the checks ---------------------------------------------------------------------------------------------


def missing(uses: Iterable[Use], api: Api, version: tuple[int, int]) -> Iterator[Use]:
    """Yield each Use that Godot `version`, described by `api`, does not offer."""
    for use in uses:
        if not offered(use, api, version):
            yield use


def offered(use: Use, api: Api, version: tuple[int, int]) -> bool:
    """Whether Godot `version` (described by `api`) has what `use` takes."""
    if use.kind == "syntax":
        return SYNTAX[use.name][0] <= version
    if use.kind == "type":
        return api.has_type(use.name)
    if use.kind == "member":
        # A method missing from a class may be its subclass's: `target: Object` can hold an Animation.
        return api.has_member(use.owner, use.name) or api.has_member_below(use.owner, use.name)
    if use.kind == "global":
        return (
            api.global_constant(use.name)
            or api.global_function(use.name) is not None
            or bool(api.singleton_type(use.name))
            or api.has_type(use.name)
        )
    if use.kind == "annotation":
        return api.annotation(use.name)
    return api.any_member(use.name)  # "somewhere"
