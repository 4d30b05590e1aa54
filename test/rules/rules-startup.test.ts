/**
 * Start-up: a command whose config names no rulesets loads nothing of Spectral (its modules
 * take about a second to load); one that names them does. Watched in a real process, through
 * Node's module loader.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { spawnCli } from "../helpers/cli.js";
import { projectRoot, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

/** A preload that prints, at exit, every Spectral module the process loaded. */
const watcher = `const Module = require("node:module");
const seen = new Set();
const load = Module._load;
Module._load = function (request, ...rest) { if (String(request).includes("@stoplight/spectral")) seen.add(String(request)); return load.call(this, request, ...rest); };
process.on("exit", () => process.stderr.write("spectral modules: " + JSON.stringify([...seen]) + "\\n"));
`;

describe("start-up without rules", { timeout: 120_000 }, () => {
  it("validate loads no Spectral module when gatesync.yaml names no ruleset, and loads it when it does", async () => {
    const dir = await tempRepo({
      "gatesync.yaml": "apiVersion: gatesync.dev/v1\nkind: GatesyncConfig\nsource: { directory: ./config }\ntargets: {}\n",
      "ruled.yaml": "apiVersion: gatesync.dev/v1\nkind: GatesyncConfig\nsource: { directory: ./config }\ntargets: {}\nrules: { resources: rules.yaml }\n",
      "rules.yaml": "rules:\n  team-label: { given: $.metadata, then: { field: labels.team, function: truthy } }\n",
      "config/k.yaml": "apiVersion: gatesync.dev/v1\nkind: OrgKey\nmetadata: { name: k }\nspec: { keyId: k }\n",
    });
    const preload = path.join(dir, "watch-spectral.cjs");
    await writeFile(preload, watcher);
    const env = { NODE_OPTIONS: `--require ${preload}`, NO_COLOR: "1" };
    const plain = await spawnCli(["validate", "--config", path.join(dir, "gatesync.yaml")], { env, cwd: projectRoot });
    expect(plain.code).toBe(0);
    expect(plain.stderr).toContain("spectral modules: []");
    const ruled = await spawnCli(["validate", "--config", path.join(dir, "ruled.yaml")], { env, cwd: projectRoot });
    expect(ruled.stdout).toContain("warning[RULESET_VIOLATION team-label] k.yaml");
    expect(ruled.stderr).toMatch(/spectral modules: \[.*"@stoplight\/spectral-core"/);
  });
});
