"""The interop contract's client-side checks, run against a connected `mcp.Client`."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

from recorder import Recorder, text_of

TOOLS = {"add", "echo", "sample", "ask_name", "progress", "log", "fail"}
NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


class Report:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0
        self.skipped = 0

    def check(self, name: str, ok: bool, detail: str = "") -> bool:
        if ok:
            self.passed += 1
            print(f"ok: {name}", flush=True)
        else:
            self.failed += 1
            print(f"FAIL: {name}" + (f" ({detail})" if detail else ""), flush=True)
        return ok

    def skip(self, name: str, reason: str) -> None:
        """A check this client cannot run; counted neither as passed nor failed."""
        self.skipped += 1
        print(f"skip: {name} ({reason})", flush=True)

    def equal(self, name: str, actual: Any, expected: Any) -> bool:
        return self.check(name, actual == expected, f"got {actual!r}, expected {expected!r}")


def only_text(result: types.CallToolResult) -> str | None:
    """The text of a result that holds exactly one text block."""
    return text_of(list(result.content))


async def step(report: Report, name: str, body: Callable[[], Awaitable[None]]) -> None:
    """Run one group of checks; an exception there is one failure, and the run goes on."""
    try:
        await body()
    except Exception as exc:  # boundary: report and continue with the next group
        report.check(name, False, f"raised {type(exc).__name__}: {exc}")


STATELESS_VERSION = "2026-07-28"


async def run_checks(client: Client, rec: Recorder, report: Report, stateless: bool = False) -> None:
    """Every check of the contract; `stateless` runs the subset the 2026-07-28
    era allows (no server-to-client requests, no logging/setLevel)."""

    async def handshake() -> None:
        version = client.protocol_version
        print(f"negotiated protocol version: {version}", flush=True)
        if stateless:
            report.equal("stateless-era protocol version", version, STATELESS_VERSION)
            return
        report.check("handshake-era protocol version", version in HANDSHAKE_PROTOCOL_VERSIONS, repr(version))
        report.equal("server answers the offered version", version, LATEST_HANDSHAKE_VERSION)
        caps = client.server_capabilities
        for cap in ("tools", "resources", "prompts", "logging"):
            report.check(f"server declares capability {cap}", getattr(caps, cap) is not None)

    async def list_tools() -> None:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        report.check("tools/list has the 7 contract tools", TOOLS <= tools.keys(), f"got {sorted(tools)}")
        schema = tools["add"].output_schema if "add" in tools else None
        sum_type = ((schema or {}).get("properties") or {}).get("sum", {}).get("type")
        report.check("add has an outputSchema with integer sum", sum_type == "integer", repr(schema))

    async def add() -> None:
        result = await client.call_tool("add", {"a": 2, "b": 40})
        report.equal("add(2,40) structuredContent", result.structured_content, {"sum": 42})
        text = only_text(result)
        report.equal("add(2,40) text content is the JSON", json.loads(text) if text else text, {"sum": 42})
        report.equal("add(2,40) isError", bool(result.is_error), False)

    async def echo() -> None:
        report.equal("echo(interop)", only_text(await client.call_tool("echo", {"text": "interop"})), "interop")

    async def sample() -> None:
        result = await client.call_tool("sample", {"prompt": "hello"})
        report.equal("sample(hello) result", only_text(result), "sampled: hello")
        report.equal("sampling/createMessage count", len(rec.sampling_requests), 1)
        if rec.sampling_requests:
            req = rec.sampling_requests[0]
            shape = [(m.role, text_of(m.content)) for m in req.messages]
            report.equal("sampling request messages", shape, [("user", "hello")])
            report.equal("sampling request maxTokens", req.max_tokens, 100)

    async def ask_name() -> None:
        rec.elicitation_answers[:] = [
            types.ElicitResult(action="accept", content={"name": "Ada"}),
            types.ElicitResult(action="decline"),
        ]
        report.equal("ask_name (accept Ada)", only_text(await client.call_tool("ask_name", {})), "hi Ada")
        report.equal("ask_name (decline)", only_text(await client.call_tool("ask_name", {})), "no name: decline")
        report.equal("elicitation/create count", len(rec.elicitation_requests), 2)
        if rec.elicitation_requests:
            req = rec.elicitation_requests[0]
            report.check("elicitation is form mode", isinstance(req, types.ElicitRequestFormParams), repr(req))
            report.equal("elicitation message", req.message, "What is your name?")
            schema = getattr(req, "requested_schema", None) or {}
            shape = {k: schema.get(k) for k in NAME_SCHEMA}
            report.equal("elicitation requestedSchema", shape, NAME_SCHEMA)

    async def progress() -> None:
        rec.progress.clear()
        result = await client.call_tool("progress", {"steps": 3}, progress_callback=rec.on_progress)
        report.equal("progress(3) result", only_text(result), "done")
        report.equal("progress notifications", rec.progress, [(1, 3), (2, 3), (3, 3)])

    async def logging() -> None:
        if stateless:
            await stateless_logging(client, rec, report)
            return
        await client.set_logging_level("error")
        rec.logs.clear()
        result = await client.call_tool("log", {})
        report.equal("log result", only_text(result), "logged")
        await rec.settle_logs(1)
        got = [(m.level, m.data) for m in rec.logs]
        report.equal("log messages at level error", got, [("error", "error message")])

    async def fail() -> None:
        result = await client.call_tool("fail", {})
        report.equal("fail isError", result.is_error, True)
        text = only_text(result) or ""
        report.check("fail text", "this tool always fails" in text, repr(text))

    await step(report, "initialize", handshake)
    await step(report, "tools/list", list_tools)
    # Sampling, elicitation and logging/setLevel are server-to-client or
    # removed in the stateless era.
    asks = () if stateless else (("sample", sample), ("ask_name", ask_name))
    for name, body in (("add", add), ("echo", echo), *asks):
        await step(report, name, body)
    for name, body in (("progress", progress), ("log", logging), ("fail", fail)):
        await step(report, name, body)
    await run_resource_checks(client, report, stateless)
    await run_prompt_checks(client, report)
    await step(report, "unknown tool", lambda: unknown_tool(client, report))


async def stateless_logging(client: Client, rec: Recorder, report: Report) -> None:
    """2026-07-28 has no logging/setLevel: a request opts in to log delivery by
    carrying `io.modelcontextprotocol/logLevel` in its `_meta`, and the server
    sends only messages at or above that level, only for that request."""
    rec.logs.clear()
    result = await client.call_tool("log", {})
    report.equal("log result (no logLevel in _meta)", only_text(result), "logged")
    await rec.settle_logs(0)
    got = [(m.level, m.data) for m in rec.logs]
    report.equal("no log messages without the _meta opt-in", got, [])

    rec.logs.clear()
    result = await client.call_tool("log", {}, meta={types.LOG_LEVEL_META_KEY: "error"})
    report.equal("log result (_meta logLevel error)", only_text(result), "logged")
    await rec.settle_logs(1)
    got = [(m.level, m.data) for m in rec.logs]
    report.equal("log messages at _meta logLevel error", got, [("error", "error message")])


async def run_resource_checks(client: Client, report: Report, stateless: bool = False) -> None:
    async def listing() -> None:
        resources = {str(r.uri): r for r in (await client.list_resources()).resources}
        readme = resources.get("file:///readme")
        report.check("resources/list has file:///readme", readme is not None, f"got {sorted(resources)}")
        if readme is not None:
            report.equal("readme name/mimeType", (readme.name, readme.mime_type), ("readme", "text/plain"))
        templates = (await client.list_resource_templates()).resource_templates
        names = {t.uri_template: t.name for t in templates}
        report.equal("templates/list has users://{id}/profile", names.get("users://{id}/profile"), "profile")

    async def read(uri: str, expected: str) -> None:
        contents = (await client.read_resource(uri)).contents
        texts = [getattr(c, "text", None) for c in contents]
        report.equal(f"read {uri}", texts, [expected])
        report.equal(f"read {uri} content uri", [str(c.uri) for c in contents], [uri])

    async def missing() -> None:
        try:
            result = await client.read_resource("file:///missing")
        except MCPError as err:
            print(f"read file:///missing -> JSON-RPC error {err.code}: {err.message}", flush=True)
            if stateless:
                # 2026-07-28 spells resource-not-found as invalid params.
                report.equal("read file:///missing JSON-RPC error code", err.code, -32602)
            else:
                # The handshake-era contract accepts any code (-32002 is the 2025-11-25 one).
                report.check("read file:///missing fails with a JSON-RPC error", True)
        else:
            report.check("read file:///missing fails with a JSON-RPC error", False, f"got {result!r}")

    await step(report, "resources/list", listing)
    await step(report, "read file:///readme", lambda: read("file:///readme", "Read me."))
    await step(report, "read users://7/profile", lambda: read("users://7/profile", "profile of 7"))
    await step(report, "read file:///missing", missing)


async def run_prompt_checks(client: Client, report: Report) -> None:
    async def listing() -> None:
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        review = prompts.get("review")
        report.check("prompts/list has review", review is not None, f"got {sorted(prompts)}")
        args = {a.name: bool(a.required) for a in (review.arguments or [])} if review else {}
        report.equal("review arguments (name -> required)", args, {"code": True, "language": False})

    async def get(arguments: dict[str, str], expected: str) -> None:
        messages = (await client.get_prompt("review", arguments)).messages
        shape = [(m.role, text_of(m.content)) for m in messages]
        report.equal(f"get_prompt review {arguments}", shape, [("user", expected)])

    await step(report, "prompts/list", listing)
    await step(report, "get_prompt", lambda: get({"code": "x = 1", "language": "python"}, "Review this python: x = 1"))
    await step(report, "get_prompt", lambda: get({"code": "x = 1"}, "Review this code: x = 1"))


async def unknown_tool(client: Client, report: Report) -> None:
    try:
        result = await client.call_tool("nope", {})
    except MCPError as err:
        print(f"unknown tool -> JSON-RPC error {err.code}: {err.message}", flush=True)
        report.equal("unknown tool JSON-RPC error code", err.code, -32602)
    else:
        print(f"unknown tool -> isError result: {only_text(result)!r}", flush=True)
        report.equal("unknown tool isError", result.is_error, True)
