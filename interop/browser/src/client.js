// The official TypeScript client SDK in a browser page, talking to our
// everything-server on another origin: what the runner (run.mjs) calls
// through `window.suite`.

import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { check, step } from "./steps.js";

const STATELESS = "2026-07-28";

function newClient(era) {
  const options = { capabilities: {} };
  if (era === "stateless") {
    // The v2 client speaks 2026-07-28 only when asked: pinned, it probes
    // with server/discover and never falls back to initialize.
    options.versionNegotiation = { mode: { pin: STATELESS } };
  }
  return new Client({ name: "browser-interop", version: "1.0.0" }, options);
}

/** The contract of both eras: tools listed and called, a resource read, a
 * progress notification received over the request's SSE stream. */
async function contract(client) {
  await step("list tools", async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    for (const wanted of ["test_simple_text", "test_tool_with_progress", "counter"]) {
      check(names.includes(wanted), `no ${wanted} among ${names.length} tools`);
    }
    return `${names.length} tools`;
  });
  await step("call a tool", async () => {
    const result = await client.callTool({ name: "test_simple_text", arguments: {} });
    const text = result.content?.[0]?.text;
    check(text === "This is a simple text response for testing.", `got ${JSON.stringify(result)}`);
    return text;
  });
  await step("read a resource", async () => {
    const result = await client.readResource({ uri: "test://static-text" });
    const text = result.contents?.[0]?.text;
    check(text === "This is the content of the static text resource.", `got ${JSON.stringify(result)}`);
    return text;
  });
  await step("receive progress notifications over SSE", async () => {
    const seen = [];
    const result = await client.callTool(
      { name: "test_tool_with_progress", arguments: {} },
      { onprogress: (progress) => seen.push(progress.progress) },
    );
    check(result.content?.[0]?.text === "Progress tool completed", `got ${JSON.stringify(result)}`);
    check(seen.length === 3 && seen[2] === 100, `progress seen: ${JSON.stringify(seen)}`);
    return `progress ${seen.join(", ")}`;
  });
}

window.suite = {
  /** initialize, the contract, the session ended with DELETE. */
  async handshake(server) {
    const transport = new StreamableHTTPClientTransport(new URL(server));
    const client = newClient("handshake");
    await step("initialize", async () => {
      await client.connect(transport);
      const version = client.getNegotiatedProtocolVersion();
      check(version === "2025-11-25", `negotiated ${version}`);
      // Readable only if the server exposes Mcp-Session-Id to the page.
      check(typeof transport.sessionId === "string" && transport.sessionId.length > 0,
        "the page cannot read the Mcp-Session-Id header");
      return version;
    });
    await contract(client);
    await step("end the session (DELETE)", async () => {
      await transport.terminateSession();
      check(transport.sessionId === undefined, "the session id is still set");
    });
    await client.close();
    return window.steps;
  },

  /** server/discover pinned to 2026-07-28, the contract, and a tool whose
   * argument travels as an Mcp-Param-* header. */
  async stateless(server) {
    const transport = new StreamableHTTPClientTransport(new URL(server));
    const client = newClient("stateless");
    await step("discover (2026-07-28, pinned)", async () => {
      await client.connect(transport);
      const era = client.getProtocolEra();
      const version = client.getNegotiatedProtocolVersion();
      check(era === "modern" && version === STATELESS, `era ${era}, version ${version}`);
      check(transport.sessionId === undefined, "a stateless server sent a session id");
      return version;
    });
    await contract(client);
    // SEP-2243: an argument the tool's schema marks with x-mcp-header
    // travels as an Mcp-Param-* header too. The pinned client (2.4.0) does
    // not mirror these in a browser (it checks for `window`), so the server
    // refuses the plain call; the page then sends the header itself, which
    // is what the CORS grant of Mcp-Param-* must let through.
    await step("x-mcp-header tool: the pinned SDK sends no Mcp-Param-* in a browser (refused, -32020)", async () => {
      try {
        await client.callTool({ name: "test_header_param", arguments: { region: "eu-west" } });
      } catch (error) {
        check(error.code === -32020, `refused with ${error.code}: ${error.message}`);
        return "SDK limitation, not ours: header not mirrored";
      }
      throw new Error("the SDK now mirrors Mcp-Param-* in browsers: update this step and docs/guide/browser.md");
    });
    await step("the same call with the page's own Mcp-Param-Region header", async () => {
      const result = await client.callTool(
        { name: "test_header_param", arguments: { region: "eu-west" } },
        { headers: { "Mcp-Param-Region": "eu-west" } },
      );
      check(result.content?.[0]?.text === "region: eu-west", `got ${JSON.stringify(result)}`);
      return result.content[0].text;
    });
    await client.close();
    return window.steps;
  },

  /** The page's origin is not on the server's list: the connection must fail. */
  async refused(server) {
    const client = newClient("handshake");
    const transport = new StreamableHTTPClientTransport(new URL(server));
    return step("initialize is refused", async () => {
      try {
        await client.connect(transport);
      } catch (error) {
        return `refused: ${error.message ?? error}`;
      }
      throw new Error("a page from an origin not on the list connected");
    });
  },
};
