/**
 * Issue 30, points 4 and 5: an organisation key lives under the organisation's id (the gateway
 * finds an organisation's limits by its id), and its body is the whole published session —
 * every member production takes, `null` where production takes it, `oauth_keys` values strings.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { RepositoryValidator } from "../../src/validate/repository/repository-validator.js";
import type { Harness } from "../helpers/apply.js";
import { harness } from "../helpers/apply.js";
import { doc } from "../helpers/plan.js";
import { call, gw, testSandbox } from "../helpers/sandbox.js";
import { positionOf, projectRoot, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

const validator = new RepositoryValidator();
afterAll(removeTempRepos);
let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

async function validate(files: Record<string, string>): Promise<Awaited<ReturnType<RepositoryValidator["validate"]>>["diagnostics"]> {
  const dir = await tempRepo(files);
  return (await validator.validate({ root: dir })).diagnostics;
}

/** A session using every member the published schema lists, the JSON-RPC/MCP members and the nulls production takes. */
const fullSession = `keyId: acme
org_id: acme
alias: ACME
allowance: 10
rate: 10
per: 1
post_expiry_action: retain
post_expiry_grace_period: -1
smoothing: { enabled: true, threshold: 5, trigger: 0.8, step: 2, delay: 30 }
monitor: { trigger_limits: [80, 50] }
oauth_keys: { petstore-v1: client-a }
apply_policies: null
tags: null
meta_data: null
access_rights:
  petstore:
    api_id: petstore-v1
    allowance_scope: petstore
    allowed_urls:
      - methods: null
      - url: /pets
        methods: [GET]
    versions: null
    allowed_types: [{ name: Query, fields: [pets] }]
    restricted_types: null
    disable_introspection: true
    field_access_rights: [{ type_name: Query, field_name: pets, limits: { max_query_depth: 3 } }]
    endpoints: [{ path: /pets, methods: [{ name: GET, limit: { rate: 5, per: 1, smoothing: null } }] }]
    json_rpc_methods: [{ name: tools/call, limit: { rate: 1, per: 1 } }]
    json_rpc_methods_access_rights: { allowed: [tools/call], blocked: [] }
    mcp_primitives: [{ type: tool, name: search, limit: { rate: 1, per: 1 } }]
    mcp_access_rights: { tools: { allowed: [search] } }
    limit: { rate: 5, per: 1, max_query_depth: 4, quota_renews: 0, smoothing: { enabled: false } }`;

describe("an organisation key's id", () => {
  it("must be its organisation's id: a mismatch is a located validate error that says why, and following its hint passes", async () => {
    const text = doc("OrgKey", "acme", "keyId: org-acme\norg_id: acme\nrate: 5");
    const found = (await validate({ "k.yaml": text })).filter((d) => d.severity === "error");
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ file: "k.yaml", path: "spec.keyId", ...positionOf(text, "org-acme") });
    expect(found[0]!.message).toContain('not the organisation\'s id "acme"');
    expect(found[0]!.message).toContain("limit nothing");
    expect(found[0]!.hint).toMatch(/^set keyId: acme /);
    const fixed = text.replace("keyId: org-acme", found[0]!.hint!.match(/^set (keyId: \S+)/)![1]!);
    expect((await validate({ "k.yaml": fixed })).filter((d) => d.severity === "error")).toEqual([]);
  });

  it("is the organisation's id in the examples and in `gatesync init`'s templates", async () => {
    const { resourceTemplates } = await import("../../src/init/templates.js");
    const texts = [
      await readFile(path.join(projectRoot, "examples/config/gateway/org-keys.yaml"), "utf8"),
      ...Object.values(resourceTemplates).filter((t) => t.includes("kind: OrgKey")),
    ];
    const keys = texts
      .flatMap((t) => parseAllDocuments(t).map((d) => d.toJS() as { kind?: string; spec?: { keyId?: string; org_id?: string } }))
      .filter((d) => d.kind === "OrgKey");
    expect(keys.length).toBeGreaterThanOrEqual(3);
    for (const k of keys) expect(k.spec?.keyId).toBe(k.spec?.org_id);
  });
});

describe("an organisation key's session", () => {
  it("takes every member of the published session, the JSON-RPC/MCP members and production's nulls, and the sandbox stores them", async () => {
    const files = { "k.yaml": doc("OrgKey", "acme", fullSession) };
    expect((await validate(files)).filter((d) => d.severity === "error")).toEqual([]);
    h = await harness({ files, batch: false });
    const { summary } = await h.apply();
    expect(summary.failed).toEqual([]);
    expect(h.sandbox.inspect.store.orgKeys.get("acme")!.session).toMatchObject({
      post_expiry_action: "retain",
      post_expiry_grace_period: -1,
      access_rights: {
        petstore: {
          allowed_urls: [{ methods: null }, { url: "/pets", methods: ["GET"] }],
          mcp_access_rights: { tools: { allowed: ["search"] } },
          limit: { max_query_depth: 4 },
        },
      },
    });
  });

  it("refuses oauth_keys values that are not strings, at the value; the sandbox answers 400 as production does", async () => {
    const text = doc("OrgKey", "acme", "keyId: acme\noauth_keys:\n  petstore-v1: 42");
    const found = (await validate({ "k.yaml": text })).filter((d) => d.severity === "error");
    expect(found).toMatchObject([{ path: "spec.oauth_keys.petstore-v1", ...positionOf(text, "42") }]);
    const sb = await testSandbox();
    try {
      expect((await call(`${sb.urls.gateway}/gw/org/keys/acme`, { method: "POST", headers: gw, body: { oauth_keys: { a: 42 } } })).status).toBe(400);
      expect(
        (await call(`${sb.urls.gateway}/gw/org/keys/acme`, { method: "POST", headers: gw, body: { oauth_keys: { a: "b" }, tags: null, apply_policies: null } }))
          .status,
      ).toBe(200);
    } finally {
      await sb.stop();
    }
  });

  it("the examples' org keys are applied under their organisations' ids", async () => {
    h = await harness({ batch: false });
    await h.apply();
    expect([...h.sandbox.inspect.store.orgKeys.keys()].sort()).toEqual(["acme", "globex"]);
    for (const [id, key] of h.sandbox.inspect.store.orgKeys) expect(key.session.org_id).toBe(id);
  });
});
