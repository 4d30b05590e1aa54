import { cp, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { InternalError } from "../../src/errors.js";
import { materialize } from "../../src/kinds/document-ref.js";
import { EnvFileSecretSource } from "../../src/secrets/env-file-source.js";
import { RepositoryValidator } from "../../src/validate/repository/repository-validator.js";
import type { ValidateOptions } from "../../src/validate/repository/repository-validator.js";
import { spawnCli } from "../helpers/cli.js";
import { projectRoot, removeTempRepos, sharedRoot, tempRepo } from "../helpers/temp-repo.js";
import { apiDefinition, orgKey } from "../helpers/resources.js";

afterAll(removeTempRepos);

const oas = path.join(sharedRoot, "corpus/oas");

/** The rate and period of every key here. */
const limits = { rate: 10, per: 60 };

/** A repository with something of everything: valid resources, each kind of finding, definition files good and bad. */
async function mixedRepository(): Promise<string> {
  const files: Record<string, string> = {
    "apis/good.yaml": apiDefinition({ name: "good", spec: "definitionFile: ../openapi/petstore.yaml" }),
    "apis/shared.yaml": apiDefinition({ name: "shared", spec: "definitionFile: ../openapi/petstore.yaml" }),
    "apis/broken-doc.yaml": apiDefinition({ name: "broken-doc", spec: "definitionFile: ../openapi/broken.yaml" }),
    "apis/missing-doc.yaml": apiDefinition({ name: "missing-doc", spec: "definitionFile: ../openapi/nowhere.yaml" }),
    "apis/inline.yaml": apiDefinition({ name: "inline", spec: "definition:\n  openapi: 3.0.3\n  info: { title: t, version: '1' }\n  paths: {}" }),
    "apis/not-openapi.yaml": apiDefinition({ name: "not-openapi", spec: "definitionFile: ../openapi/plain.yaml" }),
    "openapi/broken.yaml": "openapi: 3.0.3\ninfo: { title: t }\npaths:\n  /x: { get: { responses: { '200': { description: ok } } } }\n",
    "openapi/plain.yaml": "title: not an OpenAPI document\n",
    "openapi/unused.yaml": "openapi: 3.0.3\ninfo: { title: t, version: '1' }\npaths: {}\n",
    "keys/bad-schema.yaml": orgKey({ name: "bad-schema", ...limits, spec: "rate: x\nunknown: 1" }),
    "keys/syntax.yaml": "kind: [\n",
    "keys/unknown-kind.yaml": "apiVersion: gatesync.dev/v1\nkind: OrgKye\nmetadata: { name: k }\nspec: {}\n",
    "keys/secrets.yaml": orgKey({ name: "with-secret", ...limits, spec: "hmac_enabled: true\nhmac_string: ${env:MISSING_SECRET}" }),
    "keys/bad-ref.yaml": orgKey({ name: "bad-ref", ...limits, spec: "access_rights:\n  main:\n    apiRef: nope\n    versions: [Default]" }),
    "keys/dup.yaml": `${orgKey({ name: "dup", ...limits })}---\n${orgKey({ name: "dup", ...limits })}`,
    // a name defined by a valid resource and again by an invalid one; two names for one server object
    "keys/dup-invalid.yaml": `${orgKey({ name: "dup-invalid", ...limits })}---\n${orgKey({ name: "dup-invalid", ...limits, spec: "rate: x" })}`,
    "keys/same-object.yaml": `${orgKey({ name: "same-object-a", ...limits })}---\n${orgKey({ name: "same-object-b", ...limits }).replace("keyId: same-object-b", "keyId: same-object-a")}`,
  };
  for (let i = 0; i < 40; i++)
    files[`many/key-${String(i).padStart(3, "0")}.yaml`] = `${orgKey({ name: `k${i}a`, ...limits })}---\n${orgKey({ name: `k${i}b`, ...limits })}`;
  const dir = await tempRepo(files);
  await cp(path.join(oas, "3.0/pass/petstore.yaml"), path.join(dir, "openapi/petstore.yaml"));
  return dir;
}

const options = (root: string): ValidateOptions => ({ root, secrets: { source: new EnvFileSecretSource({}, root), missing: "error" } });

async function expectWorkerFailure(run: Promise<unknown>): Promise<void> {
  const err = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(InternalError);
  expect((err as InternalError).code).toBe("INTERNAL");
  expect((err as InternalError).message).toContain("worker");
}

describe("one-shot validation (resources held compactly)", () => {
  it("gives the same resources, specs and findings as the default", async () => {
    const root = await mixedRepository();
    // values text would not give back (.inf, -0) keep their spec an object
    await writeFile(
      path.join(root, "keys/odd.yaml"),
      "apiVersion: gatesync.dev/v1\nkind: OAuthClient\nmetadata: { name: odd }\nspec:\n  apiRef: good\n  clientId: odd\n  meta_data: { big: .inf, zero: -0.0 }\n",
    );
    const reference = await new RepositoryValidator({ workers: { threads: 0 } }).validate(options(root));
    const oneShot = RepositoryValidator.oneShot();
    try {
      const compact = await oneShot.validate(options(root));
      expect(compact.diagnostics).toEqual(reference.diagnostics);
      expect(compact.resources.map((r) => `${r.kind}/${r.name}`)).toEqual(reference.resources.map((r) => `${r.kind}/${r.name}`));
      compact.resources.forEach((r, i) => {
        const { spec, ...rest } = reference.resources[i]!;
        expect({ ...r, spec: materialize(r.spec.read()) }).toStrictEqual({ ...rest, spec: materialize(spec.read()) });
      });
      const byName = new Map(compact.resources.map((r) => [r.name, r]));
      const odd = byName.get("odd")!.spec.read();
      expect((odd.meta_data as Record<string, number>).big).toBe(Number.POSITIVE_INFINITY);
      expect(Object.is((odd.meta_data as Record<string, number>).zero, -0)).toBe(true);
    } finally {
      await oneShot.close();
    }
  });
});

describe("the worker pool", () => {
  it("gives the same resources and the same located findings as the single-threaded path", async () => {
    const root = await mixedRepository();
    const single = await new RepositoryValidator({ workers: { threads: 0 } }).validate(options(root));
    const pooled = new RepositoryValidator({ workers: { threads: 2, minFiles: 0, filesPerTask: 3 } });
    try {
      const result = await pooled.validate(options(root));
      expect(result.diagnostics).toEqual(single.diagnostics);
      expect(result.resources).toEqual(single.resources);
      // documents held by reference: the same content whichever thread parsed them
      expect(result.resources.map((r) => materialize(r.spec.read()))).toEqual(single.resources.map((r) => materialize(r.spec.read())));
      expect(result.stats).toEqual(single.stats);
      // the repository does hold every kind of finding, each located
      const codes = new Set(single.diagnostics.map((d) => d.code));
      for (const code of [
        "SCHEMA_VIOLATION",
        "YAML_SYNTAX",
        "UNKNOWN_KIND",
        "SECRET_UNRESOLVED",
        "UNRESOLVED_REFERENCE",
        "DUPLICATE_NAME",
        "DUPLICATE_IDENTITY",
        "DEFINITION_FILE",
        "NOT_A_RESOURCE",
      ])
        expect(codes).toContain(code);
      expect(single.diagnostics.filter((d) => d.code !== "DEFINITION_FILE" || d.line !== undefined).every((d) => d.file !== undefined)).toBe(true);
      expect(single.resources.map((r) => r.name)).toContain("good");
      expect(materialize(single.resources.find((r) => r.name === "good")?.spec.read().definition)).toMatchObject({ openapi: "3.0.0" });
    } finally {
      await pooled.close();
    }
  });

  it("gives the same verdicts when the calling thread checks files beside a worker, and a one-shot validator stops its workers once the files are checked", async () => {
    const root = await mixedRepository();
    const single = await new RepositoryValidator({ workers: { threads: 0 } }).validate(options(root));
    const shared = new RepositoryValidator({ workers: { threads: 1, callerChecks: true, stopWhenChecked: true, minFiles: 0, filesPerTask: 2 } });
    try {
      const result = await shared.validate(options(root));
      expect(result.diagnostics).toEqual(single.diagnostics);
      expect(result.resources).toEqual(single.resources);
      expect(result.stats).toEqual(single.stats);
      // both threads did check files, and the worker is stopped
      const run = shared.workers!.lastRun;
      expect(run.onCaller).toBeGreaterThan(0);
      expect(run.inWorkers).toBeGreaterThan(0);
      expect(run.onCaller + run.inWorkers).toBeGreaterThan(40);
      expect(shared.workers!.running).toBe(false);
      // and start again for the next run
      const again = await shared.validate(options(root));
      expect(again.diagnostics).toEqual(single.diagnostics);
      expect(shared.workers!.lastRun.inWorkers).toBe(0);
    } finally {
      await shared.close();
    }
  });

  it("keeps the workers of a validator that is not one-shot (the daemon's) between runs", async () => {
    const root = await mixedRepository();
    const kept = new RepositoryValidator({ workers: { threads: 1, minFiles: 0 } });
    try {
      await kept.validate(options(root));
      expect(kept.workers!.running).toBe(true);
      expect(kept.workers!.lastRun.onCaller).toBe(0);
    } finally {
      await kept.close();
    }
  });

  it("reuses unchanged files across runs and re-checks a changed one, like the single-threaded path", async () => {
    const root = await mixedRepository();
    const pooled = new RepositoryValidator({ workers: { threads: 2, minFiles: 0 } });
    try {
      const first = await pooled.validate(options(root));
      const file = path.join(root, "many/key-000.yaml");
      await writeFile(file, (await readFile(file, "utf8")).replace("rate: 10", "rate: 11"));
      const second = await pooled.validate(options(root));
      expect(second.stats).toEqual({ filesRead: 1, filesReused: first.stats.filesRead - 1 });
      const fresh = await new RepositoryValidator({ workers: { threads: 0 } }).validate(options(root));
      expect(second.diagnostics).toEqual(fresh.diagnostics);
      expect(second.resources).toEqual(fresh.resources);
    } finally {
      await pooled.close();
    }
  });

  it("reports a worker that dies on a file instead of leaving the file out, and recovers", async () => {
    // a worker with a small heap dies on a large file: an out-of-memory crash, not an exception
    const rows = Array.from({ length: 60_000 }, (_, i) => `    k${i}: { a: ${i}, b: [x, y, z] }`).join("\n");
    const root = await tempRepo({ "big.yaml": `${orgKey({ name: "big", ...limits })}  meta:\n${rows}\n`, "small.yaml": orgKey({ name: "small", ...limits }) });
    const pooled = new RepositoryValidator({ workers: { threads: 1, minFiles: 0, resourceLimits: { maxOldGenerationSizeMb: 32 } } });
    try {
      await expectWorkerFailure(pooled.validate({ root, limits: { maxFileBytes: 50_000_000 } }));
      const ok = await pooled.validate({ root: await tempRepo({ "a.yaml": orgKey({ name: "a", ...limits }) }) });
      expect(ok.resources.map((r) => r.name)).toEqual(["a"]);
    } finally {
      await pooled.close();
    }
  }, 120_000);

  it("reports a worker that dies while the calling thread checks files too", async () => {
    const rows = Array.from({ length: 60_000 }, (_, i) => `    k${i}: { a: ${i}, b: [x, y, z] }`).join("\n");
    const files: Record<string, string> = { "big.yaml": `${orgKey({ name: "big", ...limits })}  meta:\n${rows}\n` };
    for (let i = 0; i < 20; i++) files[`small-${i}.yaml`] = orgKey({ name: `small-${i}`, ...limits });
    // the largest task goes first, to the worker
    const shared = new RepositoryValidator({
      workers: { threads: 1, callerChecks: true, minFiles: 0, filesPerTask: 1, resourceLimits: { maxOldGenerationSizeMb: 32 } },
    });
    try {
      await expectWorkerFailure(shared.validate({ root: await tempRepo(files), limits: { maxFileBytes: 50_000_000 } }));
    } finally {
      await shared.close();
    }
  }, 120_000);

  it("reports workers that cannot even start instead of waiting for them", async () => {
    const pooled = new RepositoryValidator({
      workers: { threads: 1, minFiles: 0, resourceLimits: { maxOldGenerationSizeMb: 1, maxYoungGenerationSizeMb: 1 } },
    });
    try {
      await expectWorkerFailure(pooled.validate({ root: await tempRepo({ "a.yaml": orgKey({ name: "a", ...limits }) }) }));
    } finally {
      await pooled.close();
    }
  });

  it("runs in a spawned `gatesync validate` (compiled or from sources) with the same report", async () => {
    const root = await mixedRepository();
    // enough files for the command to use its workers
    for (let i = 0; i < 220; i++) await writeFile(path.join(root, `many/extra-${String(i).padStart(3, "0")}.yaml`), orgKey({ name: `extra-${i}`, ...limits }));
    const spawned = await spawnCli(["validate", root, "--format", "json"], { cwd: projectRoot, env: { MISSING_SECRET: undefined } });
    expect(spawned.stderr).not.toContain("worker");
    expect(spawned.code).toBe(1);
    const single = await new RepositoryValidator({ workers: { threads: 0 } }).validate({
      ...options(root),
      secrets: { source: new EnvFileSecretSource({}, root), missing: "warning" },
    });
    const report = JSON.parse(spawned.stdout) as { diagnostics: unknown[] };
    expect(report.diagnostics).toEqual(JSON.parse(JSON.stringify(single.diagnostics)));
  }, 180_000);
});
