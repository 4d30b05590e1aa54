/**
 * The second step of `npm run build`: bundles tsc's output (dist/) into dist/bundle/, which
 * `bin/gatesync.js` runs. A command used to load 100–160 modules one by one — each resolved,
 * read, compiled and linked by Node's ESM loader — plus `yaml`'s 72 CommonJS files; in chunks,
 * a cold `gatesync validate` of the examples costs about a third less CPU
 * (docs/dev/performance.md). The chunks keep the commands apart: each `import()` of an action,
 * a validator or a backend is a chunk of its own, so `--help` still loads no validator. dist/
 * itself stays as tsc wrote it (docs/user/sandbox.md imports from it).
 *
 * Packages are bundled only when listed below (pure JavaScript, no file read beside their
 * code, no worker of their own), with every package they import; the rest — native addons,
 * worker pools, the state backends, Spectral — are imported from node_modules as before.
 */
import { rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "/work/main/node_modules/esbuild/lib/main.js";
import type { Plugin } from "/work/main/node_modules/esbuild/lib/main.js";

const root = "/work/wt/small-start";
const outdir = "/tmp/red/dist/bundle";

/** What start-up loads from node_modules on the paths users wait for (help, validate, plan, apply). */
const bundled = new Set(["yaml", "commander", "fastest-levenshtein", "p-queue", "eventemitter3", "p-timeout", "safe-stable-stringify", "cli-progress"]);

const packageOf = (specifier: string): string =>
  specifier
    .split("/")
    .slice(0, specifier.startsWith("@") ? 2 : 1)
    .join("/");

/** Bare imports of gatesync's code stay imports unless their package is listed; a listed package's own imports are bundled with it. */
const choosePackages: Plugin = {
  name: "choose-packages",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith("node:") || args.importer.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      return bundled.has(packageOf(args.path)) ? undefined : { external: true };
    });
  },
};

// chunks are named by content: those of an earlier build would stay beside the new ones
await rm(outdir, { recursive: true, force: true });
const result = await build({
  entryPoints: { cli: "/tmp/red/distsrc/cli.js", "file-worker": "/tmp/red/distsrc/validate/file-worker.js" },
  absWorkingDir: root,
  outdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  sourcemap: true,
  metafile: true,
  logLevel: "warning",
  // bundled CommonJS (yaml, commander) calls `require` for Node's own modules
  banner: { js: 'import { createRequire as __gatesyncCreateRequire } from "node:module";\nconst require = __gatesyncCreateRequire(import.meta.url);' },
  plugins: [choosePackages],
});
// which modules each chunk holds: test/cli/startup-modules.test.ts reads it
await writeFile(path.join(outdir, "meta.json"), JSON.stringify(result.metafile));
