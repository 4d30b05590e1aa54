/**
 * `gatesync plan --fail-on-breaking` as a merge-request job runs it: a real CLI process on a
 * copy of the examples whose state records the current petstore API.
 */
import { cp, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exampleSecrets } from "../helpers/apply.js";
import { runCli, spawnCli } from "../helpers/cli.js";
import { tableCells } from "../helpers/markdown.js";
import { projectRoot, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

let dir = "";
const spec = (): string => path.join(dir, "config/openapi/petstore.yaml");
const args = (...flags: string[]): string[] => ["plan", "--config", path.join(dir, "gatesync.yaml"), ...flags];
/** In this process (fast); the exit code 4 itself is checked on a real process below. */
const plan = async (...flags: string[]): ReturnType<typeof runCli> => runCli(args(...flags), exampleSecrets);

beforeAll(async () => {
  dir = await tempRepo();
  await cp(path.join(projectRoot, "examples"), dir, { recursive: true });
  // the state is the examples' own, in the copy: record the petstore API as applied
  const config = path.join(dir, "gatesync.yaml");
  await writeFile(config, (await readFile(config, "utf8")).replace("path: ../.gatesync/state.db", "path: ./state/state.db"));
  const accepted = await runCli(["state", "resolve", "ApiDefinition/petstore", "--accept", "--config", config], exampleSecrets);
  expect(accepted.stderr).toBe("");
});

describe("gatesync plan --fail-on-breaking", () => {
  it("exits 4 when an operation is removed, and still writes the plan with the breaking change on top", async () => {
    const original = await readFile(spec(), "utf8");
    const withoutPost = original.replace(/\n {4}post:[\s\S]*?(?=\n {2}\/pets\/\{petId\}:)/, "");
    expect(withoutPost).not.toBe(original);
    await writeFile(spec(), withoutPost);
    try {
      const r = await spawnCli(args("--format", "markdown", "--detailed-exitcode", "--fail-on-breaking"), { env: exampleSecrets });
      expect(r.code).toBe(4);
      expect(r.stderr).toContain("planned change is breaking (--fail-on-breaking): exit code 4");
      const row = tableCells(r.stdout).find((cells) => cells[1] === "ApiDefinition/petstore");
      expect(row?.[2]).toBe("update ⚠ breaking");
      expect(r.stdout).toContain("> **⚠ breaking**: 1 change takes something away from the API's callers or the key's holders: `ApiDefinition/petstore`.");
      expect(r.stdout).toContain('- `definition.paths["/pets"].post` — \\[Removed\\] operation POST /pets');
      // without the flag: changes, exit 2
      expect((await plan("--detailed-exitcode")).code).toBe(2);
      const json = JSON.parse((await plan("--format", "json")).stdout) as {
        changes: Array<{ id: string; breaking?: unknown[] }>;
        summary: { breaking: number };
      };
      expect(json.summary.breaking).toBe(1);
      expect(json.changes.find((c) => c.id === "ApiDefinition/petstore")?.breaking).toEqual([
        { path: 'definition.paths["/pets"].post', reason: "[Removed] operation POST /pets" },
      ]);
    } finally {
      await writeFile(spec(), original);
    }
  }, 120_000);

  it("exits as without the flag when the changes break nothing", async () => {
    const original = await readFile(spec(), "utf8");
    await writeFile(spec(), original.replace("summary: List all pets", "summary: List every pet"));
    try {
      const r = await plan("--detailed-exitcode", "--fail-on-breaking");
      expect(r.stderr).toBe("");
      expect(r.code).toBe(2);
      const row = r.stdout.split("\n").find((l) => l.includes("~ ApiDefinition/petstore  update  PATCH"));
      expect(row).toBeDefined();
      expect(row).not.toContain("⚠");
      expect(r.stdout).toContain("compatible: 1 annotation only");
      expect((await plan("--fail-on-breaking")).code).toBe(0);
    } finally {
      await writeFile(spec(), original);
    }
  });
});
