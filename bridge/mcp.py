"""`godot-bridge mcp`: the five operations as Model Context Protocol tools, served on stdio.

Each tool's input schema is its request model's JSON Schema (the one `godot-bridge schema` prints)
without `op`, which the tool's name supplies. Calls go through one `Bridge`, so one warm engine per
project serves the whole session and a dead or stuck engine is replaced on the next call.
"""

from __future__ import annotations

import copy
import json
from importlib import metadata
from typing import Any

import anyio
import anyio.to_thread
from mcp import types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from .api import Bridge, error_reply
from .errors import BridgeError, InvalidRequest
from .models import request_schema

GUIDANCE = (
    "These tools create and read Godot 4 resources (materials, collision shapes, UI style boxes) "
    "as files in a Godot project, through the real headless engine. Read a resource before "
    "modifying it. Save resources that will be reused: a saved .tres file can be referenced by "
    "several scenes. Use resource_duplicate to make variants of an existing resource; duplicating "
    "with property_overrides keeps all other properties of the source. Paths are relative to the "
    "project (res:// accepted). Colors are '#rrggbb', {r, g, b} or [r, g, b, a]; vectors are arrays "
    "of numbers. An error result carries a stable code (e.g. not_found, unknown_property) and names "
    "the offending field."
)


def tool_list(project: str | None = None) -> list[types.Tool]:
    """Return one tool per operation; with a default `project`, project_path becomes optional."""
    schema = request_schema()
    tools = []
    for op, ref in schema["discriminator"]["mapping"].items():
        model_schema = copy.deepcopy(schema["$defs"][ref.rsplit("/", 1)[-1]])
        model_schema["properties"].pop("op")
        required = [name for name in model_schema["required"] if name != "op"]
        if project is not None:
            required.remove("project_path")
            model_schema["properties"]["project_path"]["default"] = project
        model_schema["required"] = required
        tools.append(
            types.Tool(
                name=op,
                description=f"{model_schema['description']}\n\n{GUIDANCE}",
                input_schema=model_schema,
                annotations=types.ToolAnnotations(read_only_hint=op == "resource_read"),
            )
        )
    return tools


def tool_result(reply: dict[str, Any]) -> types.CallToolResult:
    """Return a reply as a tool result: an error reply becomes a tool error carrying its code."""
    if reply["result"] == "ok":
        text = json.dumps(reply, ensure_ascii=False)
        return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=reply)
    error = reply["error"]
    return types.CallToolResult(
        content=[types.TextContent(text=error["message"])], structured_content=error, is_error=True
    )


class ToolServer:
    """Answer MCP tool calls with one Bridge, one call at a time."""

    def __init__(self, bridge: Bridge, project: str | None = None) -> None:
        self.bridge = bridge
        self.project = project
        self.tools = tool_list(project)
        self._names = {tool.name for tool in self.tools}
        # A Bridge and its workers serve one request at a time; concurrent tool calls queue here.
        self._lock = anyio.Lock()
        self.server: Server[Any] = Server(
            "godot-bridge",
            version=metadata.version("godot-bridge"),
            instructions=GUIDANCE,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )

    async def run(self) -> None:
        """Serve MCP on stdin/stdout until the client closes stdin."""
        async with stdio_server() as (read_stream, write_stream), anyio.create_task_group() as tasks:
            if self.project is not None:
                tasks.start_soon(self._warm_up, self.project)
            await self.server.run(read_stream, write_stream, self.server.create_initialization_options())

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Serve one tool call as a request; return its reply."""
        if "op" in arguments:
            message = "unknown member 'op': the tool's name is the operation"
            return error_reply({"op": name}, InvalidRequest(message, field="op"))
        request = {**arguments, "op": name}
        if self.project is not None and request.get("project_path") is None:
            request["project_path"] = self.project
        async with self._lock:
            return await anyio.to_thread.run_sync(self.bridge.run, request)

    async def _warm_up(self, project: str) -> None:
        # Start the engine while the client is still connecting; a failure here recurs, as an
        # error reply, on the first call.
        def start() -> None:
            try:
                self.bridge._worker_for(project)
            except BridgeError:
                pass

        async with self._lock:
            await anyio.to_thread.run_sync(start)

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=self.tools)

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name not in self._names:
            raise MCPError(
                types.INVALID_PARAMS,
                f"no tool named {params.name!r}; the tools are {', '.join(sorted(self._names))}",
            )
        return tool_result(await self.call(params.name, params.arguments or {}))


def serve(bridge: Bridge, project: str | None = None) -> None:
    """Serve the operations as MCP tools on stdio until the client disconnects."""
    anyio.run(ToolServer(bridge, project).run)
