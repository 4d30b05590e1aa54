/**
 * Overlay patches per environment (docs/user/environments.md): a JSON merge patch changes a
 * resource (null removes a field), `$patch: delete` leaves one out, a document naming no
 * resource is an error (never a new resource); inline patches take the environment's values;
 * mistakes are located in the patch (its file, or gatesync.yaml) and name the environment.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { doc } from "../helpers/plan.js";
import { committedRepo } from "../helpers/git-repo.js";
import { positionOf, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

const keys = [
  doc("OrgKey", "a", "keyId: org-a\nrate: 5\nper: 60\nalias: the a key"),
  doc("OrgKey", "b", "keyId: org-b\nrate: 7"),
  doc("OrgKey", "c", "keyId: org-c\nrate: 1"),
].join("---\n");

const overlay = `apiVersion: gatesync.dev/v1
kind: OrgKey
metadata: { name: a }
spec:
  rate: 50
  alias: null
---
kind: OrgKey
metadata: { name: b }
$patch: delete
---
kind: OrgKey
metadata: { name: c }
spec:
  rate: \${var:c_rate}`;

const config = (extra = ""): string => `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
targets:
  gateway: { url: "http://127.0.0.1:9", credentialEnv: GW }
environments:
  staging:
    values: { c_rate: 3 }
    patches: [overlays/staging.yaml]
  production:
    values: { prod_rate: 500 }
    patches:
      - { kind: OrgKey, metadata: { name: a }, spec: { rate: "\${var:prod_rate}" } }
${extra}`;

interface JsonChange {
  readonly id: string;
  readonly fields: ReadonlyArray<{ readonly path: string; readonly after?: unknown }>;
}

async function plans(dir: string): Promise<Record<string, { changes: JsonChange[] }>> {
  const r = await runCli(["plan", "-c", path.join(dir, "gatesync.yaml"), "--format", "json"], { GW: "k" });
  expect(r.stderr).toBe("");
  return (JSON.parse(r.stdout) as { environments: Record<string, { changes: JsonChange[] }> }).environments;
}

const fieldsOf = (changes: readonly JsonChange[], id: string): Record<string, unknown> =>
  Object.fromEntries((changes.find((c) => c.id === id)?.fields ?? []).map((f) => [f.path, f.after]));

describe("overlay patches", () => {
  it("change, remove a field and leave out resources per environment, with its values", async () => {
    const dir = await tempRepo({ "gatesync.yaml": config(), "config/keys.yaml": keys, "overlays/staging.yaml": overlay });
    const { staging, production } = await plans(dir);
    expect(staging!.changes.map((c) => c.id).sort()).toEqual(["OrgKey/a", "OrgKey/c"]);
    expect(fieldsOf(staging!.changes, "OrgKey/a")).toMatchObject({ rate: 50, per: 60 });
    expect(fieldsOf(staging!.changes, "OrgKey/a")).not.toHaveProperty("alias");
    expect(fieldsOf(staging!.changes, "OrgKey/c")).toMatchObject({ rate: 3 });
    expect(production!.changes.map((c) => c.id).sort()).toEqual(["OrgKey/a", "OrgKey/b", "OrgKey/c"]);
    expect(fieldsOf(production!.changes, "OrgKey/a")).toMatchObject({ rate: 500, alias: "the a key" });
    expect(fieldsOf(production!.changes, "OrgKey/c")).toMatchObject({ rate: 1 });
  });

  it("refuses a patch naming no resource (a rename the patch missed, a delete of nothing), in the patch, naming the environment and the nearest resource", async () => {
    // OrgKey/c renamed to c-renamed in the repository, its patch left naming c; a delete of zz
    const renamed = keys.replace("name: c", "name: c-renamed");
    const broken = overlay.replace("metadata: { name: b }", "metadata: { name: zz }");
    const { dir } = await committedRepo({ "gatesync.yaml": config(), "config/keys.yaml": renamed, "overlays/staging.yaml": broken });
    const r = await runCli(["validate", "-c", path.join(dir, "gatesync.yaml"), "--env", "staging"], { GW: "k" });
    expect(r.code).toBe(1);
    const del = positionOf(broken, "kind: OrgKey\nmetadata: { name: zz }");
    expect(r.stdout).toContain(
      `error[PATCH_INVALID] overlays/staging.yaml:${del.line}:${del.column} OrgKey/zz: environment staging: the patch leaving out OrgKey/zz names no resource`,
    );
    const c = positionOf(broken, "kind: OrgKey\nmetadata: { name: c }");
    expect(r.stdout).toContain(
      `error[PATCH_INVALID] overlays/staging.yaml:${c.line}:${c.column} OrgKey/c: environment staging: the patch of OrgKey/c names no resource of the repository; to add one, write it whole in a resource file`,
    );
    expect(r.stdout).toContain("hint: did you mean OrgKey/c-renamed?");
    // not a second, incomplete resource
    expect(r.stdout).not.toContain("SCHEMA_VIOLATION");
    expect(r.stdout).not.toContain("keyId");
    const plan = await runCli(["plan", "-c", path.join(dir, "gatesync.yaml"), "--env", "staging"], { GW: "k" });
    expect(plan.code).toBe(1);
    expect(plan.stdout + plan.stderr).not.toContain("+ OrgKey/c ");
    // the hints followed: the patch renamed as the resource was, and a resource named as the patch's kind and name say
    const followed = broken.replace("metadata: { name: c }", "metadata: { name: c-renamed }").replace("metadata: { name: zz }", "metadata: { name: b }");
    await writeFile(path.join(dir, "overlays/staging.yaml"), followed);
    const valid = await runCli(["validate", "-c", path.join(dir, "gatesync.yaml"), "--env", "staging"], { GW: "k" });
    expect(valid.code, valid.stdout).toBe(0);
    const { staging } = await plans(dir);
    expect(fieldsOf(staging!.changes, "OrgKey/c-renamed")).toMatchObject({ rate: 3 });
  });

  it("locates a finding about what a patch set in the patch file, or in gatesync.yaml for an inline patch, naming the environment", async () => {
    const fast = overlay.replace("rate: 50", "rate: fast");
    const withInline = config().replace('rate: "${var:prod_rate}"', "rate: high");
    const { dir } = await committedRepo({ "gatesync.yaml": withInline, "config/keys.yaml": keys, "overlays/staging.yaml": fast });
    const r = await runCli(["validate", "-c", path.join(dir, "gatesync.yaml")], { GW: "k" });
    expect(r.code).toBe(1);
    const inFile = positionOf(fast, "fast");
    expect(r.stdout).toContain(
      `error[SCHEMA_VIOLATION] overlays/staging.yaml:${inFile.line}:${inFile.column} OrgKey/a spec.rate: environment staging: must be number`,
    );
    const inline = positionOf(withInline, "high");
    expect(r.stdout).toContain(
      `error[SCHEMA_VIOLATION] gatesync.yaml:${inline.line}:${inline.column} OrgKey/a spec.rate: environment production: must be number`,
    );
    // the resource file is right: nothing is located in it
    expect(r.stdout).not.toContain("config/keys.yaml");
    // the unused value is named from the repository's root too
    expect(r.stdout).toContain("warning[VALUE_UNUSED] gatesync.yaml environments.production.values.prod_rate");
  });

  it("locates what a patch sets under a `__proto__` key like any other member (a commit is an attacker's input)", async () => {
    const hostile = `kind: OrgKey\nmetadata: { name: a }\nspec:\n  __proto__: { polluted: true }\n  rate: fast\n`;
    const { dir } = await committedRepo({ "gatesync.yaml": config(), "config/keys.yaml": keys, "overlays/staging.yaml": hostile });
    const r = await runCli(["validate", "-c", path.join(dir, "gatesync.yaml"), "--env", "staging", "--format", "json"], { GW: "k" });
    expect(r.code).toBe(1);
    const found = (JSON.parse(r.stdout) as { diagnostics: Array<{ file?: string; line?: number; path?: string; message: string }> }).diagnostics;
    const rate = positionOf(hostile, "fast");
    expect(found).toContainEqual(expect.objectContaining({ file: "overlays/staging.yaml", line: rate.line, path: "spec.rate" }));
    expect(found.filter((d) => d.file === "config/keys.yaml")).toEqual([]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("refuses a patch file that does not exist, naming where gatesync.yaml names it", async () => {
    const dir = await tempRepo({ "gatesync.yaml": config(), "config/keys.yaml": keys });
    const r = await runCli(["validate", "-c", path.join(dir, "gatesync.yaml"), "--env", "staging"], { GW: "k" });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("PATCH_INVALID");
    expect(r.stdout).toContain("environments.staging.patches[0]: patch file overlays/staging.yaml does not exist");
  });
});
