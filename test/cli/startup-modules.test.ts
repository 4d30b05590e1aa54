/**
 * Start-up loads what the command needs, and nothing else: help loads no validator, kind, YAML
 * parser or backend (the build's `--help` and `--version` none of gatesync at all); `validate` of a small repository loads the
 * validators but none of the state backends, the HTTP client, the daemon, the sandbox,
 * notifications, the breaking-change classifier, git or the worker pool. Watched in a real
 * process through Node's module loader: a hook (registered with `--import`) writes the URL of
 * every module the process loads to a file; a chunk of the bundle stands for the modules the
 * build put into it.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { compiledIsFresh, spawnCli } from "../helpers/cli.js";
import { projectRoot, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

/** The loader hook: appends each loaded module's URL to the file it was given. */
const hooks = `import { appendFileSync } from "node:fs";
let out;
export function initialize(data) { out = data.out; }
export async function load(url, context, next) {
  appendFileSync(out, url + "\\n");
  return next(url, context);
}
`;

/** What a command that neither plans nor applies must not load (src/ under tsx, dist/ compiled). */
const heavy: ReadonlyArray<readonly [string, RegExp]> = [
  ["the SQLite state backend", /\/node_modules\/better-sqlite3\//],
  ["the PostgreSQL state backend", /\/node_modules\/pg\//],
  ["the HTTP client", /\/node_modules\/undici\//],
  ["the worker pool", /\/node_modules\/piscina\//],
  ["git", /\/node_modules\/simple-git\//],
  ["the file watcher", /\/node_modules\/chokidar\//],
  ["metrics", /\/node_modules\/prom-client\//],
  ["the OpenAPI diff", /\/node_modules\/api-smart-diff\//],
  ["the state", /\/(src|dist)\/record\//],
  ["the daemon", /\/(src|dist)\/daemon\//],
  ["the sandbox", /\/(src|dist)\/sandbox\/(?!body-limit)/],
  ["notifications", /\/(src|dist)\/notify\//],
  ["the breaking-change classifier", /\/(src|dist)\/plan\/breaking\//],
  ["the apply", /\/(src|dist)\/apply\//],
  // tracing is off unless configured: its SDK loads only then
  ["the OpenTelemetry SDK", /\/node_modules\/@opentelemetry\//],
];

/** What `--help` and `--version` need even less: validators, kinds and the YAML parser load on first use. */
const validation: ReadonlyArray<readonly [string, RegExp]> = [
  ["the validators", /\/(src|dist)\/validate\//],
  ["the kinds", /\/(src|dist)\/kinds\//],
  // the value-only parse (js-yaml); `yaml` itself loads where a file needs the full parse or a finding a position
  ["the YAML parser", /\/node_modules\/(js-)?yaml\//],
  ["ajv", /\/node_modules\/ajv/],
];

async function loadedBy(args: string[]): Promise<{ code: number; stdout: string; urls: string[] }> {
  const dir = await tempRepo({ "hooks.mjs": hooks });
  const out = path.join(dir, "loaded.txt");
  await writeFile(out, "");
  const register = path.join(dir, "register.mjs");
  await writeFile(
    register,
    `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(path.join(dir, "hooks.mjs")).href)}, { data: { out: ${JSON.stringify(out)} } });\n`,
  );
  const run = await spawnCli(args, { env: { NODE_OPTIONS: `--import ${pathToFileURL(register).href}`, NO_COLOR: "1" }, cwd: dir });
  const urls = (await readFile(out, "utf8")).split("\n").filter((u) => u !== "");
  return { code: run.code, stdout: run.stdout, urls: (await Promise.all(urls.map(modulesIn))).flat() };
}

/**
 * The modules a loaded URL holds: itself, or, for a chunk of the bundle bin/gatesync.js runs,
 * the files the build put into it (dist/bundle/meta.json, esbuild's account of every chunk).
 */
async function modulesIn(url: string): Promise<string[]> {
  if (!url.startsWith("file:")) return [url];
  const file = fileURLToPath(url);
  const bundle = path.join(projectRoot, "dist/bundle");
  if (path.dirname(file) !== bundle) return [url];
  const meta = JSON.parse(await readFile(path.join(bundle, "meta.json"), "utf8")) as { outputs: Record<string, { inputs: Record<string, unknown> }> };
  const inputs = meta.outputs[path.relative(projectRoot, file)]?.inputs;
  if (inputs === undefined) throw new Error(`${url} is not in the bundle's meta.json`);
  return Object.keys(inputs).map((input) => pathToFileURL(inBundle(input)).href);
}

/** The file an input of the bundle stands for: a file, or the script a package or compiled validators' module is loaded as (scripts/bundle/). */
function inBundle(input: string): string {
  const [namespace, name] = input.split(":");
  if (namespace === "package-script" || namespace === "lazy-package-script") return path.join(projectRoot, "node_modules", name!, "(script)");
  if (namespace === "compiled-script") return path.join(projectRoot, "dist/validate/compiled", `${name}.js`);
  return path.resolve(projectRoot, input);
}

const loadedOf = (urls: readonly string[], watched: ReadonlyArray<readonly [string, RegExp]>): string[] =>
  watched.filter(([, pattern]) => urls.some((u) => pattern.test(u))).map(([name]) => name);

describe("start-up loads only what the command needs", { timeout: 120_000 }, () => {
  // `help` is commander's command: the bundle answers it (the launcher answers `--help` from the build: below)
  it.each([["help"], ["help", "validate"]])("%s loads no validator, kind, backend, HTTP client, daemon or sandbox", async (...args) => {
    const run = await loadedBy(args);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/Usage: gatesync/);
    // the hook saw the process start: the CLI's own entry point is among what it recorded
    expect(run.urls.some((u) => /\/(src|dist)\/cli\.(ts|js)$/.test(u))).toBe(true);
    expect(loadedOf(run.urls, [...heavy, ...validation])).toEqual([]);
  });

  it.skipIf(!compiledIsFresh)("--help and --version of the build load none of gatesync's modules (bin/gatesync.js answers them)", async () => {
    for (const flag of ["--help", "--version"]) {
      const run = await loadedBy([flag]);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(flag === "--help" ? /Usage: gatesync/ : /^\d+\.\d+\.\d+/);
      expect(run.urls.filter((u) => u.startsWith(pathToFileURL(projectRoot).href))).toEqual([pathToFileURL(path.join(projectRoot, "bin/gatesync.js")).href]);
    }
    // the watch sees the bundle when it is loaded
    expect((await loadedBy(["help"])).urls.some((u) => u.endsWith("/dist/cli.js"))).toBe(true);
  });

  it("validate of a small repository loads the validators, and no backend, HTTP client, daemon, sandbox, notifications, classifier, git or worker pool", async () => {
    const repo = await tempRepo({
      "config/k.yaml": "apiVersion: gatesync.dev/v1\nkind: OrgKey\nmetadata: { name: k }\nspec: { keyId: k }\n",
      "config/api.yaml":
        "apiVersion: gatesync.dev/v1\nkind: ApiDefinition\nmetadata: { name: a }\nspec:\n  apiId: a\n  definition: { openapi: 3.0.3, info: { title: a, version: '1' }, paths: {} }\n",
    });
    const run = await loadedBy(["validate", path.join(repo, "config")]);
    expect(run.stdout).toContain("valid: 2 resources in 2 files");
    expect(run.code).toBe(0);
    // what it needs is loaded: the watch sees what matters
    expect(loadedOf(run.urls, validation)).toEqual(expect.arrayContaining(["the validators", "the kinds", "the YAML parser"]));
    expect(loadedOf(run.urls, heavy)).toEqual([]);
  });

  it("state list loads the state backend it reads (the watch tells a loaded backend from none)", async () => {
    const repo = await tempRepo({
      "gatesync.yaml":
        "apiVersion: gatesync.dev/v1\nkind: GatesyncConfig\nsource: { directory: ./config }\nstate: { backend: sqlite, path: ./state.db }\ntargets: {}\n",
      "config/k.yaml": "apiVersion: gatesync.dev/v1\nkind: OrgKey\nmetadata: { name: k }\nspec: { keyId: k }\n",
    });
    const run = await loadedBy(["state", "list", "-c", path.join(repo, "gatesync.yaml")]);
    expect(run.code).toBe(0);
    // the SQLite backend's modules; its driver, better-sqlite3, is required (CommonJS, which these
    // hooks do not see) only when a state file is opened — this state was never written
    expect(run.urls.some((u) => /\/(src|dist)\/record\/sqlite\//.test(u))).toBe(true);
    expect(loadedOf(run.urls, heavy)).toContain("the state");
  });
});
