/**
 * The bundle `bin/gatesync.js` runs (dist/bundle/, made by `npm run build`) answers as the
 * sources do — the precompiled validators, `yaml` and `commander` included, which it loads as scripts with
 * a V8 code cache — and those caches are ones V8 accepts in a process started as the launcher starts (a
 * cache made under other V8 flags is refused: still correct, but no faster). Only while the
 * build is at least as new as the sources: after an edit, the tests run the sources.
 */
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { readFile, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { compiledIsFresh, tsxLoader } from "../helpers/cli.js";
import { projectRoot, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

async function node(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; stdout: string }> {
  const child = spawn(process.execPath, args, { cwd: projectRoot, env, stdio: ["ignore", "pipe", "inherit"] });
  let stdout = "";
  child.stdout.on("data", (b: Buffer) => (stdout += b.toString()));
  const code = await new Promise<number>((resolve) => child.on("close", (c) => resolve(c ?? -1)));
  return { code, stdout };
}

const oas = (version: string, extra: string): string =>
  `openapi: ${version}\ninfo: { title: t, version: '1' }\npaths:\n  /things:\n    get:\n      responses:\n        '200': { descriptoin: ok }\n${extra}`;

describe.skipIf(!compiledIsFresh)("the bundle", { timeout: 120_000 }, () => {
  it("reports what the sources report: schema, OpenAPI 3.0 and 3.1, and gateway-extension findings", async () => {
    const repo = await tempRepo({
      "config/keys.yaml": "apiVersion: gatesync.dev/v1\nkind: OrgKey\nmetadata: { name: k }\nspec: { keyId: k, rate: fast }\n",
      "config/apis/a.yaml": "apiVersion: gatesync.dev/v1\nkind: ApiDefinition\nmetadata: { name: a }\nspec: { apiId: a, definitionFile: ../openapi/a.yaml }\n",
      "config/apis/b.yaml": "apiVersion: gatesync.dev/v1\nkind: ApiDefinition\nmetadata: { name: b }\nspec: { apiId: b, definitionFile: ../openapi/b.yaml }\n",
      "config/openapi/a.yaml": oas("3.0.3", ""),
      "config/openapi/b.yaml": oas("3.1.0", "x-gw-api-gateway: { upstream: { url: 42 } }\n"),
    });
    const args = ["validate", path.join(repo, "config"), "--format", "json"];
    const bundled = await node([path.join(projectRoot, "bin/gatesync.js"), ...args]);
    const sources = await node(["--import", tsxLoader, path.join(projectRoot, "test/helpers/run-cli.ts"), ...args]);
    expect(bundled.code).toBe(1);
    // each kind of finding is there: the comparison below compares something
    expect(bundled.stdout).toContain("spec.rate");
    expect(bundled.stdout).toContain("descriptoin");
    expect(bundled.stdout).toContain("x-gw-api-gateway");
    expect(bundled).toEqual(sources);
  });

  it("carries code caches of its scripts (the compiled validators, yaml, commander) that V8 accepts in a process started as bin/gatesync.js starts", async () => {
    const dir = path.join(projectRoot, "dist/bundle/compiled");
    const scripts = [...(await readdir(dir)).filter((f) => f.endsWith(".cjs")).map((f) => path.join(dir, f)), path.join(projectRoot, "dist/bundle/cli.cjs")];
    const check = [
      `import { readFileSync } from "node:fs";`,
      `import { Script } from "node:vm";`,
      `import { applyStartupFlags } from ${JSON.stringify(pathToFileURL(path.join(projectRoot, "bin/v8-flags.js")).href)};`,
      `applyStartupFlags();`,
      `const refused = ${JSON.stringify(scripts)}.filter((f) => new Script(readFileSync(f, "utf8"), { filename: f, cachedData: readFileSync(f + ".v8cache") }).cachedDataRejected !== false);`,
      `process.stdout.write(JSON.stringify(refused));`,
    ].join("\n");
    const { NODE_OPTIONS: _, ...env } = process.env;
    const run = await node(["--input-type=module", "-e", check], env);
    expect(scripts.map((f) => path.basename(f)).sort()).toEqual([
      "cli.cjs",
      "commander.cjs",
      "gatesync-schemas.cjs",
      "openapi-3-0.cjs",
      "openapi-3-1.cjs",
      "x-gw-api-gateway.cjs",
      "yaml.cjs",
    ]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual([]);
  });
  it("is one CommonJS script for the CLI, which imports nothing dynamically (a function from its cache would have no loader for it)", async () => {
    const cli = await readFile(path.join(projectRoot, "dist/bundle/cli.cjs"), "utf8");
    // the lazily imported modules are there, as functions run on their first import
    expect(cli).toContain('"dist/cli/commands/validate/action.js"()');
    expect(cli.match(/\bimport\("/g) ?? []).toEqual([]);
    // and a command reaching a package it used to import dynamically runs: the OpenTelemetry SDK, with tracing on, exports its span
    const posted: string[] = [];
    const collector = createServer((req, res) => {
      posted.push(req.url ?? "");
      req.resume().on("end", () => res.end("{}"));
    });
    await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve));
    try {
      const repo = await tempRepo({ "config/k.yaml": "apiVersion: gatesync.dev/v1\nkind: OrgKey\nmetadata: { name: k }\nspec: { keyId: k }\n" });
      const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
      const traced = await node([path.join(projectRoot, "bin/gatesync.js"), "validate", path.join(repo, "config")], {
        ...process.env,
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      });
      expect(traced.code).toBe(0);
      expect(traced.stdout).toContain("valid: 1 resources");
      expect(posted).toContain("/v1/traces");
    } finally {
      collector.close();
    }
  });

  it("holds the precompiled validators as scripts of their own: no chunk bundles their modules (compiled afresh in every process, without a cache)", async () => {
    const meta = JSON.parse(await readFile(path.join(projectRoot, "dist/bundle/meta.json"), "utf8")) as {
      outputs: Record<string, { inputs: Record<string, unknown> }>;
    };
    const inputs = Object.values(meta.outputs).flatMap((o) => Object.keys(o.inputs));
    // the chunks hold the modules that import the validators (the list can see dist/validate/)
    expect(inputs).toContain("dist/validate/document/openapi-validator.js");
    expect(inputs.filter((i) => i.startsWith("dist/validate/compiled/"))).toEqual([]);
  });
  it("prints the help the sources print without loading child_process, which commander requires for what gatesync never runs", async () => {
    const repo = await tempRepo({});
    const list = path.join(repo, "builtins.txt");
    const preload = path.join(repo, "preload.cjs");
    // Node's own modules the process loaded, as it exits
    await writeFile(preload, `process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(list)}, process.moduleLoadList.join("\\n")));\n`);
    // `help`: the bundle's own answer (the launcher answers `--help` from the build's record: launcher-answers.test.ts)
    const bundled = await node([path.join(projectRoot, "bin/gatesync.js"), "help"], { ...process.env, NODE_OPTIONS: `--require ${preload}` });
    const sources = await node(["--import", tsxLoader, path.join(projectRoot, "test/helpers/run-cli.ts"), "help"]);
    expect(bundled.code).toBe(0);
    expect(bundled.stdout).toContain("Usage: gatesync");
    expect(bundled).toEqual(sources);
    const builtins = (await readFile(list, "utf8")).split("\n");
    // the list holds Node's modules (the watch can see one)
    expect(builtins).toContain("NativeModule fs");
    expect(builtins.filter((m) => /^NativeModule (child_process|dgram)$/.test(m))).toEqual([]);
  });
  it("loads `yaml`, when a finding needs its position, as its script: none of yaml's CommonJS files is compiled", async () => {
    const repo = await tempRepo({
      "config/hook.yaml":
        "apiVersion: gatesync.dev/v1\nkind: PortalWebhook\nmetadata: { name: h }\nspec:\n  Name: h\n  URL: ${env:GATESYNC_TEST_SHORT_HOOK}\n  Method: POST\n  Events: [ApplicationRegistered]\n",
    });
    // every CommonJS file the process compiles, written to a list
    const list = path.join(repo, "compiled.txt");
    const preload = path.join(repo, "preload.cjs");
    await writeFile(
      preload,
      `const Module = require("node:module");\nconst { appendFileSync } = require("node:fs");\nconst compile = Module.prototype._compile;\nModule.prototype._compile = function (content, filename) {\n  appendFileSync(${JSON.stringify(list)}, filename + "\\n");\n  return compile.call(this, content, filename);\n};\n`,
    );
    await writeFile(list, "");
    const run = await node([path.join(projectRoot, "bin/gatesync.js"), "validate", path.join(repo, "config")], {
      ...process.env,
      GATESYNC_TEST_SHORT_HOOK: "short",
      NODE_OPTIONS: `--require ${preload}`,
    });
    // the warning is located: the full parse ran
    expect(run.stdout).toMatch(/hook\.yaml:6:\d+ PortalWebhook\/h spec\.URL: the value of \$\{env:GATESYNC_TEST_SHORT_HOOK\} is shorter than 8 characters/);
    const compiled = (await readFile(list, "utf8")).split("\n").filter((f) => f !== "");
    // the hook saw CommonJS being compiled (the watch can see a file of yaml's)
    expect(compiled.length).toBeGreaterThan(0);
    expect(compiled.filter((f) => f.includes(`${path.sep}node_modules${path.sep}yaml${path.sep}`))).toEqual([]);
  });
});
