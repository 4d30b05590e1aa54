/**
 * The planner compares what it is given: every secret is looked up once per run, before
 * planning — never again by the plan, its renderings, its JSON or its digest — and
 * `computePlan` reads no file and no secret, so it gives the same plan once every file and
 * secret it was prepared from is gone.
 */
import { chmod, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { prepareDesired } from "../../src/plan/prepare-desired.js";
import type { DesiredSet } from "../../src/plan/desired.js";
import { computePlan, planDigest } from "../../src/plan/plan.js";
import type { Plan } from "../../src/plan/plan.js";
import { renderPlan } from "../../src/plan/render/render.js";
import { runPlan } from "../../src/run/run-plan.js";
import type { StateSnapshot } from "../../src/record/state.js";
import { SqliteStateBackend } from "../../src/record/sqlite/sqlite-backend.js";
import { EnvFileSecretSource } from "../../src/secrets/env-file-source.js";
import { formatRef } from "../../src/secrets/references.js";
import { SecretResolver } from "../../src/secrets/resolver.js";
import type { SecretSource } from "../../src/secrets/resolver.js";
import { RepositoryValidator } from "../../src/validate/repository/repository-validator.js";
import { recordOfJson } from "../../src/record/wrappers/lazy-record.js";
import { doc, emptyState, hashKey, planOptions, recordPlan } from "../helpers/plan.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";
import { apiDefinition } from "../helpers/resources.js";

afterAll(removeTempRepos);

const keys = 10;
const secretOf = (i: number): string => `org-key-secret-value-${i}-abcdef`;

const config = `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
targets:
  gateway: { url: http://127.0.0.1:1, credentialEnv: GW_KEY, batch: { listenPath: /b/, keyEnv: B_KEY, maxSize: 10 } }
state: { backend: sqlite, path: ./state/state.db }
secrets: { envPrefix: ORG_SECRET_ }
`;

/** An environment that counts the reads of each secret variable (the source reads a variable once per lookup). */
function countingEnv(values: Record<string, string>): { env: Record<string, string | undefined>; reads: Map<string, number> } {
  const reads = new Map<string, number>();
  const env = new Proxy(values, {
    get(target, key) {
      if (typeof key === "string" && key.startsWith("ORG_SECRET_")) reads.set(key, (reads.get(key) ?? 0) + 1);
      return typeof key === "string" ? target[key] : undefined;
    },
  });
  return { env, reads };
}

/** A source that counts its lookups, reference by reference. */
function countingSource(source: SecretSource): { source: SecretSource; lookups: Map<string, number> } {
  const lookups = new Map<string, number>();
  return {
    lookups,
    source: {
      lookup: (ref) => {
        lookups.set(formatRef(ref), (lookups.get(formatRef(ref)) ?? 0) + 1);
        return source.lookup(ref);
      },
    },
  };
}

/** Everything a user meets of a plan: its three renderings, its JSON, and its digest taken again. */
function everyReading(plan: Plan): string[] {
  return [
    renderPlan(plan, "text"),
    renderPlan(plan, "markdown"),
    renderPlan(plan, "json"),
    JSON.stringify(plan),
    planDigest(plan.changes),
    planDigest(plan.changes),
  ];
}

describe("secret lookups during a plan", () => {
  it("are one per `${env:}` reference for a whole run: validation, the plan, its renderings, its JSON and a second digest", async () => {
    const files: Record<string, string> = { "gatesync.yaml": config };
    const values: Record<string, string> = {};
    for (let i = 0; i < keys; i++) {
      files[`config/k${i}.yaml`] = doc("OrgKey", `k${i}`, `keyId: org-${i}\nrate: 5\nhmac_enabled: true\nhmac_string: \${env:ORG_SECRET_${i}}`);
      values[`ORG_SECRET_${i}`] = secretOf(i);
    }
    const dir = await tempRepo(files);
    const cfg = await loadConfig(path.join(dir, "gatesync.yaml"));
    // both ways a run keeps its inputs: an apply's (requests rebuilt from the resources) and a plan's alone
    for (const keep of [undefined, "plan" as const]) {
      const { env, reads } = countingEnv(values);
      const validator = RepositoryValidator.oneShot();
      const state = new SqliteStateBackend(path.join(dir, `state/${keep ?? "apply"}.db`));
      const run = await runPlan({ config: cfg, root: path.join(dir, "config"), validator, state, env, ...(keep === undefined ? {} : { keep }) });
      await validator.close();
      await state.close();
      expect(run.plan.summary.create).toBe(keys);
      const outputs = everyReading(run.plan);
      expect(Object.fromEntries(reads)).toEqual(Object.fromEntries(Object.keys(values).map((k) => [k, 1])));
      for (const text of outputs) for (let i = 0; i < keys; i++) expect(text).not.toContain(secretOf(i));
    }
  });

  it("are one per `${file:}` reference, the same reference in several resources counting once", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < keys; i++) {
      files[`k${i}.yaml`] = doc("OrgKey", `k${i}`, `keyId: org-${i}\nrate: 5\nhmac_enabled: true\nhmac_string: \${file:secrets/s${i % 5}}`);
      files[`secrets/s${i}`] = `${secretOf(i)}\n`;
    }
    const dir = await tempRepo(files);
    const { source, lookups } = countingSource(new EnvFileSecretSource({}, dir));
    // what runPlan does: one resolver for validation and the desired set
    const secrets = new SecretResolver(source);
    const validator = RepositoryValidator.oneShot();
    const { resources } = await validator.validate({ root: dir, secrets: { source: secrets, missing: "error" } });
    await validator.close();
    const set = prepareDesired(resources, { secrets, hashKey, appTypeProviders: new Set(), compareFrom: "resource", state: emptyState });
    const plan = computePlan(set.desired, emptyState, planOptions);
    const outputs = everyReading(plan);
    expect(Object.fromEntries(lookups)).toEqual(Object.fromEntries([0, 1, 2, 3, 4].map((i) => [`\${file:secrets/s${i}}`, 1])));
    for (const text of outputs) for (let i = 0; i < 5; i++) expect(text).not.toContain(secretOf(i));
  });
});

const api = (i: number, title: string): Record<string, string> => ({
  [`a${i}.yaml`]: apiDefinition({ name: `api-${i}`, apiId: `api-${i}`, spec: `definitionFile: oas/api-${i}.yaml\nquery: { listenPath: /api-${i}/ }` }),
  [`oas/api-${i}.yaml`]: `openapi: 3.0.0\ninfo: { title: '${title}', version: '1' }\npaths:\n  /items:\n    get:\n      responses: { "200": { description: ok } }\n`,
});

/** A repository of keys with secrets (env and file) and APIs with their documents in files. */
function repository(round: number): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < 6; i++) {
    const ref = i % 2 === 0 ? `\${env:ORG_SECRET_${i}}` : `\${file:secrets/s${i}}`;
    files[`k${i}.yaml`] = doc("OrgKey", `k${i}`, `keyId: org-${i}\nrate: ${round === 1 && i < 3 ? 9 : 5}\nhmac_enabled: true\nhmac_string: ${ref}`);
    files[`secrets/s${i}`] = `${secretOf(i)}\n`;
  }
  // api-0 unchanged, api-1 its document changed (an update the planner diffs), api-2 new in the second round
  Object.assign(files, api(0, "first"), api(1, round === 0 ? "first" : "second"));
  if (round === 1) Object.assign(files, api(2, "new"));
  return files;
}

/** A state as storage gives it back: records made from their JSON (documents read in), as after an apply of `plan`. */
function storedState(plan: Plan, set: DesiredSet): StateSnapshot {
  const state = recordPlan(plan, set.desired, emptyState);
  return { ...state, resources: new Map([...state.resources].map(([id, r]) => [id, recordOfJson(JSON.parse(JSON.stringify(r)) as Record<string, unknown>)])) };
}

describe("computePlan", () => {
  it("reads no file and looks no secret up: the same plan once every file and secret it was prepared from is gone", async () => {
    const env = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`ORG_SECRET_${i}`, secretOf(i)]));
    const dir = await tempRepo(repository(0));
    const validator = new RepositoryValidator();
    const prepare = async (state: StateSnapshot, source: SecretSource): Promise<DesiredSet> => {
      const secrets = new SecretResolver(source);
      const result = await validator.validate({ root: dir, secrets: { source: secrets, missing: "error" } });
      expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
      return prepareDesired(result.resources, { secrets, hashKey, appTypeProviders: new Set(), compareFrom: "resource", state });
    };
    const first = await prepare(emptyState, new EnvFileSecretSource(env, dir));
    const applied = storedState(computePlan(first.desired, emptyState, planOptions), first);
    for (const [file, text] of Object.entries(repository(1))) await writeFile(path.join(dir, file), text);
    const { source, lookups } = countingSource(new EnvFileSecretSource(env, dir));
    const set = await prepare(applied, source);
    const prepared = new Map(lookups);
    const before = computePlan(set.desired, applied, planOptions);
    const actions = Object.fromEntries(before.changes.map((c) => [c.id, c.action]));
    expect(actions).toMatchObject({ "ApiDefinition/api-0": "no-op", "ApiDefinition/api-1": "update", "OrgKey/k0": "update", "OrgKey/k5": "no-op" });
    expect(actions["ApiDefinition/api-2"]).not.toBe("no-op");
    const json = JSON.stringify(before);
    // every file and secret gone: the resource directory, its documents, the secret files, the environment
    await chmod(dir, 0o700);
    await rm(dir, { recursive: true, force: true });
    for (const k of Object.keys(env)) delete env[k];
    const after = computePlan(set.desired, applied, planOptions);
    expect(after).toEqual(before);
    expect(planDigest(after.changes)).toBe(planDigest(before.changes));
    expect(lookups).toEqual(prepared);
    // the update of api-1 was diffed from its document read before planning: its JSON needs no file
    const update = after.changes.find((c) => c.id === "ApiDefinition/api-1")!;
    expect(update.action).toBe("update");
    const planned = (JSON.parse(json) as Plan).changes.find((c) => c.id === "ApiDefinition/api-1");
    expect(JSON.stringify(update)).toBe(JSON.stringify(planned));
    expect(JSON.stringify(update)).toContain("second");
    await validator.close();
  });
});
