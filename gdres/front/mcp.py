"""`gdres mcp`: the operations as Model Context Protocol tools, served on stdio.

Each tool's input schema is its request model's JSON Schema (the one `gdres schema` prints)
without `op`, which the tool's name supplies. Calls go through one `Bridge`, so one warm engine per
project serves the whole session and a dead or stuck engine is replaced on the next call.
"""

from __future__ import annotations

import contextlib
import copy
import json
import logging
from importlib import metadata
from typing import Any

import anyio
import anyio.to_thread
from mcp import types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter

from gdres import serving
from gdres.errors import BridgeError, InvalidRequest
from gdres.front.api import Bridge
from gdres.requests.models import REPLIES, REQUEST_MODELS, request_schema
from gdres.requests.request import refuse

log = logging.getLogger("gdres")

GUIDANCE = (
    "These tools create and read Godot 4 resources (materials, collision shapes, UI style boxes) "
    "as files in a Godot project, through the real headless engine. Read a resource before "
    "modifying it, and ask class_info about a class whose properties you do not know. Save "
    "resources that will be reused: a saved .tres file can be referenced by several scenes. Use "
    "resource_duplicate to make variants of an existing resource; duplicating with "
    "property_overrides keeps all other properties of the source. Paths are relative to the "
    "project (res:// accepted), or a file's uid://. Colors are '#rrggbb', {r, g, b} or [r, g, b, a] "
    "with components from "
    "0 to 1; vectors are arrays of numbers. Every read and write result gives the file's etag: pass "
    "it as if_match to the next write of that file, so that a change someone made meanwhile (in the "
    "editor, say) is refused with conflict instead of overwritten; then read the file again. Move or "
    "rename files with resource_move (never by hand: scenes would lose them), dry_run first, and fix the "
    "code lines its not_updated lists. An error "
    "result starts with its stable code (e.g. not_found, unknown_property) and names the offending field."
)
"""Said once, as the server's instructions; each tool's description is its own."""

HIDDEN = ("id", "op")
"""Members no tool offers: `id` (MCP has its own) and `op` (the tool's name). Nor does a tool offer
the variant spellings of a member (still accepted), and `allow_scripts` only on a server started
with --allow-scripts."""

def _reply_schema(op: str) -> dict[str, Any]:
    """The output schema of tool `op`: its success reply (requests/replies.py), without generated titles."""
    schema: dict[str, Any] = _untitled(TypeAdapter(REPLIES[op]).json_schema())
    return schema


def _untitled(schema: Any) -> Any:
    """`schema` without the titles pydantic makes of every name (a member named "title" stays)."""
    if isinstance(schema, list):
        return [_untitled(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    return {key: {name: _untitled(member) for name, member in value.items()} if key in ("properties", "$defs")
            else _untitled(value) for key, value in schema.items() if key != "title"}


def _in_tool_names(op: str, reply: dict[str, Any]) -> dict[str, Any]:
    """A success reply with the members a request gave in a variant spelling (`path`) under the
    tool's own names (`resource_path`): its output schema has those only, and clients check it."""
    model = REQUEST_MODELS.get(op)
    if model is None or reply.get("result") != "ok":
        return reply
    own = model.own_names()
    return {own.get(key, key): value for key, value in reply.items()}


def tool_list(project: str | None = None, allow_scripts: bool = False) -> list[types.Tool]:
    """Return one tool per operation; with a default `project`, project_path becomes optional."""
    schema = request_schema()
    tools = []
    for op, ref in schema["discriminator"]["mapping"].items():
        model = REQUEST_MODELS[op]
        model_schema = copy.deepcopy(schema["$defs"][ref.rsplit("/", 1)[-1]])
        hidden = [*HIDDEN, *model.own_names(), *([] if allow_scripts else ["allow_scripts"])]
        for name in hidden:
            model_schema["properties"].pop(name, None)
        model_schema.pop("title", None)
        for name, member in model_schema["properties"].items():
            model_schema["properties"][name] = _plain(member)
        required = [name for name in model_schema["required"] if name not in hidden]
        main_path = "resource_path" if "resource_path" in model.spellings else None
        if main_path is not None and main_path not in required:
            required.append(main_path)
        if project is not None:
            required.remove("project_path")
            model_schema["properties"]["project_path"]["default"] = project
        model_schema["required"] = required
        example = json.dumps(model.example, ensure_ascii=False)
        tools.append(
            types.Tool(
                name=op,
                title=model.title,
                description=f"{model_schema.pop('description')}\n\nExample arguments (with project_path): {example}",
                input_schema=model_schema,
                output_schema=_reply_schema(op),
                annotations=types.ToolAnnotations(
                    title=model.title,
                    read_only_hint=not model.writes(),
                    destructive_hint=model.writes(),  # a write replaces the file at its path
                    idempotent_hint=True,  # the same call again leaves the same files
                    open_world_hint=False,
                ),
            )
        )
    return tools


def _plain(member: dict[str, Any]) -> dict[str, Any]:
    """A member's schema as an agent needs it: no generated title, and `X or null` as X (a member
    left out is the same as null)."""
    member = {key: value for key, value in member.items() if key != "title"}
    choices = member.get("anyOf")
    if isinstance(choices, list):
        kept = [choice for choice in choices if choice != {"type": "null"}]
        if len(kept) == 1:
            del member["anyOf"]
            member = {**kept[0], **member}
            if member.get("default", 0) is None:
                del member["default"]
    return member


def _without_scripts(reply: dict[str, Any]) -> dict[str, Any]:
    """An error reply whose message says to set allow_scripts, said the way of a server that does not
    offer it: the member is not in its tools, and an agent told to send it would be refused."""
    error = reply.get("error")
    if reply.get("result") != "error" or not isinstance(error, dict) or "allow_scripts: true" not in error["message"]:
        return reply
    message = error["message"].replace(
        "allow_scripts: true", "allow_scripts: true, which this server does not offer (a person may start it with "
        "`gdres mcp --allow-scripts` to run the project's code)", 1)
    return {**reply, "error": {**error, "message": message}}


def tool_result(reply: dict[str, Any]) -> types.CallToolResult:
    """Return a reply as a tool result: an error reply becomes a tool error whose text starts with
    its code (many clients show the model only the text)."""
    if reply["result"] == "ok":
        text = json.dumps(reply, ensure_ascii=False)
        return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=reply)
    error = reply["error"]
    return types.CallToolResult(
        content=[types.TextContent(text=f"{error['code']}: {error['message']}")], structured_content=error,
        is_error=True,
    )


class ToolServer:
    """Answer MCP tool calls with one Bridge, one call at a time."""

    def __init__(self, bridge: Bridge, project: str | None = None, allow_scripts: bool = False) -> None:
        self.bridge = bridge
        self.project = project
        self.allow_scripts = allow_scripts
        self.tools = tool_list(project, allow_scripts)
        self._names = {tool.name for tool in self.tools}
        # A Bridge and its workers serve one request at a time; concurrent tool calls queue here.
        self._lock = anyio.Lock()
        self.server: Server[Any] = Server(
            "gdres",
            version=metadata.version("gdres"),
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
            return refuse({"op": name}, InvalidRequest(message, field="op"))
        if "allow_scripts" in arguments and not self.allow_scripts:
            message = ("allow_scripts is not offered by this server: a request may run the project's code only "
                       "when the server was started with --allow-scripts")
            return refuse({**arguments, "op": name}, InvalidRequest(message, field="allow_scripts"))
        request = {**arguments, "op": name}
        if self.project is not None and request.get("project_path") is None:
            request["project_path"] = self.project
        async with self._lock:
            reply = await anyio.to_thread.run_sync(self.bridge.run, request)
        if not self.allow_scripts:
            reply = _without_scripts(reply)
        return _in_tool_names(name, reply)

    async def _warm_up(self, project: str) -> None:
        # Start the engine while the client is still connecting; a failure here recurs, as an
        # error reply, on the first call.
        def start() -> None:
            with contextlib.suppress(BridgeError):
                self.bridge.prewarm(project, wait=True)

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


def serve(bridge: Bridge, project: str | None = None, allow_scripts: bool = False) -> None:
    """Serve the operations as MCP tools on stdio until the client disconnects."""
    try:
        serving.check_engine(bridge.settings.godot)
    except BridgeError as exc:
        # A client shows the server's stderr in its logs: say it there, at once, not on the first call.
        log.error("gdres mcp: %s; every tool call will answer %s until that is fixed", exc.message, exc.code)
    anyio.run(ToolServer(bridge, project, allow_scripts).run)
