/**
 * A plan's requests made early, as the validation finds their resources (early-desired.ts), are
 * the requests made after it: whatever order the files are checked in — an API's file checked
 * after the resources naming it, before them, on a worker or on the calling thread — the desired
 * set, and so the plan, are the same; and a hash key that changed between the early look and
 * the state's read is never used.
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { EarlyRequests } from "../../src/plan/early-desired.js";
import { prepareDesired } from "../../src/plan/desired.js";
import type { DesiredSet } from "../../src/plan/desired.js";
import { runPlan } from "../../src/plan/run-plan.js";
import { loadConfig } from "../../src/config/config.js";
import { SnapshotState } from "../../src/record/snapshot-state.js";
import type { StateBackend, StateSnapshot } from "../../src/record/state.js";
import { EnvFileSecretSource } from "../../src/secrets/env-file-source.js";
import { SecretResolver } from "../../src/secrets/resolver.js";
import { RepositoryValidator } from "../../src/validate/validate-repository.js";
import { doc, emptyState } from "../helpers/plan.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

const env = { S: "early-secret-value-0123456789" };

const api = (name: string): string =>
  doc(
    "ApiDefinition",
    name,
    `apiId: ${name}-id
query: { listenPath: /${name}/ }
definition:
  openapi: 3.0.3
  info: { title: ${name}, version: "1" }
  paths: {}
  x-gw-api-gateway:
    { info: { name: ${name}, state: { active: true } }, upstream: { url: "http://${name}.internal" }, server: { listenPath: { value: /${name}/ } } }`,
  );

/** A resource of each kind without an attached document; `ref` the API it names, where its kind names one. */
const others: Record<string, (name: string, ref: string) => string> = {
  OrgKey: (n, ref) => doc("OrgKey", n, `keyId: ${n}\nhmac_string: \${env:S}\naccess_rights:\n  main: { apiRef: ${ref} }`),
  OAuthClient: (n, ref) => doc("OAuthClient", n, `apiRef: ${ref}\nclientId: ${n}\nredirect_uri: https://${n}.example.com/cb\nsecret: \${env:S}`),
  ApiProduct: (n, ref) => doc("ApiProduct", n, `Name: ${n}\nProviderID: 1\nAPIDetails:\n  - { apiRef: ${ref}, Description: main }`),
  PortalWebhook: (n) => doc("PortalWebhook", n, `Name: ${n}\nURL: "https://hooks.example.com/${n}?token=\${env:S}"\nMethod: POST\nEvents: [UserRegistered]`),
  DashboardWebhook: (n) =>
    doc("DashboardWebhook", n, `name: ${n}\nmethod: POST\ntarget_path: https://hooks.example.com/${n}\nheader_map: { Authorization: "Bearer \${env:S}" }`),
  LlmSettings: (n) => doc("LlmSettings", n, `attributes: { model_name: m-${n}, max_tokens: 256 }`),
};

/** A repository: APIs and other resources, dealt into files whose names set the order they are listed in. */
const repositories = fc
  .record({
    apis: fc.integer({ min: 1, max: 4 }),
    resources: fc.array(fc.record({ kind: fc.constantFrom(...Object.keys(others)), api: fc.nat() }), { minLength: 1, maxLength: 12 }),
    files: fc.array(fc.nat({ max: 5 }), { minLength: 20, maxLength: 20 }),
  })
  .map(({ apis, resources, files }) => {
    const docs = [
      ...Array.from({ length: apis }, (_, i) => api(`api-${i}`)),
      ...resources.map((r, i) => others[r.kind]!(`${r.kind.toLowerCase()}-${i}`, `api-${r.api % apis}`)),
    ];
    const byFile: Record<string, string[]> = {};
    docs.forEach((d, i) => (byFile[`f${files[i % files.length]}.yaml`] ??= []).push(d));
    return Object.fromEntries(Object.entries(byFile).map(([f, ds]) => [f, ds.join("---\n")]));
  });

/** The desired set prepared after the validation, and the one taken from requests made during it. */
async function bothWays(files: Record<string, string>, validator: RepositoryValidator): Promise<{ late: DesiredSet; early: DesiredSet; taken: number }> {
  const dir = await tempRepo(files);
  const secrets = new SecretResolver(new EnvFileSecretSource(env, dir));
  const making = { secrets, hashKey: "k", appTypeProviders: new Set<number>() };
  const plain = await validator.validate({ root: dir, secrets: { source: secrets, missing: "error" } });
  expect(plain.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  const requests = new EarlyRequests({ resolver: secrets, hashKey: "k", appTypeProviders: making.appTypeProviders });
  const told = await validator.validate({ root: dir, secrets: { source: secrets, missing: "error" }, early: requests });
  return {
    late: prepareDesired(plain.resources, making),
    early: prepareDesired(told.resources, { ...making, early: requests }),
    taken: requests.taken,
  };
}

describe("requests made as the files are checked", () => {
  it("are the requests made after the validation, in whatever order the files are checked", async () => {
    const validator = new RepositoryValidator({ workers: { threads: 0 } });
    let taken = 0;
    await fc.assert(
      fc.asyncProperty(repositories, async (files) => {
        const { late, early, taken: n } = await bothWays(files, validator);
        taken += n;
        expect(early.diagnostics).toEqual([]);
        expect(JSON.stringify(early.desired)).toBe(JSON.stringify(late.desired));
      }),
      { numRuns: 40 },
    );
    // not a comparison of the late path with itself: the early requests were taken
    expect(taken).toBeGreaterThan(100);
  });

  it("are the same when a worker checks the files the calling thread does not", async () => {
    const validator = new RepositoryValidator({ workers: { threads: 1, callerChecks: true, minFiles: 0, filesPerTask: 1 } });
    try {
      const files: Record<string, string> = { "a.yaml": others.OrgKey!("k1", "api-9"), "m.yaml": api("api-9"), "z.yaml": others.ApiProduct!("p1", "api-9") };
      for (let i = 0; i < 20; i++) files[`w${i}.yaml`] = others.OAuthClient!(`c${i}`, "api-9");
      const { late, early, taken } = await bothWays(files, validator);
      expect(JSON.stringify(early.desired)).toBe(JSON.stringify(late.desired));
      expect(taken).toBe(22);
    } finally {
      await validator.close();
    }
  });
});

describe("the hash key of early requests", () => {
  const config = `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
targets:
  gateway: { url: http://127.0.0.1:1, credentialEnv: GW_KEY }
  portal: { url: http://127.0.0.1:1, credentialEnv: GW_KEY }
state: { backend: sqlite, path: ./state.db }
secrets: { env: [S] }
`;

  /** A state that says `told` when asked for its key alone, and holds `held` when read. */
  const stateSaying = (told: string | undefined, held: StateSnapshot): StateBackend => {
    const snapshot = new SnapshotState(held, "test state");
    return Object.assign(Object.create(snapshot) as StateBackend, { storedHashKey: () => Promise.resolve(told) });
  };

  it("is the one the state holds when it is read, when another process stored one in between", async () => {
    const dir = await tempRepo({
      "gatesync.yaml": config,
      "config/k.yaml": others.OrgKey!("k", "a"),
      "config/a.yaml": api("a"),
      "config/h.yaml": others.DashboardWebhook!("h", "a"),
    });
    const cfg = await loadConfig(`${dir}/gatesync.yaml`);
    // the content hashes: of the markers, so of the key they were made with
    const plan = async (state: StateBackend): Promise<string[]> => {
      const run = await runPlan({
        config: cfg,
        root: `${dir}/config`,
        validator: RepositoryValidator.oneShot(),
        state,
        env: { ...env, GW_KEY: "gw" },
        keep: "plan",
        now: () => new Date("2026-11-25T00:00:00Z"),
      });
      return run.desired.desired.map((d) => `${d.id} ${d.hash}`);
    };
    const stored = { ...emptyState, hashKey: "stored-in-between" };
    // asked first, the state held no key; when read, it holds the one another process stored
    const raced = await plan(stateSaying(undefined, stored));
    expect(raced).toEqual(await plan(stateSaying("stored-in-between", stored)));
    // a key makes a difference to these hashes: the comparison above can fail
    expect(raced).not.toEqual(await plan(stateSaying("another", { ...emptyState, hashKey: "another" })));
  });
});
