"""Interop contract server built on the official Python MCP SDK (mcp 2.x, MCPServer).

Run as `python server.py`; speaks MCP over stdio. Only the protocol goes to
stdout: the SDK's own logging and any warnings go to stderr.
"""

from __future__ import annotations

import warnings
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from typing_extensions import TypedDict

# Sampling, logging and setLevel are flagged deprecated for 2026-07-28; the
# contract targets the handshake era, where they are current features.
warnings.simplefilter("ignore")

# JSON-RPC code the 2025-11-25 spec assigns to "resource not found". The SDK
# reports a missing resource as -32602 (the 2026-07-28 allocation).
RESOURCE_NOT_FOUND = -32002

LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]


class LogFilter:
    """Minimum level set by logging/setLevel; one stdio connection per process."""

    minimum: str | None = None

    @classmethod
    def allows(cls, level: str) -> bool:
        return cls.minimum is None or LEVELS.index(level) >= LEVELS.index(cls.minimum)


async def not_found_code(ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
    """Middleware: answer a missing resource with -32002 on handshake-era connections."""
    try:
        return await call_next(ctx)
    except MCPError as err:
        missing = (
            ctx.method == "resources/read"
            and err.code == types.INVALID_PARAMS
            and isinstance(err.data, dict)
            and "uri" in err.data
        )
        if missing and ctx.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS:
            raise MCPError(RESOURCE_NOT_FOUND, err.message, err.data) from err
        raise


# Tools other than `add` return plain text: the contract gives only `add` an outputSchema.
server = MCPServer("interop-python-server", version="1.0.0", log_level="WARNING", middleware=[not_found_code])


async def set_level(ctx: ServerRequestContext[Any, Any], params: types.SetLevelRequestParams) -> types.EmptyResult:
    LogFilter.minimum = params.level
    return types.EmptyResult()


# MCPServer has no public hook for logging/setLevel; register it on the
# low-level server it wraps (this also advertises the `logging` capability).
server._lowlevel_server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, set_level)


class AddResult(TypedDict):
    sum: int


@server.tool(description="Add two integers")
def add(a: int, b: int) -> AddResult:
    return {"sum": a + b}


@server.tool(description="Echo the text back", structured_output=False)
def echo(text: str) -> str:
    return text


@server.tool(description="Ask the client's model to complete the prompt", structured_output=False)
async def sample(prompt: str, ctx: Context) -> str:
    message = types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))
    result = await ctx.session.create_message([message], max_tokens=100, related_request_id=ctx.request_id)
    blocks = result.content if isinstance(result.content, list) else [result.content]
    return "".join(b.text for b in blocks if isinstance(b, types.TextContent))


NAME_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
}


@server.tool(description="Ask the user for their name", structured_output=False)
async def ask_name(ctx: Context) -> str:
    result = await ctx.session.elicit_form("What is your name?", NAME_SCHEMA, related_request_id=ctx.request_id)
    name = (result.content or {}).get("name")
    if result.action == "accept" and isinstance(name, str):
        return f"hi {name}"
    return f"no name: {result.action}"


@server.tool(description="Report progress `steps` times", structured_output=False)
async def progress(steps: int, ctx: Context) -> str:
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps)
    return "done"


@server.tool(description="Send an info and an error log message", structured_output=False)
async def log(ctx: Context) -> str:
    for level, data in (("info", "info message"), ("error", "error message")):
        if LogFilter.allows(level):
            await ctx.session.send_log_message(level, data, related_request_id=ctx.request_id)
    return "logged"


@server.tool(description="Always fails", structured_output=False)
def fail() -> str:
    raise ToolError("this tool always fails")


@server.resource("file:///readme", name="readme", mime_type="text/plain")
def readme() -> str:
    return "Read me."


@server.resource("users://{id}/profile", name="profile", mime_type="text/plain")
def profile(id: str) -> str:  # noqa: A002 - the template variable is `id`
    return f"profile of {id}"


@server.prompt(description="Review some code")
def review(code: str, language: str | None = None) -> str:
    return f"Review this {language or 'code'}: {code}"


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="The interop contract server")
    parser.add_argument("--transport", default="stdio", choices=["stdio", "sse", "streamable-http"])
    parser.add_argument("--port", type=int, default=8000, help="for the HTTP transports (127.0.0.1)")
    options = parser.parse_args()
    if options.transport == "stdio":
        server.run("stdio")
    else:
        server.run(options.transport, host="127.0.0.1", port=options.port)
