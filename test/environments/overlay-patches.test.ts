/**
 * Overlay patches per environment (docs/user/environments.md): a JSON merge patch changes a
 * resource (null removes a field), `$patch: delete` leaves one out, a document naming no
 * resource adds it; inline patches take the environment's values; mistakes are located in the
 * patch file.
 */
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { doc } from "../helpers/plan.js";
import { positionOf, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

const keys = [doc("OrgKey", "a", "keyId: org-a\nrate: 5\nper: 60\nalias: the a key"), doc("OrgKey", "b", "keyId: org-b\nrate: 7")].join("---\n");

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
${doc("OrgKey", "c", "keyId: org-c\nrate: ${var:c_rate}")}`;

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
  it("change, remove a field, leave out and add resources per environment, with its values", async () => {
    const dir = await tempRepo({ "gatesync.yaml": config(), "config/keys.yaml": keys, "overlays/staging.yaml": overlay });
    const { staging, production } = await plans(dir);
    expect(staging!.changes.map((c) => c.id).sort()).toEqual(["OrgKey/a", "OrgKey/c"]);
    expect(fieldsOf(staging!.changes, "OrgKey/a")).toMatchObject({ rate: 50, per: 60 });
    expect(fieldsOf(staging!.changes, "OrgKey/a")).not.toHaveProperty("alias");
    expect(fieldsOf(staging!.changes, "OrgKey/c")).toMatchObject({ rate: 3 });
    expect(production!.changes.map((c) => c.id).sort()).toEqual(["OrgKey/a", "OrgKey/b"]);
    expect(fieldsOf(production!.changes, "OrgKey/a")).toMatchObject({ rate: 500, alias: "the a key" });
  });

  it("locates a delete of a resource the repository does not have, and an added resource that is not one", async () => {
    const broken = overlay.replace("metadata: { name: b }", "metadata: { name: zz }").replace("rate: ${var:c_rate}", "rate: fast");
    const dir = await tempRepo({ "gatesync.yaml": config(), "config/keys.yaml": keys, "overlays/staging.yaml": broken });
    const r = await runCli(["validate", "-c", path.join(dir, "gatesync.yaml"), "--env", "staging"], { GW: "k" });
    expect(r.code).toBe(1);
    const del = positionOf(broken, "kind: OrgKey\nmetadata: { name: zz }");
    expect(r.stdout).toContain(`error[PATCH_INVALID] ../overlays/staging.yaml:${del.line}:${del.column} OrgKey/zz`);
    const fast = positionOf(broken, "fast");
    expect(r.stdout).toMatch(new RegExp(`error\\[SCHEMA_VIOLATION\\] \\.\\./overlays/staging\\.yaml:${fast.line}:${fast.column} OrgKey/c spec\\.rate`));
    expect(r.stdout).toContain("VALUE_UNUSED");
  });

  it("refuses a patch file that does not exist, naming where gatesync.yaml names it", async () => {
    const dir = await tempRepo({ "gatesync.yaml": config(), "config/keys.yaml": keys });
    const r = await runCli(["validate", "-c", path.join(dir, "gatesync.yaml"), "--env", "staging"], { GW: "k" });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("PATCH_INVALID");
    expect(r.stdout).toContain("environments.staging.patches[0]: patch file overlays/staging.yaml does not exist");
  });
});
