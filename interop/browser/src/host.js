// An MCP Apps host in a browser page, on the official host bridge of
// `@modelcontextprotocol/ext-apps`: it connects to our everything-server
// with the TypeScript client, finds the tool that has a view, reads the
// view (a `ui://` resource of type `text/html;profile=mcp-app`), renders it
// in a sandboxed iframe, calls the tool as a model would and hands the view
// the result. The view's own calls (a click on its button) go through the
// bridge to the server. The runner (run.mjs) drives it through `window.host`.

import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  AppBridge,
  PostMessageTransport,
  RESOURCE_MIME_TYPE,
  getToolUiResourceUri,
} from "@modelcontextprotocol/ext-apps/app-bridge";
import { check, step } from "./steps.js";

const UI_EXTENSION = "io.modelcontextprotocol/ui";

window.host = {
  /** Renders the app of tool `toolName`; resolves with the count the host's
   * own call of the tool returned, once the view has initialized. */
  async render(server, toolName) {
    const client = new Client(
      { name: "browser-apps-host", version: "1.0.0" },
      { capabilities: { extensions: { [UI_EXTENSION]: { mimeTypes: [RESOURCE_MIME_TYPE] } } } },
    );
    await step("connect the host's client", async () => {
      await client.connect(new StreamableHTTPClientTransport(new URL(server)));
      return client.getNegotiatedProtocolVersion();
    });
    const uri = await step("find the tool's view", async () => {
      const { tools } = await client.listTools();
      const tool = tools.find((t) => t.name === toolName);
      check(tool, `no tool ${toolName}`);
      const uri = getToolUiResourceUri(tool);
      check(uri && uri.startsWith("ui://"), `no ui:// view on ${toolName}: ${JSON.stringify(tool._meta)}`);
      return uri;
    });
    const html = await step("read the view", async () => {
      const { contents } = await client.readResource({ uri });
      const view = contents.find((c) => c.uri === uri);
      check(view, `no contents for ${uri}`);
      check(view.mimeType === RESOURCE_MIME_TYPE, `mimeType ${view.mimeType}, not ${RESOURCE_MIME_TYPE}`);
      check(typeof view.text === "string" && view.text.includes("<html"), "the view is not HTML text");
      return view.text;
    }, (text) => `${text.length} characters of ${RESOURCE_MIME_TYPE}`);
    const iframe = document.createElement("iframe");
    // Scripts only: no same origin (the view's origin is opaque, it reads
    // nothing of the host's), no forms, popups or top navigation.
    iframe.setAttribute("sandbox", "allow-scripts");
    iframe.title = "MCP App";
    iframe.id = "app";
    const bridge = new AppBridge(
      client,
      { name: "browser-apps-host", version: "1.0.0" },
      { serverTools: {}, serverResources: {} },
    );
    const initialized = new Promise((resolve) => {
      bridge.oninitialized = resolve;
    });
    await step("render the view in a sandboxed iframe", async () => {
      iframe.srcdoc = html;
      document.getElementById("apps").append(iframe);
      await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
      await Promise.race([
        initialized,
        new Promise((_, reject) => setTimeout(() => reject(new Error("the view did not initialize within 10 s")), 10_000)),
      ]);
      return `${bridge.getAppVersion()?.name} initialized`;
    });
    return step("call the tool and hand the view its result", async () => {
      const result = await client.callTool({ name: toolName, arguments: {} });
      const count = result.structuredContent?.count;
      check(typeof count === "number", `no structured count in ${JSON.stringify(result)}`);
      await bridge.sendToolInput({ arguments: {} });
      await bridge.sendToolResult(result);
      return String(count);
    });
  },
};
