// The browser suite: our everything-server on 127.0.0.1, pages on another
// origin (http://localhost:PORT) in headless Chromium driven by
// playwright-core, the official TypeScript SDK bundled into them.
//
//   node run.mjs [--server PATH] [--out DIR]
//
// PATH defaults to ../../target/release/examples/everything-server, DIR to
// ../../target/browser (bundles, screenshots, the server's log). Chromium is
// CHROMIUM, else `chromium` on PATH. A missing prerequisite fails the run
// with what it needs; each test names the step that failed and keeps a
// screenshot. Prints one line per test and `N passed, M failed` last.

import { spawn, execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
/** Every wait of a test is bounded by this. */
const WAIT_MS = 15_000;

function fail(message) {
  console.error(`browser suite: ${message}`);
  console.log("0 passed, 1 failed");
  process.exit(1);
}

function option(name, fallback) {
  const at = process.argv.indexOf(name);
  return at >= 0 && process.argv[at + 1] ? process.argv[at + 1] : fallback;
}

const serverBinary = path.resolve(option("--server", path.join(root, "target/release/examples/everything-server")));
const out = path.resolve(option("--out", path.join(root, "target/browser")));

// Prerequisites, each refused with what it needs.
let chromium;
try {
  ({ chromium } = await import("playwright-core"));
  await import("esbuild");
} catch {
  fail("needs the pinned npm packages: (cd interop/browser && npm ci)");
}
const browserPath = process.env.CHROMIUM || (() => {
  try {
    return execFileSync("sh", ["-c", "command -v chromium"], { encoding: "utf8" }).trim();
  } catch {
    return "";
  }
})();
if (!browserPath || !fs.existsSync(browserPath)) {
  fail("needs Chromium: apt-get install chromium (or set CHROMIUM to its path)");
}
if (!fs.existsSync(serverBinary)) {
  fail(`needs the everything-server at ${serverBinary}: cargo build --release --example everything-server (or pass --server PATH)`);
}

const started = Date.now();
fs.mkdirSync(out, { recursive: true });
const { build } = await import("./build.mjs");
await build(out);

// The pages' origin: http://localhost:PORT. The same files are served as
// http://127.0.0.1:PORT too, an origin the server does not list.
const files = {
  "/client.html": path.join(here, "pages/client.html"),
  "/host.html": path.join(here, "pages/host.html"),
  "/dist/client.js": path.join(out, "dist/client.js"),
  "/dist/host.js": path.join(out, "dist/host.js"),
};
const pages = http.createServer((request, response) => {
  const file = files[new URL(request.url, "http://x").pathname];
  if (!file) {
    response.writeHead(404).end();
    return;
  }
  const type = file.endsWith(".js") ? "text/javascript" : "text/html";
  response.writeHead(200, { "content-type": `${type}; charset=utf-8` });
  fs.createReadStream(file).pipe(response);
});
await new Promise((resolve) => pages.listen(0, "127.0.0.1", resolve));
const pagePort = pages.address().port;
const pageOrigin = `http://localhost:${pagePort}`;
const otherOrigin = `http://127.0.0.1:${pagePort}`;

// Our server, allowing the pages' origin (and only it) with --cors-origin.
const serverLog = path.join(out, "everything-server.log");
const logStream = fs.createWriteStream(serverLog);
const server = spawn(serverBinary, ["--port", "0", "--cors-origin", pageOrigin], {
  stdio: ["ignore", "pipe", "pipe"],
});
server.stdout.pipe(logStream);
const mcpUrl = await new Promise((resolve, reject) => {
  let seen = "";
  const timer = setTimeout(() => reject(new Error(`no address within ${WAIT_MS} ms: ${seen}`)), WAIT_MS);
  server.stderr.on("data", (chunk) => {
    logStream.write(chunk);
    seen += chunk;
    const match = seen.match(/everything-server: (http:\/\/[^\s]+\/mcp)/);
    if (match) {
      clearTimeout(timer);
      resolve(match[1]);
    }
  });
  server.on("exit", (code) => reject(new Error(`the everything-server exited (${code}): ${seen}`)));
}).catch((error) => {
  server.kill("SIGKILL");
  fail(error.message);
});

let passed = 0;
let failed = 0;

/** Runs one test in a fresh page; a failure names its step and keeps a
 * screenshot, the page's steps and its console. */
async function test(name, body) {
  const context = await browser.newContext();
  const page = await context.newPage();
  page.setDefaultTimeout(WAIT_MS);
  const consoleLines = [];
  page.on("console", (message) => consoleLines.push(`${message.type()}: ${message.text()}`));
  page.on("pageerror", (error) => consoleLines.push(`pageerror: ${error.message}`));
  const slug = name.replace(/[^a-z0-9]+/gi, "-").toLowerCase();
  const testStarted = Date.now();
  try {
    const detail = await body(page);
    passed += 1;
    console.log(`ok: ${name} (${Date.now() - testStarted} ms)${detail ? `: ${detail}` : ""}`);
  } catch (error) {
    failed += 1;
    const screenshot = path.join(out, `${slug}-failure.png`);
    await page.screenshot({ path: screenshot, fullPage: true }).catch(() => {});
    const steps = await page.evaluate(() => window.steps ?? []).catch(() => []);
    console.log(`FAILED: ${name}: ${error.message}`);
    for (const s of steps) console.log(`  step ${s.status}: ${s.name}${s.detail ? ` (${s.detail})` : ""}`);
    for (const line of consoleLines) console.log(`  console ${line}`);
    console.log(`  screenshot: ${path.relative(root, screenshot)}; server log: ${path.relative(root, serverLog)}`);
  } finally {
    await context.close();
  }
}

/** Opens `page` at `url` and waits for its script to be ready. */
async function open(page, url, ready) {
  await page.goto(url);
  await page.waitForFunction(ready);
}

/** Waits until `locator`'s text is `text`; throws naming `step`. */
async function showsText(locator, text, step) {
  const deadline = Date.now() + WAIT_MS;
  let last = null;
  while (Date.now() < deadline) {
    last = await locator.textContent({ timeout: WAIT_MS }).catch(() => null);
    if (last === text) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`step "${step}" failed: the view shows ${JSON.stringify(last)}, not ${JSON.stringify(text)}`);
}

/** The page's steps in one line. */
const summary = (steps) => steps.map((s) => s.name).join(" / ");

let browser;
try {
  // A browser that does not start fails the run (the finally stops the server).
  browser = await chromium.launch({
    executablePath: browserPath,
    headless: true,
    // This machine's network is closed: no background traffic to wait on.
    args: [
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });

  await test("handshake era: initialize, tools, a resource, progress over SSE, DELETE", async (page) => {
    await open(page, `${pageOrigin}/client.html`, () => window.suite);
    return summary(await page.evaluate((url) => window.suite.handshake(url), mcpUrl));
  });

  await test("stateless era (2026-07-28): discover, tools, a resource, progress over SSE, Mcp-Param-*", async (page) => {
    await open(page, `${pageOrigin}/client.html`, () => window.suite);
    return summary(await page.evaluate((url) => window.suite.stateless(url), mcpUrl));
  });

  await test("a page from an origin not on the list is refused", async (page) => {
    await open(page, `${otherOrigin}/client.html`, () => window.suite);
    return page.evaluate((url) => window.suite.refused(url), mcpUrl);
  });

  await test("MCP Apps host: the counter app in a sandboxed iframe calls our tool through the bridge", async (page) => {
    await open(page, `${pageOrigin}/host.html`, () => window.host);
    const first = Number(await page.evaluate(([url, tool]) => window.host.render(url, tool), [mcpUrl, "counter"]));
    const view = page.frameLocator("#app");
    await showsText(view.locator("#count"), String(first), "the view shows the host's result");
    await view.locator("#again").click();
    await showsText(view.locator("#count"), String(first + 1), "a click in the view calls the tool through the bridge");
    const screenshot = path.join(out, "apps-host.png");
    await page.screenshot({ path: screenshot, fullPage: true });
    return `count ${first} then ${first + 1}; screenshot ${path.relative(root, screenshot)}`;
  });
} catch (error) {
  failed += 1;
  console.log(`FAILED: the browser suite could not run: ${error.message}`);
} finally {
  await browser?.close();
  pages.close();
  if (server.exitCode === null && server.signalCode === null) {
    const exited = new Promise((resolve) => server.once("exit", resolve));
    server.kill("SIGINT");
    const killed = setTimeout(() => server.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(killed);
  }
}

console.log(`browser suite: ${((Date.now() - started) / 1000).toFixed(1)} s`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
