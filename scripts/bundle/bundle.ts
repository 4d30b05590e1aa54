/**
 * The second step of `npm run build`: bundles tsc's output (dist/) into dist/bundle/, which
 * `bin/gatesync.js` runs. A command used to load 100–160 modules one by one — each resolved,
 * read, compiled and linked by Node's ESM loader — plus `yaml`'s 72 CommonJS files; in chunks
 * it costs far less (docs/dev/performance.md). The chunks keep the commands apart: each
 * `import()` of an action, a validator or a backend is a chunk of its own, so `--help` still
 * loads no validator. dist/ itself stays as tsc wrote it (docs/user/sandbox.md imports from it).
 *
 * Packages are bundled only when listed below (pure JavaScript, no file read beside their
 * code, no worker of their own), with every package they import; the rest — native addons,
 * worker pools, the state backends, Spectral — are imported from node_modules as before.
 *
 * The precompiled validators (dist/validate/compiled/), `yaml` and `commander` become scripts with a V8 code
 * cache each, made here by a process started as `bin/gatesync.js` starts (compiled-script.ts).
 * Then the launcher's answers to `--help` and `--version` (build-answers.ts).
 */
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { mkdir, readFile, readdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import type { Plugin } from "esbuild";
import { writeBuildAnswers } from "./build-answers.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const outdir = path.join(root, "dist/bundle");
const compiledDir = path.join(root, "dist/validate/compiled");

/**
 * Packages loaded as scripts with a code cache, like the validators: `yaml`, whose parse of a
 * small repository's files is mostly V8 compiling its functions on their first calls, and
 * `commander`, which every command loads.
 */
const scriptPackages = ["yaml", "commander"];

/** What start-up loads from node_modules on the paths users wait for (help, validate, plan, apply). */
const bundled = new Set(["js-yaml", "fastest-levenshtein", "p-queue", "eventemitter3", "p-timeout", "safe-stable-stringify", "cli-progress", "age-encryption"]);

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

/** The module that runs the scripts (compiled-script.ts), as the generated modules import it. */
const scriptRunner = JSON.stringify(path.join(here, "compiled-script.ts"));

/** An import of a compiled validators' module becomes one of its script, loaded with its code cache. */
const compiledAsScripts: Plugin = {
  name: "compiled-as-scripts",
  setup(b) {
    // from any directory of dist/validate/ (the OpenAPI validators moved to document/: a filter on `./compiled/` alone let them be bundled as ES modules, without their caches)
    b.onResolve({ filter: /^\.\.?\/compiled\/[\w-]+\.js$/ }, (args) =>
      path.dirname(path.resolve(args.resolveDir, args.path)) === compiledDir
        ? { path: path.basename(args.path, ".js"), namespace: "compiled-script" }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "compiled-script" }, async (args) => {
      const text = await readFile(path.join(compiledDir, `${args.path}.js`), "utf8");
      const exported = (name: string): string => {
        // a table of validators by schema name (gatesync-schemas), or one validator
        const table = new RegExp(`^export const ${name} = \\{\\n([^}]*)\\n\\};`, "m").exec(text)?.[1];
        if (table === undefined) return `export const ${name} = lazy.validator(${JSON.stringify(name)});`;
        const keys = [...table.matchAll(/^\s+("[^"]+"): v\d+,?$/gm)].map((m) => m[1]!);
        return `export const ${name} = lazy.table(${JSON.stringify(name)}, [${keys.join(", ")}]);`;
      };
      const contents = [
        `import { lazyExports } from ${scriptRunner};`,
        `const lazy = lazyExports(${JSON.stringify(args.path)});`,
        ...[...text.matchAll(/^export const (\w+)/gm)].map((m) => exported(m[1]!)),
      ].join("\n");
      return { contents, loader: "js", resolveDir: root };
    });
  },
};

/** An import of a package of `scriptPackages` from gatesync's code becomes one of its script (its exports read at build time). */
const packagesAsScripts: Plugin = {
  name: "packages-as-scripts",
  setup(b) {
    const filter = new RegExp(`^(${scriptPackages.join("|")})$`);
    b.onResolve({ filter }, (args) =>
      args.importer.includes(`${path.sep}node_modules${path.sep}`) ? undefined : { path: args.path, namespace: "package-script" },
    );
    b.onLoad({ filter: /.*/, namespace: "package-script" }, (args) => {
      const names = Object.keys(createRequire(path.join(root, "package.json"))(args.path) as object).filter(
        (n) => /^[A-Za-z_$][\w$]*$/.test(n) && n !== "default",
      );
      const contents = [
        `import { compiledExports } from ${scriptRunner};`,
        `const loaded = compiledExports(${JSON.stringify(args.path)});`,
        ...names.map((n) => `export const ${n} = loaded.${n};`),
      ].join("\n");
      return { contents, loader: "js", resolveDir: root };
    });
  },
};

/**
 * `yaml` loaded on first use (src/yaml/yaml-library.ts) is its script too: the module that
 * requires it from node_modules becomes one that runs the script, with its code cache.
 */
const lazyYamlAsScript: Plugin = {
  name: "lazy-yaml-as-script",
  setup(b) {
    b.onResolve({ filter: /(^|\/)yaml-library\.js$/ }, (args) =>
      path.resolve(args.resolveDir, args.path) === path.join(root, "dist/yaml/yaml-library.js")
        ? { path: "yaml", namespace: "lazy-package-script" }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "lazy-package-script" }, (args) => ({
      contents: [
        `import { compiledExports } from ${scriptRunner};`,
        `export const loadYamlLibrary = () => compiledExports(${JSON.stringify(args.path)});`,
      ].join("\n"),
      loader: "js",
      resolveDir: root,
    }));
  },
};

/** One script: CommonJS in one function expression (compiled-script.ts runs it). */
async function writeScript(entry: string, name: string, bundle: boolean): Promise<string> {
  const out = await build({
    entryPoints: [entry],
    bundle,
    format: "cjs",
    platform: "node",
    target: "node20",
    define: { "import.meta.url": "__importMetaUrl" },
    write: false,
    logLevel: "warning",
  });
  const file = path.join(outdir, "compiled", `${name}.cjs`);
  await writeFile(file, `(function (exports, require, module, __filename, __dirname, __importMetaUrl) {\n${out.outputFiles[0]!.text}})`);
  return file;
}

/** Each compiled validators' module, and each package of `scriptPackages` (bundled whole), as a script. */
async function writeScripts(): Promise<string[]> {
  await mkdir(path.join(outdir, "compiled"), { recursive: true });
  const modules = (await readdir(compiledDir)).filter((f) => f.endsWith(".js"));
  const files = await Promise.all(modules.map(async (f) => writeScript(path.join(compiledDir, f), f.replace(/\.js$/, ""), false)));
  for (const pkg of scriptPackages) files.push(await writeScript(createRequire(path.join(root, "package.json")).resolve(pkg), pkg, true));
  return files;
}

/** The scripts' code caches, made by a process with the launcher's V8 flags and no NODE_OPTIONS (whose V8 flags would void them). */
function writeCodeCaches(files: readonly string[]): void {
  const { NODE_OPTIONS: _, ...env } = process.env;
  const run = spawnSync(process.execPath, ["--import", "tsx", path.join(here, "make-code-cache.ts"), ...files], { cwd: root, env, stdio: "inherit" });
  if (run.status !== 0) throw new Error(`make-code-cache.ts exited ${run.status ?? run.signal}`);
}

// chunks are named by content: those of an earlier build would stay beside the new ones
await rm(outdir, { recursive: true, force: true });
const result = await build({
  entryPoints: {
    cli: path.join(root, "dist/cli.js"),
    "file-worker": path.join(root, "dist/validate/file/file-worker.js"),
    "rule-worker": path.join(root, "dist/rules/rule-worker.js"),
    "sops-age-worker": path.join(root, "dist/secrets/sops/sops-age-worker.js"),
  },
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
  plugins: [packagesAsScripts, lazyYamlAsScript, choosePackages, compiledAsScripts],
});
// which modules each chunk holds: test/cli/startup-modules.test.ts reads it
await writeFile(path.join(outdir, "meta.json"), JSON.stringify(result.metafile));
writeCodeCaches(await writeScripts());
// last: the answers are what the finished bundle prints
await writeBuildAnswers(root, outdir);
