// Bundles the page scripts (src/client.js, src/host.js) with the pinned
// TypeScript SDK packages into OUTDIR/dist for the browser, with the
// pinned esbuild. `node build.mjs [OUTDIR]` (default ../../target/browser).

import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));

/** Bundles both pages' scripts into `outdir`/dist. */
export async function build(outdir) {
  const esbuild = await import("esbuild");
  await esbuild.build({
    entryPoints: [path.join(here, "src/client.js"), path.join(here, "src/host.js")],
    outdir: path.join(outdir, "dist"),
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "chrome120",
    logLevel: "warning",
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const outdir = path.resolve(process.argv[2] ?? path.join(here, "../../target/browser"));
  await build(outdir);
  console.log(`built ${path.join(outdir, "dist")}`);
}
