/**
 * Properties of the planner over generated repositories:
 * - a plan is deterministic: the same input in any order gives the same plan;
 * - planning again after recording a plan's result yields no changes;
 * - no rendering (text, coloured text, markdown, json) contains any secret value.
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { fieldChanges } from "../../src/plan/plan-change.js";
import { computePlan, hasChanges } from "../../src/plan/plan.js";
import { renderPlan } from "../../src/plan/render/render.js";
import { desiredFrom, doc, emptyState, planOptions, recordPlan } from "../helpers/plan.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

const runs = Number(process.env.GATESYNC_FUZZ_RUNS ?? 25);
const word = fc.stringMatching(/^[a-z][a-z0-9]{0,8}$/);
const text = fc.string({ maxLength: 30 }).map((s) => s.replace(/[$`\\]/g, ""));
const secretValue = fc.stringMatching(/^[A-Za-z0-9]{16,28}$/);

const repository = fc.record({
  apis: fc.uniqueArray(word, { minLength: 1, maxLength: 3 }),
  titles: fc.array(text, { minLength: 3, maxLength: 3 }),
  keys: fc.array(
    fc.record({
      rate: fc.integer({ min: 0, max: 10_000 }),
      tags: fc.array(word, { maxLength: 3 }),
      api: fc.nat(),
      trigger: fc.option(word, { nil: undefined }),
    }),
    { maxLength: 4 },
  ),
  clients: fc.array(fc.record({ description: text, api: fc.nat() }), { maxLength: 3 }),
  hooks: fc.array(fc.record({ events: fc.subarray(["UserRegistered", "PasswordReset", "AccessRequestApproved"], { minLength: 1 }), timeout: fc.nat(60) }), {
    maxLength: 3,
  }),
  products: fc.array(text, { maxLength: 2 }),
  secrets: fc.uniqueArray(secretValue, { minLength: 12, maxLength: 12 }),
});

type Repo = typeof repository extends fc.Arbitrary<infer T> ? T : never;

function files(r: Repo): { files: Record<string, string>; env: Record<string, string> } {
  const env: Record<string, string> = Object.fromEntries(r.secrets.map((s, i) => [`SECRET_${i}`, s]));
  const out: Record<string, string> = {};
  const q = (s: string): string => JSON.stringify(s);
  r.apis.forEach((name, i) => {
    out[`apis/${name}.yaml`] = doc(
      "ApiDefinition",
      name,
      `apiId: ${name}-id\nquery: { upstreamURL: "http://user:\${env:SECRET_${i}}@up.internal" }\ndefinition:\n  openapi: 3.1.0\n  info: { title: ${q(r.titles[i] ?? "t")}, version: "1" }\n  paths: {}`,
    );
  });
  r.keys.forEach((k, i) => {
    const api = r.apis[k.api % r.apis.length]!;
    out[`keys/k${i}.yaml`] = doc(
      "OrgKey",
      `k${i}`,
      `keyId: key-${i}\nrate: ${k.rate}\ntags: ${JSON.stringify(k.tags)}\nhmac_string: \${env:SECRET_${3 + (i % 3)}}\naccess_rights:\n  a: { apiRef: ${api} }${k.trigger === undefined ? "" : `\nquotaResetTrigger: ${k.trigger}`}`,
    );
  });
  r.clients.forEach((c, i) => {
    out[`clients/c${i}.yaml`] = doc(
      "OAuthClient",
      `c${i}`,
      `apiRef: ${r.apis[c.api % r.apis.length]!}\nclientId: client-${i}\ndescription: ${q(c.description)}\nsecret: \${env:SECRET_${6 + (i % 2)}}`,
    );
  });
  r.hooks.forEach((h, i) => {
    out[`hooks/h${i}.yaml`] = doc(
      "PortalWebhook",
      `h${i}`,
      `Name: hook ${i}\nURL: "https://crm.example.com/hook?token=\${env:SECRET_8}"\nMethod: POST\nTimeout: ${h.timeout}\nEvents: ${JSON.stringify(h.events)}`,
    );
    out[`dash/d${i}.yaml`] = doc(
      "DashboardWebhook",
      `d${i}`,
      `name: d${i}\nmethod: POST\ntarget_path: https://chat.example.com/x${i}\nheader_map: { Authorization: "Bearer \${env:SECRET_9}" }`,
    );
  });
  r.products.forEach((p, i) => {
    out[`products/p${i}.yaml`] = doc("ApiProduct", `p${i}`, `Name: product ${i}\nProviderID: 1\nDescription: ${q(p)}\nAPIDetails: [{ apiRef: ${r.apis[0]!} }]`);
  });
  out["llm.yaml"] = doc("LlmSettings", "assistant", 'attributes: { system_prompt: "${env:SECRET_10}", model_name: m }');
  return { files: out, env };
}

function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) % 2147483648;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

describe("planner properties", () => {
  it("is deterministic, settles after recording, and never renders a secret", async () => {
    await fc.assert(
      fc.asyncProperty(repository, fc.nat(), fc.boolean(), async (repo, seed, half) => {
        const { files: f, env } = files(repo);
        const set = await desiredFrom(f, { env });
        // start from a state where some resources were applied already
        const firstPlan = computePlan(half ? set.desired.slice(0, Math.ceil(set.desired.length / 2)) : [], emptyState, planOptions);
        const state = recordPlan(firstPlan, set.desired, emptyState);

        const plan = computePlan(set.desired, state, planOptions);
        const again = computePlan(
          shuffled(set.desired, seed),
          { ...state, resources: new Map(shuffled([...state.resources.entries()], seed + 1)) },
          planOptions,
        );
        expect(again).toEqual(plan);

        const recorded = recordPlan(plan, set.desired, state);
        const settled = computePlan(set.desired, recorded, planOptions);
        expect(settled.changes.filter((c) => c.action !== "no-op")).toEqual([]);
        expect(hasChanges(settled)).toBe(false);

        const outputs = [
          renderPlan(plan, "text"),
          renderPlan(plan, "text", { color: true }),
          renderPlan(plan, "markdown"),
          renderPlan(plan, "json"),
          JSON.stringify(recorded.resources.get(set.desired[0]!.id)),
        ];
        for (const out of outputs) for (const secret of repo.secrets) expect(out.includes(secret), `secret leaked into ${out.slice(0, 80)}`).toBe(false);
      }),
      { numRuns: runs },
    );
  });

  it("shows a rotation of every secret as sensitive changes without either value", async () => {
    await fc.assert(
      fc.asyncProperty(repository, fc.uniqueArray(secretValue, { minLength: 12, maxLength: 12 }), async (repo, rotated) => {
        fc.pre(rotated.every((s) => !repo.secrets.includes(s)));
        const { files: f, env } = files(repo);
        const before = await desiredFrom(f, { env });
        const state = recordPlan(computePlan(before.desired, emptyState, planOptions), before.desired, emptyState);
        const after = await desiredFrom(f, { env: Object.fromEntries(rotated.map((s, i) => [`SECRET_${i}`, s])) });
        const plan = computePlan(after.desired, state, planOptions);
        const changedOrgKeys = plan.changes.filter((c) => c.kind === "OrgKey");
        for (const c of changedOrgKeys) expect(fieldChanges(c).some((x) => x.path === "hmac_string")).toBe(true);
        for (const out of [renderPlan(plan, "text"), renderPlan(plan, "markdown"), renderPlan(plan, "json")]) {
          for (const secret of [...repo.secrets, ...rotated]) expect(out.includes(secret)).toBe(false);
        }
      }),
      { numRuns: Math.max(5, Math.floor(runs / 2)) },
    );
  });
});

/*
 * Renames (issues 31 and 36): over any sequence of commits that rename, remove, bring back and
 * (sometimes) declare the renames of APIs, org keys and products, under `orphans: deactivate`:
 * - no deactivation is ever planned for an object the commit declares (by its address);
 * - no two records ever hold one server object (one apiId, one keyId, one product's server id);
 * - no product is created while a record holds a product of that Name (no second object);
 * - an object declared again is on: after the commit is recorded, no declared object's record is deactivated
 *   (except where its rename is blocked, waiting for a person).
 */
const objects = [
  { kind: "ApiDefinition", base: "api0", spec: "apiId: a0-id\ndefinition: { openapi: 3.0.3, info: { title: A, version: '1' }, paths: {} }" },
  { kind: "ApiDefinition", base: "api1", spec: "apiId: a1-id\ndefinition: { openapi: 3.0.3, info: { title: B, version: '1' }, paths: {} }" },
  { kind: "OrgKey", base: "key0", spec: "keyId: k0\nrate: 1" },
  { kind: "OrgKey", base: "key1", spec: "keyId: k1\nrate: 2" },
  { kind: "ApiProduct", base: "prod0", spec: "Name: P0\nProviderID: 1" },
] as const;

const commitStep = fc.array(fc.record({ present: fc.boolean(), name: fc.nat(2), declare: fc.boolean(), edit: fc.boolean() }), {
  minLength: objects.length,
  maxLength: objects.length,
});

const addressKey = (r: { kind: string; address: Readonly<Record<string, string>> }): string | undefined =>
  r.kind === "ApiDefinition" ? `api:${r.address.apiID}` : r.kind === "OrgKey" ? `key:${r.address.keyID}` : undefined;

describe("planner properties: renames", () => {
  it("never deactivates a declared object, never records one object twice, never makes a second product", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(commitStep, { minLength: 2, maxLength: 4 }), async (commits) => {
        let state = emptyState;
        // the name each object's record is kept under (where the state has it)
        const recordedAs = new Map<number, string>();
        for (const commit of commits) {
          const f: Record<string, string> = {};
          commit.forEach((o, i) => {
            if (!o.present) return;
            const obj = objects[i]!;
            const name = `${obj.base}-n${o.name}`;
            const from = recordedAs.get(i);
            const annotation = o.declare && from !== undefined && from !== name ? `  annotations:\n    gatesync.dev/moved-from: ${from}\n` : "";
            f[`${obj.base}.yaml`] = doc(obj.kind, name, `${obj.spec}${o.edit && obj.kind === "OrgKey" ? "\ntags: [edited]" : ""}`).replace(
              `  name: ${name}\n`,
              `  name: ${name}\n${annotation}`,
            );
          });
          const set = await desiredFrom(f);
          const plan = computePlan(set.desired, state, { ...planOptions, orphans: "deactivate" });
          const declared = new Set(set.desired.map((d) => addressKey({ kind: d.kind, address: d.request.address })).filter((k) => k !== undefined));
          for (const c of plan.changes.filter((x) => x.deactivate === true)) {
            const key = addressKey(state.resources.get(c.id)!);
            expect(declared.has(key!), `${c.id} deactivated though ${key} is declared`).toBe(false);
          }
          const names = new Set(
            [...state.resources.values()].filter((r) => r.kind === "ApiProduct").map((r) => (r.applied?.read() as { Name?: string } | undefined)?.Name),
          );
          for (const c of plan.changes.filter((x) => x.kind === "ApiProduct" && x.action === "create")) {
            expect(names.has("P0"), `${c.id} created while a record holds product P0`).toBe(false);
          }
          state = recordPlan(plan, set.desired, state);
          const keys = [...state.resources.values()].map(addressKey).filter((k) => k !== undefined);
          expect(new Set(keys).size, `records: ${[...state.resources.keys()].join(", ")}`).toBe(keys.length);
          const products = [...state.resources.values()].filter((r) => r.kind === "ApiProduct" && r.serverId !== undefined);
          expect(new Set(products.map((r) => r.serverId)).size).toBe(products.length);
          for (const d of set.desired) {
            const r = state.resources.get(d.id);
            const blocked = plan.changes.find((c) => c.id === d.id)?.action === "blocked";
            if (r !== undefined && !blocked) expect(r.deactivatedAt, `${d.id} is declared but its record says deactivated`).toBeUndefined();
          }
          recordedAs.clear();
          for (const r of state.resources.values()) {
            const i = objects.findIndex((o) => r.name.startsWith(`${o.base}-`));
            recordedAs.set(i, r.name);
          }
        }
      }),
      { numRuns: runs },
    );
  }, 120_000);
});
