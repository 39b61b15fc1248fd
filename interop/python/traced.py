"""Trace context across SDKs: the Python SDK's OpenTelemetry spans, recorded
with the OpenTelemetry SDK's in-memory exporter, for the Rust tests in
`examples/tests/interop_python.rs`.

    python traced.py client [--era handshake|stateless] [--url URL] [-- <server command> [args...]]
        Calls the tool `echo` once inside a root span, over stdio (spawning the
        server command) or streamable HTTP (`--url`), and prints one JSON line:
        {"trace_id": ..., "client_span_id": ..., "spans": [...]}, the ids of
        its `tools/call` client span, in lowercase hex.

    python traced.py server [--transport stdio|streamable-http] [--port PORT]
        The contract server of `server.py`, plus the tool `recorded_spans`:
        the spans the server finished so far, as JSON text.

A span is {"name", "kind", "trace_id", "span_id", "parent_span_id",
"parent_is_remote", "attributes"}.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

# Installed before the SDK makes its first span, so every span is recorded.
EXPORTER = InMemorySpanExporter()
_provider = TracerProvider()
_provider.add_span_processor(SimpleSpanProcessor(EXPORTER))
trace.set_tracer_provider(_provider)

warnings.simplefilter("ignore")


def describe(span: ReadableSpan) -> dict[str, Any]:
    context = span.get_span_context()
    parent = span.parent
    return {
        "name": span.name,
        "kind": span.kind.name.lower(),
        "trace_id": f"{context.trace_id:032x}",
        "span_id": f"{context.span_id:016x}",
        "parent_span_id": f"{parent.span_id:016x}" if parent else None,
        "parent_is_remote": bool(parent and parent.is_remote),
        "attributes": {k: str(v) for k, v in (span.attributes or {}).items()},
    }


def finished() -> list[dict[str, Any]]:
    return [describe(s) for s in EXPORTER.get_finished_spans()]


async def call(args: argparse.Namespace) -> dict[str, Any]:
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    target: Any
    if args.url:
        target = args.url
    else:
        command = args.command[1:] if args.command[:1] == ["--"] else args.command
        target = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    mode = "auto" if args.era == "stateless" else "legacy"
    tracer = trace.get_tracer("interop-host")
    async with Client(target, mode=mode, cache=None, read_timeout_seconds=args.timeout) as client:
        with tracer.start_as_current_span("interop host"):
            await client.call_tool("echo", {"text": "traced"})
    spans = finished()
    calls = [s for s in spans if s["kind"] == "client" and s["attributes"].get("mcp.method.name") == "tools/call"]
    if len(calls) != 1:
        raise SystemExit(f"expected one tools/call client span, got {spans}")
    return {"trace_id": calls[0]["trace_id"], "client_span_id": calls[0]["span_id"], "spans": spans}


def client_main(argv: list[str]) -> int:
    import anyio

    parser = argparse.ArgumentParser(prog="traced.py client")
    parser.add_argument("--era", choices=["handshake", "stateless"], default="handshake")
    parser.add_argument("--url", help="a streamable HTTP endpoint instead of a stdio server command")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if not args.url and len([c for c in args.command if c != "--"]) == 0:
        parser.error("a server command after -- (or --url) is required")
    result = anyio.run(call, args)
    print(json.dumps(result), flush=True)
    return 0


def server_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="traced.py server")
    parser.add_argument("--transport", default="stdio", choices=["stdio", "streamable-http"])
    parser.add_argument("--port", type=int, default=8000)
    options = parser.parse_args(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from server import server

    @server.tool(description="The spans this server finished so far, as JSON", structured_output=False)
    def recorded_spans() -> str:
        return json.dumps(finished())

    if options.transport == "stdio":
        server.run("stdio")
    else:
        server.run(options.transport, host="127.0.0.1", port=options.port)
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in ("client", "server"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(client_main(sys.argv[2:]) if sys.argv[1] == "client" else server_main(sys.argv[2:]))
