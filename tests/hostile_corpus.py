"""A corpus of resource files that carry code, in every form the engine accepts.

Each case is a few files written into a project and the one file a request then names. Every
script in the corpus leaves a marker file `MARK_<case>.txt` at the project root when its code runs
(static initialiser or `_init`), so a test can prove that refusing the file ran nothing, and that
the same file with `allow_scripts: true` really runs its code (the case is real).

The text cases vary the layout, never the meaning: attribute order, whitespace, CRLF, comments,
quoted and escaped property names, nesting in arrays, dictionaries and metadata, sub-resources of
sub-resources, references by `uid://` only, chains of ext_resource, inline `Resource("...")` and
`Object(...)`, redirects through `.import` and `.remap` files. The binary cases (`.res`, `.scn`)
are saved by the engine itself (`write_binary_cases`).

Run `python tests/hostile_corpus.py OUT_DIR GODOT_BIN` to write the whole corpus into OUT_DIR (a
new project) for inspection.
"""

from __future__ import annotations

import hashlib
import json
import random
import struct
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

MARK = "MARK_"


@dataclass(frozen=True)
class Case:
    """Files to write (relative path -> bytes) and the file a request names."""

    name: str
    target: str
    files: dict[str, bytes] = field(default_factory=dict)
    engine_runs_it: bool = True
    """Whether the engine, allowed, really runs the code (false where it refuses the file anyway)."""
    refused_with: str = "unsafe_resource"
    """The code a request naming the file gets: load_failed for a file the engine cannot load either."""


def gd_source(case: str, base: str = "Resource") -> str:
    """GDScript that leaves the case's marker when it loads (static) and when an instance is made."""
    return (
        f"extends {base}\n"
        "static var _loaded: bool = _mark()\n"
        "static func _mark() -> bool:\n"
        f"\tFileAccess.open(\"res://{MARK}{case}.txt\", FileAccess.WRITE).store_string(\"ran\")\n"
        "\treturn true\n"
        "func _init() -> void:\n"
        "\t_mark()\n"
    )


def quoted(text: str) -> str:
    """`text` as a string literal of the text resource format (the engine's c_escape_multiline)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def embedded(case: str, *, header: str = "", sub: str = "", assign: str = "script = SubResource(\"S\")",
             main_type: str = "Resource", base: str = "Resource", newline: str = "\n") -> bytes:
    """A resource with an embedded GDScript attached to it, in a chosen layout."""
    head = header or f'[gd_resource type="{main_type}" format=3]'
    sub_tag = sub or '[sub_resource type="GDScript" id="S"]'
    text = (f"{head}\n\n{sub_tag}\nscript/source = {quoted(gd_source(case, base))}\n\n"
            f"[resource]\n{assign}\n")
    return text.replace("\n", newline).encode()


def script_file(case: str, base: str = "Resource") -> bytes:
    return gd_source(case, base).encode()


def _text_cases() -> list[Case]:
    cases: list[Case] = []

    def add(name: str, data: bytes, **extra: bytes) -> None:
        cases.append(Case(name, f"{name}.tres", {f"{name}.tres": data, **extra}))

    add("canonical", embedded("canonical"))
    add("attributes_reordered", embedded("attributes_reordered", sub='[sub_resource id="S" type="GDScript"]'))
    add("no_spaces", embedded("no_spaces", sub='[sub_resource id="S"type="GDScript"]',
                              assign='script=SubResource("S")'))
    add("crlf", embedded("crlf", newline="\r\n"))
    add("tabs_and_control_bytes", embedded(
        "tabs_and_control_bytes", sub='[sub_resource\ttype="GDScript"\x0bid="S"]',
        assign='script\x0c=\x01SubResource ( "S" )'))
    add("comment_inside_name", embedded("comment_inside_name", assign='scr ; a comment\nipt = SubResource("S")'))
    add("space_inside_name", embedded("space_inside_name", assign='scr ipt = SubResource("S")'))
    add("quoted_name", embedded("quoted_name", assign='"script" = SubResource("S")'))
    add("escaped_name", embedded("escaped_name", assign='"scr\\u0069pt" = SubResource("S")'))
    add("quote_replaces_prefix", embedded("quote_replaces_prefix", assign='junk"scr"ipt = SubResource("S")'))
    add("escaped_type", embedded("escaped_type", sub='[sub_resource type="GD\\u0053cript" id="S"]'))
    add("string_name_type", embedded("string_name_type", sub='[sub_resource type=&"GDScript" id="S"]'))
    add("comment_lines", embedded(
        "comment_lines", header='; [gd_resource type="Curve" format=3]\n[gd_resource type="Resource" format=3] ; x',
        assign='; script = null\nscript = SubResource("S") ; ]'))
    add("material_carrier", embedded("material_carrier", main_type="StandardMaterial3D", base="Resource"))
    # A string whose lines look like sections and assignments must not hide the real ones, nor the
    # real ones be taken for text.
    decoy = '"\n[resource]\nscript = null\n"'
    add("decoy_string", (
        '[gd_resource type="Resource" format=3]\n\n[sub_resource type="GDScript" id="S"]\n'
        f"script/source = {quoted(gd_source('decoy_string'))}\n\n[resource]\nresource_name = {decoy}\n"
        'script = SubResource("S")\n').encode())
    # The script nested deeper: a sub-resource of a sub-resource, arrays, dictionaries, metadata.
    add("nested_sub_resource", (
        '[gd_resource type="Resource" format=3]\n\n[sub_resource type="GDScript" id="S"]\n'
        f"script/source = {quoted(gd_source('nested_sub_resource'))}\n\n"
        '[sub_resource type="Resource" id="inner"]\nscript = SubResource("S")\n\n'
        '[resource]\nmetadata/held = SubResource("inner")\n').encode())
    for name, value in [("in_array", '[1, [SubResource("S")]]'),
                        ("in_dictionary", '{"k": {"deeper": SubResource("S")}}'),
                        ("in_metadata", 'SubResource("S")')]:
        add(name, (
            '[gd_resource type="Resource" format=3]\n\n[sub_resource type="GDScript" id="S"]\n'
            f"script/source = {quoted(gd_source(name))}\n\n[resource]\nmetadata/x = {value}\n").encode())
    add("typed_array_of_script", (
        b'[gd_resource type="Resource" format=3]\n\n[ext_resource type="Script" path="res://typed.gd" id="1"]\n\n'
        b'[resource]\nmetadata/list = Array[ExtResource("1")]([])\n'),
        **{"typed.gd": script_file("typed_array_of_script")})
    add("main_type_is_a_script", (
        '[gd_resource type="GDScript" format=3]\n\n[resource]\n'
        f"script/source = {quoted(gd_source('main_type_is_a_script', 'RefCounted'))}\n").encode())
    add("script_class_header", embedded(
        "script_class_header", header='[gd_resource type="Resource" script_class="Evil" format=3]'))
    add("inline_object", (
        '[gd_resource type="Resource" format=3]\n\n[resource]\n'
        f'metadata/o = Object(GDScript, "script/source": '
        f'{quoted(gd_source("inline_object", "RefCounted"))})\n').encode())
    add("inline_resource_path", (
        b'[gd_resource type="Resource" format=3]\n\n[resource]\nmetadata/r = Resource("res://inline.gd")\n'),
        **{"inline.gd": script_file("inline_resource_path", "RefCounted")})
    add("ext_resource_path_in_first_tag", (
        b'[gd_resource type="Resource" format=3]\n\n'
        b'[ext_resource type="Texture2D" path="res://nothing.png" id=ExtResource("res://first.gd")]\n\n[resource]\n'),
        **{"first.gd": script_file("ext_resource_path_in_first_tag", "RefCounted")})
    add("resource_path_in_header", (
        b'[gd_resource type="Resource" format=3 x=Resource("res://header.gd")]\n\n[resource]\n'),
        **{"header.gd": script_file("resource_path_in_header", "RefCounted")})
    # Scripts reached through other files.
    add("external_script", (
        b'[gd_resource type="Resource" format=3]\n\n[ext_resource type="Script" path="res://ext.gd" id="1"]\n\n'
        b'[resource]\nscript = ExtResource("1")\n'), **{"ext.gd": script_file("external_script")})
    add("relative_ext_path", (
        b'[gd_resource type="Resource" format=3]\n\n[ext_resource type="Script" path="rel.gd" id="1"]\n\n'
        b'[resource]\nscript = ExtResource("1")\n'), **{"rel.gd": script_file("relative_ext_path")})
    cases.append(Case("relative_ext_path_in_folder", "sub/folder.tres", {
        "sub/folder.tres": (b'[gd_resource type="Resource" format=3]\n\n'
                            b'[ext_resource type="Resource" path="f_evil.tres" id="1"]\n\n'
                            b'[resource]\nmetadata/x = ExtResource("1")\n'),
        "sub/f_evil.tres": embedded("relative_ext_path_in_folder"),
    }))
    cases.append(Case("two_levels_of_ext_resource", "level0.tres", {
        "level0.tres": (b'[gd_resource type="StandardMaterial3D" format=3]\n\n'
                        b'[ext_resource type="Material" path="res://level1.tres" id="1"]\n\n'
                        b'[resource]\nnext_pass = ExtResource("1")\n'),
        "level1.tres": (b'[gd_resource type="StandardMaterial3D" format=3]\n\n'
                        b'[ext_resource type="Material" path="res://level2.tres" id="1"]\n\n'
                        b'[resource]\nnext_pass = ExtResource("1")\n'),
        "level2.tres": embedded("two_levels_of_ext_resource", main_type="StandardMaterial3D"),
    }))
    # A uid:// that the project's uid cache maps to a script, with a harmless-looking path beside it.
    cases.append(Case("uid_only_reference", "by_uid.tres", {
        "by_uid.tres": ('[gd_resource type="Resource" format=3]\n\n'
                        f'[ext_resource type="Script" uid="{UID_TEXT}" path="res://innocent.tres" id="1"]\n\n'
                        '[resource]\nscript = ExtResource("1")\n').encode(),
        "uid_target.gd": script_file("uid_only_reference"),
    }))
    cases.append(Case("uid_in_first_tag", "uid_first.tres", {
        "uid_first.tres": ('[gd_resource type="Resource" format=3]\n\n'
                           f'[ext_resource type="Texture2D" path="res://nothing.png" id=ExtResource("{UID_TEXT}")]\n\n'
                           '[resource]\n').encode(),
        "uid_target.gd": script_file("uid_in_first_tag", "RefCounted"),
    }))
    # Redirects: an "image" whose import data says it is a GDScript (the engine then compiles the
    # image's own bytes: the GDScript loader reads the source from the original path), and a .remap
    # file beside a resource.
    # The import looks current: the editor's record of it is forged too (an attacker writes every file).
    icon = script_file("import_remap_to_script")
    cases.append(Case("import_remap_to_script", "imported.tres", {
        "imported.tres": (b'[gd_resource type="Resource" format=3]\n\n'
                          b'[ext_resource type="Script" path="res://icon.png" id="1"]\n\n'
                          b'[resource]\nscript = ExtResource("1")\n'),
        "icon.png": icon,
        "icon.png.import": (b'[remap]\n\nimporter="texture"\ntype="GDScript"\npath="res://remapped.gd"\n\n'
                            b'[deps]\n\nsource_file="res://icon.png"\ndest_files=["res://remapped.gd"]\n'),
        "remapped.gd": icon,
        import_record("res://icon.png"): f'source_md5="{hashlib.md5(icon).hexdigest()}"\ndest_md5=""\n'.encode(),
    }))
    cases.append(Case("remap_file", "plain.tres", {
        "plain.tres": b'[gd_resource type="Resource" format=3]\n\n[resource]\n',
        "plain.tres.remap": b'[remap]\n\npath="res://remap_target.tres"\n',
        "remap_target.tres": embedded("remap_file"),
    }))
    # Values that name code directly.
    cases.append(Case("value_names_a_script", "val.gd", {"val.gd": script_file("value_names_a_script", "Material")}))
    # Scenes: a node script, a sub-scene whose node has a script.
    cases.append(Case("scene_node_script", "node.tscn", {
        "node.tscn": (b'[gd_scene format=3]\n\n[ext_resource type="Script" path="res://node.gd" id="1"]\n\n'
                      b'[node name="Root" type="Node"]\nscript = ExtResource("1")\n'),
        "node.gd": script_file("scene_node_script", "Node"),
    }))
    cases.append(Case("instanced_sub_scene_script", "outer.tscn", {
        "outer.tscn": (b'[gd_scene format=3]\n\n[ext_resource type="PackedScene" path="res://inner.tscn" id="1"]\n\n'
                       b'[node name="Outer" type="Node"]\n\n'
                       b'[node name="Inner" parent="." instance=ExtResource("1")]\n'),
        "inner.tscn": (b'[gd_scene format=3]\n\n[ext_resource type="Script" path="res://inner.gd" id="1"]\n\n'
                       b'[node name="Inner" type="Node"]\nscript = ExtResource("1")\n'),
        "inner.gd": script_file("instanced_sub_scene_script", "Node"),
    }))
    return cases


def import_record(source: str) -> str:
    """Where the editor records the import of res:// `source` (its md5 then), relative to the project."""
    return f".godot/imported/{source.rsplit('/', 1)[-1]}-{hashlib.md5(source.encode()).hexdigest()}.md5"


UID_ID = 0x2B1D_6E5F_0C4A_7D11
"""The uid the corpus's uid cache maps to `uid_target.gd`."""


def uid_text(uid: int) -> str:
    # ResourceUID::id_to_text: the id in base 34, most significant digit first, with the digits
    # written a-z then 1-8 (checked against the engine's own id_to_text).
    chars = "abcdefghijklmnopqrstuvwxyz12345678"
    text = ""
    while True:
        text = chars[uid % 34] + text
        uid //= 34
        if uid == 0:
            break
    return "uid://" + text


UID_TEXT = uid_text(UID_ID)


def uid_cache(entries: dict[int, str]) -> bytes:
    """The engine's `.godot/uid_cache.bin`: a count, then per entry id, path length and path."""
    out = struct.pack("<I", len(entries))
    for uid, path in entries.items():
        encoded = path.encode()
        out += struct.pack("<QI", uid, len(encoded)) + encoded
    return out


BINARY_WRITER = """extends SceneTree
## Save the binary cases of the hostile corpus with the engine's own ResourceSaver.
func _initialize() -> void:
	var out: String = OS.get_cmdline_user_args()[0]
	var sources: Dictionary = JSON.parse_string(OS.get_cmdline_user_args()[1])
	_embedded(out.path_join("binary_embedded.res"), sources["binary_embedded"])
	_external(out.path_join("binary_external.res"), out.path_join("binary_ext.gd"))
	_scene(out.path_join("binary_scene.scn"), out.path_join("binary_scene.gd"))
	quit()


func _compiled(source: String) -> GDScript:
	var script: GDScript = GDScript.new()
	script.source_code = source
	script.reload()
	return script


func _embedded(path: String, source: String) -> void:
	var holder: Resource = Resource.new()
	holder.set_script(_compiled(source))
	ResourceSaver.save(holder, path)


func _external(path: String, script_path: String) -> void:
	var holder: Resource = Resource.new()
	holder.set_script(load(script_path))
	ResourceSaver.save(holder, path)


func _scene(path: String, script_path: String) -> void:
	var root: Node = Node.new()
	root.name = "Root"
	root.set_script(load(script_path))
	var scene: PackedScene = PackedScene.new()
	scene.pack(root)
	ResourceSaver.save(scene, path)
"""


def binary_cases(project: Path, godot: str) -> list[Case]:
    """Save the binary cases into `project` with the engine; return them (their files already written).

    Saving compiles the scripts, which runs their static initialisers in the writing engine: the
    markers that leaves are removed before returning.
    """
    (project / "binary_ext.gd").write_bytes(script_file("binary_external"))
    (project / "binary_scene.gd").write_bytes(script_file("binary_scene", "Node"))
    writer = project / "write_binary.gd"
    writer.write_text(BINARY_WRITER)
    sources = json.dumps({"binary_embedded": gd_source("binary_embedded")})
    subprocess.run([godot, "--headless", "--path", str(project), "-s", str(writer), "--", str(project), sources],
                   check=True, capture_output=True, timeout=120)
    writer.unlink()
    for marker in project.glob(f"{MARK}*"):
        marker.unlink()
    data = (project / "binary_embedded.res").read_bytes()
    truncated = data[: len(data) // 2]
    return [
        Case("binary_embedded", "binary_embedded.res"),
        Case("binary_external", "binary_external.res"),
        Case("binary_scene", "binary_scene.scn"),
        Case("binary_truncated", "binary_truncated.res", {"binary_truncated.res": truncated}, engine_runs_it=False,
             refused_with="load_failed"),
        Case("binary_unknown_format", "binary_unknown.res",
             {"binary_unknown.res": data[:16] + struct.pack("<I", 99) + data[20:]}, engine_runs_it=False),
        # An uncompressed body behind the compressed magic: its "block size" is 0, as the engine's
        # loader finds too. (Real compressed files are read: tests/engine/test_binary_format.py.)
        Case("binary_compressed", "binary_compressed.res", {"binary_compressed.res": b"RSCC" + data[4:]},
             engine_runs_it=False, refused_with="load_failed"),
    ]


def text_cases() -> list[Case]:
    """Every text case of the corpus."""
    return _text_cases()


def write(project: Path, cases: list[Case]) -> None:
    """Write the cases' files into `project`, with the uid cache the uid cases rely on."""
    for case in cases:
        for relative, data in case.files.items():
            target = project / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    (project / ".godot").mkdir(exist_ok=True)
    (project / ".godot" / "uid_cache.bin").write_bytes(uid_cache({UID_ID: "res://uid_target.gd"}))


def markers(project: Path) -> list[str]:
    """The markers that code of the corpus left: empty when none of it ran."""
    return sorted(path.name for path in project.rglob(f"{MARK}*"))


if __name__ == "__main__":
    out, godot = Path(sys.argv[1]), sys.argv[2]
    out.mkdir(parents=True)
    (out / "project.godot").write_text('config_version=5\n\n[application]\nconfig/name="hostile corpus"\n')
    all_cases = text_cases()
    write(out, all_cases)
    all_cases += binary_cases(out, godot)
    write(out, all_cases)
    print("\n".join(f"{case.name}: {case.target}" for case in all_cases))


# ----- layout mutations (same meaning, other bytes) ------------------------------------------------

_NOISE = [" ", "\t", "\r", "\n", "\x0b", "\x0c", "\x01", "\x1f", "  \t "]


def _noise(rng: random.Random) -> str:
    """Whitespace or a comment, as the engine's tokenizer skips them between tokens."""
    roll = rng.random()
    if roll < 0.5:
        return rng.choice(_NOISE)
    if roll < 0.7:
        return " ; " + rng.choice(["x", "[resource]", "script = null", '"']) + "\n"
    return ""


def _spaced(rng: random.Random, *tokens: str) -> str:
    """Tokens with noise (sometimes none, sometimes a lot) between them."""
    out = tokens[0]
    for token in tokens[1:]:
        out += "".join(_noise(rng) for _ in range(rng.randint(0, 2))) + token
    return out


def _escaped(rng: random.Random, text: str) -> str:
    """`text` as a string literal, some characters written as \\uXXXX or \\<char> escapes."""
    out = ""
    for char in text:
        roll = rng.random()
        if roll < 0.15:
            out += f"\\u{ord(char):04x}"
        elif roll < 0.25 and char not in "btnfruU":
            out += "\\" + char
        else:
            out += char
    return '"' + out + '"'


def _property_name(rng: random.Random, name: str) -> str:
    """A property name in one of the spellings the engine reads as `name`."""
    kind = rng.randrange(5)
    if kind == 0:
        return name
    if kind == 1:  # whitespace or a comment inside the name
        cut = rng.randint(1, len(name) - 1)
        return name[:cut] + rng.choice([" ", "\t", "\x0b", " ; c\n"]) + name[cut:]
    if kind == 2:
        return _escaped(rng, name)
    if kind == 3:  # a quoted part replaces everything before it
        return "junk" + _escaped(rng, name)
    cut = rng.randint(1, len(name) - 1)  # a quoted start, then the rest bare
    return _escaped(rng, name[:cut]) + name[cut:]


def _tag(rng: random.Random, name: str, fields: list[tuple[str, str]]) -> str:
    fields = fields[:]
    rng.shuffle(fields)
    out = _spaced(rng, "[", name)
    for key, value in fields:
        # Two identifiers need something between them; a value and the next name do not.
        out += rng.choice([*_NOISE[:2], " ; c\n"]) + _spaced(rng, key, "=", value)
    return out + _spaced(rng, "", "]")


def mutated(case: str, seed: int) -> bytes:
    """The embedded-script resource of `case` with its layout mutated by `seed` (same meaning)."""
    rng = random.Random(seed)
    type_value = rng.choice(['"GDScript"', _escaped(rng, "GDScript"), '&"GDScript"', '@"GDScript"'])
    reference = _spaced(rng, "SubResource", "(", rng.choice(['"S"', _escaped(rng, "S")]), ")")
    header_fields = [("type", '"Resource"')] + ([("format", "3")] if rng.random() < 0.7 else [])
    text = "\n".join([
        _tag(rng, "gd_resource", header_fields), "",
        _tag(rng, "sub_resource", [("type", type_value), ("id", '"S"')]),
        _spaced(rng, _property_name(rng, "script/source"), "=", quoted(gd_source(case))), "",
        _tag(rng, "resource", []),
        _spaced(rng, _property_name(rng, "script"), "=", reference), "",
    ])
    if rng.random() < 0.3:
        text = text.replace("\n", "\r\n")
    return text.encode()


def byte_edits(data: bytes, rng: random.Random) -> bytes:
    """`data` with a few bytes inserted, removed or replaced, favouring the ones the grammar cares about."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(len(out) + 1)
        piece = bytes([rng.choice(b' \t\n\r;"\\[](){}=:,#&@-.0aZ_\x01\x0b\xc3\xa9')])
        action = rng.randrange(3)
        if action == 0:
            out[at:at] = piece
        elif at < len(out):
            out[at:at + 1] = b"" if action == 1 else piece
    return bytes(out)
