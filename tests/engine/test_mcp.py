"""`gdres mcp` driven by the MCP SDK's own stdio client, against the real engine."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TextIO, TypeVar

import anyio
import jsonschema  # type: ignore[import-untyped]  # ships no types; its stubs are no dependency here
import psutil
import pytest
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client, types

from conftest import REPO, cmdline, file_etag, file_uid, snapshot
from gdres.requests.models import REQUEST_MODELS, Request

T = TypeVar("T")


Scenario = Callable[[ClientSession], Awaitable[T]]


OPERATIONS: dict[str, type[Request]] = REQUEST_MODELS


# The parameter tables of the specification, written as tool arguments (op is the tool's name).
SPEC_EXAMPLES: dict[str, list[dict[str, Any]]] = {
    "resource_read": [
        {"resource_path": "materials/base.tres"},
        {"resource_path": "materials/base.tres", "depth": 0},
        {"path": "materials/base.tres", "properties": ["albedo_color", "roughness"]},
    ],
    "material_create": [
        {"material_type": "StandardMaterial3D", "resource_path": "materials/red.tres",
         "properties": {"albedo_color": "#ff0000", "roughness": 0.5, "metallic": 0.1, "normal_enabled": True}},
        {"material_type": "PhysicsMaterial", "save_path": "physics/ice.tres",
         "properties": {"friction": 0.05, "rough": False, "bounce": 0.2, "absorbent": True}},
        {"material_type": "ShaderMaterial", "resource_path": "materials/glow.tres",
         "shader_path": "shaders/glow.gdshader",
         "properties": {"shader_parameter/tint": {"r": 1, "g": 0.5, "b": 0}}},
    ],
    "shape_create": [
        {"shape_type": "BoxShape3D", "shape_params": {"size": [1, 2, 3]}, "save_path": "shapes/box.tres"},
        {"shape_type": "CapsuleShape3D", "properties": {"radius": 0.5, "height": 2},
         "scene_path": "scenes/player.tscn", "node_path": "Body/CollisionShape3D"},
        {"shape_type": "CircleShape2D"},
    ],
    "style_box_create": [
        {"style_type": "StyleBoxFlat", "resource_path": "ui/panel.tres",
         "properties": {"bg_color": [0.1, 0.1, 0.1, 1], "border_width_top": 2, "border_color": "#ffffff"}},
        {"style_type": "StyleBoxEmpty", "save_path": "ui/empty.tres"},
    ],
    "resource_duplicate": [
        {"source_path": "materials/base.tres", "dest_path": "materials/copy.tres"},
        {"source_path": "materials/base.tres", "dest_path": "materials/blue.tres", "deep_copy": True,
         "property_overrides": {"albedo_color": "#0000ff"}},
    ],
}


def server_environment(godot: str) -> dict[str, str]:
    """What a server started by the SDK's client gets beside the SDK's few variables (HOME, PATH...):
    the Godot to use, and the run's cache folder (conftest.py), not the user's."""
    return {"GODOT_BIN": godot, "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"]}


def drive(godot: str, scenario: Scenario[T], *args: str, errlog: Path | None = None) -> T:
    """Start `python -m gdres mcp ARGS`, connect the SDK's stdio client, and run `scenario`."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "gdres", "mcp", *args], env=server_environment(godot), cwd=REPO
    )

    async def main(log: TextIO) -> T:
        async with stdio_client(params, errlog=log) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await scenario(session)

    with open(errlog or "/dev/null", "w") as log:
        return anyio.run(main, log)


async def call(session: ClientSession, tool: str, **arguments: Any) -> types.CallToolResult:
    return await session.call_tool(tool, arguments)


def ok(result: types.CallToolResult) -> dict[str, Any]:
    """The reply of a successful call, after checking text and structured content agree."""
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    assert result.structured_content["result"] == "ok"
    (text,) = result.content
    assert isinstance(text, types.TextContent)
    assert json.loads(text.text) == result.structured_content
    return result.structured_content


def tool_error(result: types.CallToolResult) -> dict[str, Any]:
    """The error object of a failed call, after checking the text is its message."""
    assert result.is_error
    assert isinstance(result.structured_content, dict)
    (text,) = result.content
    assert isinstance(text, types.TextContent)
    assert text.text == f"{result.structured_content['code']}: {result.structured_content['message']}"
    return result.structured_content


VARIANTS = {"resource_read": {"path": "resource_path"}, "material_create": {"save_path": "resource_path"},
            "style_box_create": {"save_path": "resource_path"}, "shape_create": {"properties": "shape_params"},
            "resource_update": {"path": "resource_path"}, "resource_create": {"save_path": "resource_path"}}


def primary(op: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments with each variant spelling written as its primary member (what the schemas offer)."""
    return {VARIANTS.get(op, {}).get(key, key): value for key, value in arguments.items()}


def test_five_tools_offer_their_members_once_with_one_example_each(godot_bin: str, project: Path) -> None:
    async def scenario(session: ClientSession) -> list[types.Tool]:
        return (await session.list_tools()).tools

    listed = drive(godot_bin, scenario)
    tools = {tool.name: tool for tool in listed}
    assert sorted(tools) == sorted(OPERATIONS)
    for name, model in OPERATIONS.items():
        offered = set(tools[name].input_schema["properties"])
        members = set(model.model_fields) - {"op", "id", "allow_scripts"} - set(VARIANTS.get(name, {}))
        assert offered == members, name
        assert "resource_path" not in model.spellings or "resource_path" in tools[name].input_schema["required"]
        description = tools[name].description or ""
        assert model.__doc__ and inspect.cleandoc(model.__doc__) in description
        assert "Read a resource before modifying it" not in description  # said once, in the instructions
        example = json.loads(description.split("Example arguments (with project_path): ", 1)[1])
        jsonschema.validate({"project_path": str(project), **example}, tools[name].input_schema)
        annotations = tools[name].annotations
        assert annotations is not None and annotations.title and annotations.open_world_hint is False
        assert annotations.idempotent_hint is True
        assert tools[name].output_schema is not None
    # Each tool's output schema has the members of its own replies only.
    outputs_of = {name: tools[name].output_schema or {} for name in tools}
    outputs = {name: set(outputs_of[name]["properties"]) for name in tools}
    assert {"properties", "script"} <= outputs["resource_read"] and "changed" not in outputs["resource_read"]
    assert "changed" in outputs["resource_update"] and "properties" not in outputs["material_create"]
    assert "shape_type" in outputs["shape_create"] and "shape_type" not in outputs["resource_read"]
    # No schema repeated: a tool's output schema has its own reply's definitions only.
    assert "Change" in json.dumps(outputs_of["material_create"])
    assert "Change" not in json.dumps(outputs_of["resource_read"])
    assert sum(len(json.dumps(tool.output_schema)) for tool in listed) < 1500 * len(listed)
    assert tools["resource_read"].annotations and tools["resource_read"].annotations.read_only_hint
    assert sum(len(tool.description or "") for tool in listed) < 300 * len(listed)


def test_allow_scripts_is_offered_only_when_the_server_allows_it(godot_bin: str, project: Path) -> None:
    async def scenario(session: ClientSession) -> tuple[list[types.Tool], types.CallToolResult]:
        refused = await call(session, "resource_read", project_path=str(project),
                             resource_path="materials/base.tres", allow_scripts=True)
        return (await session.list_tools()).tools, refused

    tools, refused = drive(godot_bin, scenario)
    assert all("allow_scripts" not in tool.input_schema["properties"] for tool in tools)
    assert tool_error(refused)["field"] == "allow_scripts"
    allowed, _ = drive(godot_bin, scenario, "--allow-scripts")
    assert all("allow_scripts" in tool.input_schema["properties"] for tool in allowed)


def test_schemas_accept_the_spec_examples_and_refuse_wrong_shapes(godot_bin: str, project: Path) -> None:
    async def scenario(session: ClientSession) -> list[types.Tool]:
        return (await session.list_tools()).tools

    plain = {tool.name: tool.input_schema for tool in drive(godot_bin, scenario)}
    defaulted = {tool.name: tool.input_schema for tool in drive(godot_bin, scenario, "--project", str(project))}
    for name, examples in SPEC_EXAMPLES.items():
        for example in (primary(name, example) for example in examples):
            jsonschema.validate({"project_path": str(project), **example}, plain[name])
            jsonschema.validate(example, defaulted[name])
            with pytest.raises(jsonschema.ValidationError, match="project_path"):
                jsonschema.validate(example, plain[name])
            for wrong in ({**example, "op": name}, {**example, "colour": "red"}):
                with pytest.raises(jsonschema.ValidationError, match="Additional properties"):
                    jsonschema.validate(wrong, defaulted[name])
    assert defaulted["material_create"]["properties"]["project_path"]["default"] == str(project)
    with pytest.raises(jsonschema.ValidationError, match="material_type"):
        jsonschema.validate({"resource_path": "a.tres"}, defaulted["material_create"])
    with pytest.raises(jsonschema.ValidationError, match="BoxShape2D"):
        jsonschema.validate({"shape_type": "BoxShape2D"}, defaulted["shape_create"])


def test_a_dry_run_through_a_tool_says_what_would_change_and_writes_nothing(godot_bin: str, project: Path) -> None:
    async def scenario(session: ClientSession) -> types.CallToolResult:
        return await call(session, "resource_update", project_path=str(project), resource_path="materials/base.tres",
                          properties={"metallic": 0.25}, dry_run=True)

    before = snapshot(project)
    reply = ok(drive(godot_bin, scenario))  # the SDK client checked it against the tool's output schema
    assert reply["dry_run"] is True and reply["changed"] == ["metallic"]
    (change,) = reply["changes"]
    assert change["action"] == "modify" and "\n-metallic = 0.5\n" in change["diff"]
    assert "\n+metallic = 0.25\n" in change["diff"]
    assert snapshot(project) == before


def test_material_create_then_resource_read(godot_bin: str, project: Path) -> None:
    async def scenario(session: ClientSession) -> tuple[types.CallToolResult, types.CallToolResult]:
        created = await call(session, "material_create", project_path=str(project),
                             material_type="StandardMaterial3D", resource_path="materials/red.tres",
                             properties={"albedo_color": "#ff0000", "roughness": 0.5})
        read = await call(session, "resource_read", project_path=str(project),
                          resource_path="materials/red.tres", id=7)
        return created, read

    created, read = drive(godot_bin, scenario)
    assert ok(created) == {"op": "material_create", "resource_path": "materials/red.tres",
                           "type": "StandardMaterial3D", "uid": file_uid(project / "materials/red.tres"),
                           "etag": file_etag(project / "materials/red.tres"), "result": "ok"}
    assert (project / "materials" / "red.tres").is_file()
    reply = ok(read)
    assert reply["op"] == "resource_read" and reply["id"] == 7 and reply["type"] == "StandardMaterial3D"
    assert reply["properties"]["albedo_color"] == [1, 0, 0, 1]
    assert reply["properties"]["roughness"] == 0.5


def test_a_call_in_a_variant_spelling_answers_in_the_tools_own_names(godot_bin: str, project: Path) -> None:
    # The tools offer resource_path; `path` and `save_path` are still taken, and the reply keeps to
    # the tool's output schema, which the SDK's client validates it against.
    async def scenario(session: ClientSession) -> tuple[types.CallToolResult, types.CallToolResult]:
        made = await call(session, "material_create", project_path=str(project), material_type="StandardMaterial3D",
                          save_path="materials/v.tres")
        read = await call(session, "resource_read", project_path=str(project), path="materials/v.tres")
        return made, read

    made, read = drive(godot_bin, scenario)
    assert ok(made)["resource_path"] == "materials/v.tres" and "save_path" not in ok(made)
    assert ok(read)["resource_path"] == "materials/v.tres" and "path" not in ok(read)


def test_shape_create_saves_a_shape(godot_bin: str, project: Path) -> None:
    async def scenario(session: ClientSession) -> tuple[types.CallToolResult, types.CallToolResult]:
        created = await call(session, "shape_create", project_path=str(project), shape_type="BoxShape3D",
                             shape_params={"size": [1, 2, 3]}, save_path="shapes/box.tres")
        read = await call(session, "resource_read", project_path=str(project), resource_path="shapes/box.tres")
        return created, read

    created, read = drive(godot_bin, scenario)
    assert ok(created) == {"op": "shape_create", "shape_type": "BoxShape3D", "type": "BoxShape3D",
                           "save_path": "shapes/box.tres",
                           "uid": file_uid(project / "shapes/box.tres"),
                           "etag": file_etag(project / "shapes/box.tres"), "result": "ok"}
    reply = ok(read)
    assert reply["type"] == "BoxShape3D" and reply["properties"]["size"] == [1, 2, 3]


def test_style_box_create_saves_a_style_box(godot_bin: str, project: Path) -> None:
    async def scenario(session: ClientSession) -> tuple[types.CallToolResult, types.CallToolResult]:
        created = await call(session, "style_box_create", project_path=str(project), style_type="StyleBoxFlat",
                             resource_path="ui/panel.tres", properties={"bg_color": "#336699", "border_width_top": 3})
        read = await call(session, "resource_read", project_path=str(project), resource_path="ui/panel.tres",
                          properties=["bg_color", "border_width_top"])
        return created, read

    created, read = drive(godot_bin, scenario)
    assert ok(created) == {"op": "style_box_create", "resource_path": "ui/panel.tres", "type": "StyleBoxFlat",
                           "uid": file_uid(project / "ui/panel.tres"),
                           "etag": file_etag(project / "ui/panel.tres"), "result": "ok"}
    properties = ok(read)["properties"]
    assert properties["border_width_top"] == 3
    assert properties["bg_color"] == pytest.approx([0x33 / 255, 0x66 / 255, 0x99 / 255, 1], abs=1e-6)


def test_resource_duplicate_overrides_one_property_and_keeps_the_rest(godot_bin: str, project: Path) -> None:
    async def scenario(session: ClientSession) -> tuple[types.CallToolResult, types.CallToolResult]:
        duplicated = await call(session, "resource_duplicate", project_path=str(project),
                                source_path="materials/base.tres", dest_path="materials/variant.tres",
                                property_overrides={"roughness": 0.9})
        read = await call(session, "resource_read", project_path=str(project),
                          resource_path="materials/variant.tres")
        return duplicated, read

    duplicated, read = drive(godot_bin, scenario)
    assert ok(duplicated) == {"op": "resource_duplicate", "source_path": "materials/base.tres",
                              "dest_path": "materials/variant.tres", "type": "StandardMaterial3D",
                              "uid": file_uid(project / "materials/variant.tres"),
                              "etag": file_etag(project / "materials/variant.tres"), "result": "ok"}
    properties = ok(read)["properties"]
    assert properties["roughness"] == 0.9
    assert properties["albedo_color"] == [0.2, 0.4, 0.6, 1] and properties["metallic"] == 0.5


def test_error_reply_is_a_tool_error_carrying_its_code(godot_bin: str, project: Path) -> None:
    async def scenario(session: ClientSession) -> list[types.CallToolResult]:
        return [
            await call(session, "resource_read", project_path=str(project), resource_path="../outside.tres"),
            await call(session, "resource_read", project_path=str(project), resource_path="materials/none.tres"),
            await call(session, "material_create", project_path=str(project), material_type="StandardMaterial3D",
                       resource_path="materials/x.tres", op="resource_read"),
            await call(session, "resource_read", project_path="relative/game", resource_path="a.tres"),
        ]

    outside, missing, with_op, bad_project = drive(godot_bin, scenario)
    assert tool_error(outside)["code"] == "path_outside_project"
    assert tool_error(outside)["field"] == "resource_path"
    assert "../outside.tres" in tool_error(outside)["message"]
    assert tool_error(missing)["code"] == "not_found"
    assert tool_error(with_op) == {"code": "invalid_request", "field": "op",
                                   "message": "unknown member 'op': the tool's name is the operation"}
    assert tool_error(bad_project)["code"] == "project_not_found"
    assert not (project / "materials" / "x.tres").exists()


def test_unknown_tool_is_a_protocol_error(godot_bin: str, project: Path) -> None:
    async def scenario(session: ClientSession) -> MCPError:
        with pytest.raises(MCPError) as caught:
            await call(session, "node_rename", project_path=str(project))
        return caught.value

    error = drive(godot_bin, scenario)
    assert error.code == types.INVALID_PARAMS
    assert error.message == f"no tool named 'node_rename'; the tools are {', '.join(sorted(OPERATIONS))}"


def engine_processes() -> list[psutil.Process]:
    """The engines serving the MCP servers this test process started: workers, which run main.gd, not
    a version probe, the pack's build or an import's shadow build (which a fresh cache runs first)."""
    found = []
    for server in psutil.Process().children():
        if "mcp" in cmdline(server):
            found += [child for child in server.children() if any(arg.endswith("/main.gd") for arg in cmdline(child))]
    return found


def test_server_survives_an_engine_crash(godot_bin: str, project: Path) -> None:
    read = {"project_path": str(project), "resource_path": "materials/base.tres"}

    async def scenario(session: ClientSession) -> tuple[list[int], list[int],
                                                        types.CallToolResult, types.CallToolResult]:
        first = await session.call_tool("resource_read", read)
        engines = engine_processes()
        for engine in engines:
            engine.kill()
        psutil.wait_procs(engines, timeout=5)
        second = await session.call_tool("resource_read", read)
        return [p.pid for p in engines], [p.pid for p in engine_processes()], first, second

    killed, now, first, second = drive(godot_bin, scenario)
    assert len(killed) == 1
    assert ok(second)["properties"] == ok(first)["properties"]
    assert len(now) == 1 and now != killed


def test_project_option_lets_calls_omit_project_path(godot_bin: str, project: Path, tmp_path: Path) -> None:
    errlog = tmp_path / "stderr.txt"

    async def scenario(session: ClientSession) -> tuple[list[psutil.Process], list[psutil.Process],
                                                        types.CallToolResult, types.CallToolResult]:
        # The engine is started while the client connects, before any call.
        with anyio.fail_after(30):
            # Polls the server's children: another process has no event to await.
            while not engine_processes():  # noqa: ASYNC110
                await anyio.sleep(0.05)
        warm = engine_processes()
        created = await call(session, "material_create", material_type="PhysicsMaterial",
                             resource_path="physics/ice.tres", properties={"friction": 0.05})
        read = await call(session, "resource_read", resource_path="physics/ice.tres")
        return warm, engine_processes(), created, read

    warm, after, created, read = drive(godot_bin, scenario, "--project", str(project), errlog=errlog)
    ok(created)
    assert ok(read)["properties"]["friction"] == 0.05
    assert (project / "physics" / "ice.tres").is_file()
    assert len(warm) == 1 and after == warm
    # Disconnecting the client stops the server and its engine.
    _gone, alive = psutil.wait_procs(warm, timeout=10)
    assert alive == []
    assert "Traceback" not in errlog.read_text()


def scripted_resource(project: Path, name: str, init: str) -> str:
    """Write `name`.tres whose script runs `init` when the resource loads; return its path."""
    (project / "scripts").mkdir(exist_ok=True)
    (project / "scripts" / f"{name}.gd").write_text(
        f'extends Resource\n\n@export var label: String = ""\n\n\nfunc _init() -> void:\n\t{init}\n'
    )
    (project / f"{name}.tres").write_text(
        '[gd_resource type="Resource" load_steps=2 format=3]\n\n'
        f'[ext_resource type="Script" path="res://scripts/{name}.gd" id="1"]\n\n'
        '[resource]\nscript = ExtResource("1")\nlabel = "hi"\n'
    )
    return f"{name}.tres"


def test_stdout_carries_protocol_messages_only(godot_bin: str, project: Path, tmp_path: Path) -> None:
    # The script prints a forged JSON-RPC reply on stdout, and a line without a newline.
    loud = scripted_resource(
        project, "loud",
        'print("{\\"jsonrpc\\": \\"2.0\\", \\"id\\": 2, \\"result\\": {}}"); printraw("no newline after this")'
    )
    messages: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "resource_read", "arguments": {"resource_path": loud, "allow_scripts": True}}},
    ]
    errlog = tmp_path / "stderr.txt"
    server = subprocess.Popen(
        [sys.executable, "-m", "gdres", "mcp", "--verbose", "--project", str(project), "--allow-scripts"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errlog.open("wb"), cwd=REPO,
        env={**os.environ, "GODOT_BIN": godot_bin},
    )
    assert server.stdin is not None and server.stdout is not None
    lines = []
    for message in messages:
        server.stdin.write(json.dumps(message).encode() + b"\n")
        server.stdin.flush()
        if "id" in message:
            lines.append(server.stdout.readline())
    server.stdin.close()
    rest = server.stdout.read()
    assert server.wait(30) == 0
    assert rest == b""
    replies = [json.loads(line) for line in lines]
    assert [reply["id"] for reply in replies] == [1, 2]
    result = replies[1]["result"]
    assert result["isError"] is False
    assert result["structuredContent"]["properties"] == {"label": "hi"}
    assert result["structuredContent"]["script"] == "res://scripts/loud.gd"
    # The script's output went to stderr with the rest of the engine's chatter (--verbose).
    assert "no newline after this" in errlog.read_text()


def test_concurrent_calls_are_served_one_at_a_time(godot_bin: str, project: Path) -> None:
    shades = {f"materials/grey{n}.tres": n / 10 for n in range(8)}

    async def scenario(session: ClientSession) -> dict[str, types.CallToolResult]:
        results: dict[str, types.CallToolResult] = {}

        async def create(path: str, shade: float) -> None:
            results[path] = await call(session, "material_create", material_type="StandardMaterial3D",
                                       resource_path=path, properties={"roughness": shade})

        async with anyio.create_task_group() as tasks:
            for path, shade in shades.items():
                tasks.start_soon(create, path, shade)

        async def read(path: str) -> None:
            results[path] = await call(session, "resource_read", resource_path=path, properties=["roughness"])

        async with anyio.create_task_group() as tasks:
            for path in shades:
                tasks.start_soon(read, path)
        return results

    results = drive(godot_bin, scenario, "--project", str(project))
    assert {path: ok(result)["properties"]["roughness"] for path, result in results.items()} == shades
    assert all(ok(result)["resource_path"] == path for path, result in results.items())


def test_server_replaces_an_engine_that_runs_past_the_timeout(godot_bin: str, project: Path) -> None:
    slow = scripted_resource(project, "slow", "OS.delay_msec(30000)")

    async def scenario(session: ClientSession) -> tuple[types.CallToolResult, types.CallToolResult]:
        stuck = await call(session, "resource_read", resource_path=slow, allow_scripts=True)
        after = await call(session, "resource_read", resource_path="materials/base.tres")
        return stuck, after

    stuck, after = drive(godot_bin, scenario, "--timeout", "3", "--project", str(project), "--allow-scripts")
    assert tool_error(stuck)["code"] == "timeout"
    assert ok(after)["properties"]["roughness"] == 0.25


def test_project_dot_is_the_folder_the_client_starts_the_server_in(godot_bin: str, project: Path) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "gdres", "mcp", "--project", "."],
                                   env={**server_environment(godot_bin), "PYTHONPATH": str(REPO)}, cwd=str(project))

    async def main() -> types.CallToolResult:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await call(session, "resource_read", resource_path="materials/base.tres")

    assert ok(anyio.run(main))["properties"]["roughness"] == 0.25


def test_a_refusal_for_code_says_how_to_allow_it_on_this_server(godot_bin: str, project: Path) -> None:
    # Before, an agent was told to set allow_scripts, which this server does not offer.
    async def scenario(session: ClientSession) -> types.CallToolResult:
        return await call(session, "resource_read", project_path=str(project),
                          resource_path="values/scripted/carrier.tres")

    refused = drive(godot_bin, scenario)
    assert refused.is_error and refused.structured_content is not None
    message = refused.structured_content["message"]
    assert refused.structured_content["code"] == "unsafe_resource"
    assert "--allow-scripts" in message and "which this server does not offer" in message, message
