/**
 * The second step of `npm run build`: bundles tsc's output (dist/) into dist/bundle/, which
 * `bin/gatesync.js` runs. A command used to load 100–160 modules one by one — each resolved,
 * read, compiled and linked by Node's ESM loader — plus `yaml`'s 72 CommonJS files; the CLI is
 * now one CommonJS script with a code cache (writeCliScript), the worker threads' entries ES
 * module chunks. Each `import()` of an action, a validator or a backend still runs only when
 * reached, so `--help` runs no validator. dist/ itself stays as tsc wrote it
 * (docs/user/sandbox.md imports from it).
 *
 * Packages are bundled only when listed below (pure JavaScript, no file read beside their
 * code, no worker of their own), with every package they import; the rest — native addons,
 * worker pools, the state backends, Spectral — are imported from node_modules as before.
 *
 * The CLI, the precompiled validators (dist/validate/compiled/), `yaml` and `commander` are scripts with a V8
 * code cache each, made here by a process started as `bin/gatesync.js` starts (make-code-cache.ts).
 * Then the launcher's answers to `--help` and `--version` (build-answers.ts).
 */
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { existsSync } from "node:fs";
import { mkdir, readFile, readdir, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import type { Metafile, Plugin } from "esbuild";
import { writeBuildAnswers } from "./build-answers.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
/** The bundle processes run: built beside it (`outdir`) and then swapped in, as a suite's `npm pack` rebuilds while other processes run the CLI. */
const live = path.join(root, "dist/bundle");
const outdir = path.join(root, "dist/bundle.next");
/** The bundle before: kept until the next build, for a process that started from it and loads a worker or a validator later. */
const previous = path.join(root, "dist/bundle.previous");
const compiledDir = path.join(root, "dist/validate/compiled");

/**
 * Packages loaded as scripts with a code cache, like the validators: `yaml`, whose parse of a
 * small repository's files is mostly V8 compiling its functions on their first calls, and
 * `commander`, which every command loads.
 */
const scriptPackages = ["yaml", "commander"];

/** What start-up loads from node_modules on the paths users wait for (help, validate, plan, apply). */
const bundled = new Set(["js-yaml", "fastest-levenshtein", "p-queue", "eventemitter3", "p-timeout", "safe-stable-stringify", "cli-progress", "age-encryption"]);
/**
 * Single files of packages not bundled whole: the OpenAPI validator's `$ref` resolver, which
 * `validate` imports at its top, is an ES module (the package is `"type": "module"`), which the
 * CLI's CommonJS script could only `require` on Node ≥ 20.19; its validator, imported on first
 * use, stays the package's (it reads its schemas beside its code).
 */
const bundledFiles = new Set(["@seriousme/openapi-schema-validator/resolve.js"]);

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
      return bundled.has(packageOf(args.path)) || bundledFiles.has(args.path) ? undefined : { external: true };
    });
  },
};

/**
 * In the CLI's script, an `import()` of a package left outside the bundle is a `require`: a
 * script compiled with a code cache loses the loader of its dynamic imports on Node 20 ("A
 * dynamic import callback was not specified"), and giving it one is an experimental feature
 * that warns on stderr. A package that is an ES module is then required as one (Node ≥ 20.19).
 */
const externalImportsRequired: Plugin = {
  name: "external-imports-required",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) =>
      args.kind === "dynamic-import" && !args.path.startsWith("node:") && !bundled.has(packageOf(args.path))
        ? { path: args.path, namespace: "required-package" }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "required-package" }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      loader: "js",
    }));
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

/**
 * The CLI: one CommonJS script in one function expression (bin/script-loader.js runs it with its
 * code cache). As ES module chunks, a `validate` spent ~25 ms of its start in Node's ES module
 * loader — resolving, compiling (no cache for modules on Node 20) and linking ~50 chunks — and
 * more in the built-in modules' ES facades (docs/dev/performance.md). Its `import()`s of
 * gatesync's own modules stay lazy: esbuild runs such a module on its first import.
 */
async function writeCliScript(): Promise<Metafile> {
  const result = await build({
    entryPoints: [path.join(root, "dist/cli.js")],
    outfile: path.join(outdir, "cli.cjs"),
    absWorkingDir: root,
    bundle: true,
    format: "cjs",
    platform: "node",
    target: "node20",
    sourcemap: true,
    metafile: true,
    logLevel: "warning",
    // `import.meta.resolve` is reached only from the sources (worker-module.ts, under tsx): CommonJS's own stands in
    define: { "import.meta.url": "__importMetaUrl", "import.meta.resolve": "require.resolve" },
    banner: { js: "(function (exports, require, module, __filename, __dirname, __importMetaUrl) {" },
    footer: { js: "})" },
    plugins: [externalImportsRequired, packagesAsScripts, lazyYamlAsScript, choosePackages, compiledAsScripts],
  });
  return result.metafile;
}

// chunks are named by content: those of an earlier build would stay beside the new ones
await rm(outdir, { recursive: true, force: true });
await rm(previous, { recursive: true, force: true });
// the worker threads' entries stay ES modules, in chunks they share
const result = await build({
  entryPoints: {
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
const cli = await writeCliScript();
// which modules each output holds: test/cli/bundle.test.ts reads it
// named where they are read from (dist/bundle/), not where they were built
const outputs = Object.entries({ ...result.metafile.outputs, ...cli.outputs }).map(
  ([file, o]) => [file.replace("dist/bundle.next/", "dist/bundle/"), o] as const,
);
await writeFile(path.join(outdir, "meta.json"), JSON.stringify({ inputs: { ...result.metafile.inputs, ...cli.inputs }, outputs: Object.fromEntries(outputs) }));
writeCodeCaches([...(await writeScripts()), path.join(outdir, "cli.cjs")]);
if (existsSync(live)) await rename(live, previous);
await rename(outdir, live);
// last: the answers are what the bundle in place prints
await writeBuildAnswers(root, live);
