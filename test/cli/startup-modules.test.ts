/**
 * Start-up loads what the command needs, and nothing else: help loads no validator, kind, YAML
 * parser or backend (the build's `--help` and `--version` none of gatesync at all); `validate` of a small repository loads the
 * validators but none of the state backends, the HTTP client, the daemon, the sandbox,
 * notifications, the breaking-change classifier, git or the worker pool. Watched in a real
 * process of the sources through Node's module loader: a hook (registered with `--import`) writes
 * the URL of every module the process loads to a file (the bundle keeps that graph: each
 * `import()` of gatesync's own runs only when reached). The build's launcher is watched through
 * the `require`s its script makes: no backend, HTTP client, git or worker pool either.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { compiledIsFresh, tsxLoader } from "../helpers/cli.js";
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

/** The modules the CLI's sources load for `args` (under tsx: the module graph the bundle keeps, its `import()`s run when reached). */
async function loadedBy(args: string[]): Promise<{ code: number; stdout: string; urls: string[] }> {
  const dir = await tempRepo({ "hooks.mjs": hooks });
  const out = path.join(dir, "loaded.txt");
  await writeFile(out, "");
  const register = path.join(dir, "register.mjs");
  await writeFile(
    register,
    `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(path.join(dir, "hooks.mjs")).href)}, { data: { out: ${JSON.stringify(out)} } });\n`,
  );
  const run = await node(["--import", pathToFileURL(register).href, "--import", tsxLoader, path.join(projectRoot, "test/helpers/run-cli.ts"), ...args], dir);
  return { ...run, urls: (await readFile(out, "utf8")).split("\n").filter((u) => u !== "") };
}

/**
 * What the build's launcher requires for `args`: every `require` the process makes (the CLI's
 * script requires the packages left outside it, and Node's own modules), through a preload.
 */
async function requiredBy(args: string[]): Promise<{ code: number; stdout: string; required: string[] }> {
  const dir = await tempRepo({});
  const out = path.join(dir, "required.txt");
  const preload = path.join(dir, "preload.cjs");
  await writeFile(
    preload,
    `const Module = require("node:module");\nconst { appendFileSync } = require("node:fs");\nconst load = Module._load;\nModule._load = function (request, ...rest) {\n  appendFileSync(${JSON.stringify(out)}, request + "\\n");\n  return load.call(this, request, ...rest);\n};\n`,
  );
  await writeFile(out, "");
  const run = await node(["--require", preload, path.join(projectRoot, "bin/gatesync.js"), ...args], dir);
  return { ...run, required: (await readFile(out, "utf8")).split("\n").filter((r) => r !== "") };
}

async function node(args: string[], cwd: string): Promise<{ code: number; stdout: string }> {
  const child = spawn(process.execPath, args, { cwd, env: { ...process.env, NO_COLOR: "1" }, stdio: ["ignore", "pipe", "inherit"] });
  let stdout = "";
  child.stdout.on("data", (b: Buffer) => (stdout += b.toString()));
  const code = await new Promise<number>((resolve) => child.on("close", (c) => resolve(c ?? -1)));
  return { code, stdout };
}

/** The packages of `heavy` (by name) a list of `require` requests holds. */
const heavyPackages = (required: readonly string[]): string[] =>
  ["better-sqlite3", "pg", "undici", "piscina", "simple-git", "chokidar", "prom-client", "api-smart-diff", "@opentelemetry/sdk-trace-node"].filter((p) =>
    required.includes(p),
  );

const loadedOf = (urls: readonly string[], watched: ReadonlyArray<readonly [string, RegExp]>): string[] =>
  watched.filter(([, pattern]) => urls.some((u) => pattern.test(u))).map(([name]) => name);

describe("start-up loads only what the command needs", { timeout: 120_000 }, () => {
  it.each([["--help"], ["--version"], ["help", "validate"]])("%s loads no validator, kind, backend, HTTP client, daemon or sandbox", async (...args) => {
    const run = await loadedBy(args);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(args[0] === "--version" ? /^\d+\.\d+\.\d+/ : /Usage: gatesync/);
    // the hook saw the process start: the CLI's own entry point is among what it recorded
    expect(run.urls.some((u) => u.endsWith("/src/cli.ts"))).toBe(true);
    expect(loadedOf(run.urls, [...heavy, ...validation])).toEqual([]);
  });

  it.skipIf(!compiledIsFresh)(
    "the build: --help runs none of gatesync (bin/gatesync.js answers it); help and validate require no backend, HTTP client, git or worker pool",
    async () => {
      const answered = await requiredBy(["--help"]);
      expect(answered.stdout).toMatch(/Usage: gatesync/);
      expect(answered.required.filter((r) => r.includes("script-loader") || r.includes("v8-flags"))).toEqual([]);
      for (const args of [["help"], ["validate", path.join(projectRoot, "examples/config")]]) {
        const run = await requiredBy(args);
        expect(run.code).toBe(0);
        // the watch sees the CLI's script loaded, and the requires it makes
        expect(run.required).toContain("./script-loader.js");
        expect(run.required).toContain("node:fs");
        expect(heavyPackages(run.required)).toEqual([]);
      }
      // and sees a backend when one is required
      const repo = await tempRepo({
        "gatesync.yaml":
          "apiVersion: gatesync.dev/v1\nkind: GatesyncConfig\nsource: { directory: ./config }\nstate: { backend: sqlite, path: ./state.db }\ntargets: {}\n",
        "config/k.yaml": "apiVersion: gatesync.dev/v1\nkind: OrgKey\nmetadata: { name: k }\nspec: { keyId: k }\n",
        "state.db": "",
      });
      expect(heavyPackages((await requiredBy(["state", "list", "-c", path.join(repo, "gatesync.yaml")])).required)).toContain("better-sqlite3");
    },
  );

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
