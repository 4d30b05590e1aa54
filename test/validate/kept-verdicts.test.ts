/**
 * What the daemon's validator keeps of each file between runs (validate/kept-verdicts.ts): a
 * git source checks each commit out in a directory of its own, and an unchanged file there is
 * not read and checked again; the environments of one daemon check a file that no value and no
 * patch changes once between them.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { materialize } from "../../src/kinds/document-ref.js";
import { GitSource } from "../../src/source/git-source.js";
import type { SourceSnapshot } from "../../src/source/source.js";
import { RepositoryValidator } from "../../src/validate/repository/repository-validator.js";
import type { RepositoryResult, ValidateOptions } from "../../src/validate/repository/repository-validator.js";
import { eventually } from "../helpers/eventually.js";
import { gitRemote, pushFiles } from "../helpers/git-remote.js";
import { petstoreOpenapi } from "../helpers/petstore-openapi.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";
import { apiDefinition, orgKey } from "../helpers/resources.js";

afterAll(removeTempRepos);

const api = apiDefinition({ name: "petstore", apiId: "petstore-id", spec: "definitionFile: ../../openapi/petstore.yaml" });

/** What a run of the daemon validates: the snapshot's files, within its repository. */
const optionsOf = (s: SourceSnapshot, extra: Partial<ValidateOptions> = {}): ValidateOptions => ({ root: s.root, boundary: s.boundary, ...extra });

/** What a user sees of a validation: its findings and resources, the attached document read. */
function seen(result: RepositoryResult): unknown {
  return {
    diagnostics: result.diagnostics,
    resources: result.resources.map((r) => ({ ...r, spec: r.spec.read(), definition: materialize(r.spec.read().definition) })),
  };
}

describe("unchanged files of a new commit", () => {
  it("are not read again: a second commit touching one file reads one file, and what is reused names the new checkout", async () => {
    const dir = await tempRepo();
    const work = gitRemote(dir);
    const keys = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`config/keys/k${i}.yaml`, orgKey({ name: `k${i}`, rate: 5 })]));
    await pushFiles(work, { ...keys, "config/apis/petstore.yaml": api, "openapi/petstore.yaml": petstoreOpenapi({ description: "pets" }) }, "one");
    const source = new GitSource({ url: path.join(dir, "origin.git"), branch: "main", subdirectory: "config", cacheDir: path.join(dir, "cache") });
    const validator = new RepositoryValidator({ workers: { threads: 0 } });

    const first = await source.fetch();
    const release = first.hold!();
    const one = await validator.validate(optionsOf(first));
    expect(one.diagnostics).toEqual([]);
    // six keys, the API, and the document it names
    expect(one.stats).toEqual({ filesRead: 8, filesReused: 0 });

    await pushFiles(work, { "config/keys/k3.yaml": orgKey({ name: "k3", rate: 9 }) }, "two");
    const second = await source.fetch();
    expect(second.root).not.toBe(first.root);
    // the first commit's checkout goes: nothing of the second run may read it
    release();
    await eventually(
      () => existsSync(first.root),
      (there) => !there,
      10_000,
    );
    const two = await validator.validate(optionsOf(second));
    expect(two.stats).toEqual({ filesRead: 1, filesReused: 7 });
    expect(two.resources.find((r) => r.name === "k3")?.spec.read()).toMatchObject({ rate: 9 });
    // the same as a validator that kept nothing sees: the reused attached document is read from the new checkout
    const fresh = await new RepositoryValidator({ workers: { threads: 0 } }).validate(optionsOf(second));
    expect(seen(two)).toEqual(seen(fresh));
    expect((seen(two) as { resources: Array<{ definition: { info: { description: string } } }> }).resources[0]!.definition.info.description).toBe("pets");
    await source.close();
  });

  it("a file whose size is the same but whose content changed is read again", async () => {
    const dir = await tempRepo();
    const work = gitRemote(dir);
    await pushFiles(work, { "config/a.yaml": orgKey({ name: "a", rate: 5 }), "config/b.yaml": orgKey({ name: "b", rate: 5 }) }, "one");
    const source = new GitSource({ url: path.join(dir, "origin.git"), branch: "main", subdirectory: "config", cacheDir: path.join(dir, "cache") });
    const validator = new RepositoryValidator({ workers: { threads: 0 } });
    await validator.validate(optionsOf(await source.fetch()));
    await pushFiles(work, { "config/b.yaml": orgKey({ name: "b", rate: 6 }) }, "two");
    const two = await validator.validate(optionsOf(await source.fetch()));
    expect(two.stats).toEqual({ filesRead: 1, filesReused: 1 });
    expect(two.resources.find((r) => r.name === "b")?.spec.read()).toMatchObject({ rate: 6 });
    await source.close();
  });
});

describe("the environments of one daemon", () => {
  const values = (environment: string, rate: number): Partial<ValidateOptions> => ({ values: { environment, values: { rate } } });

  it("check a file no value or patch changes once between them, and each its own where one does", async () => {
    const dir = await tempRepo({
      "a.yaml": orgKey({ name: "a", rate: 5 }),
      "b.yaml": orgKey({ name: "b", rate: 5 }),
      "valued.yaml": orgKey({ name: "v", rate: "${var:rate}" }),
    });
    const validator = new RepositoryValidator({ workers: { threads: 0 } });
    const staging = await validator.validate({ root: dir, ...values("staging", 7) });
    expect(staging.stats).toEqual({ filesRead: 3, filesReused: 0 });
    // production: only the file its value changes is its own
    const production = await validator.validate({ root: dir, ...values("production", 8) });
    expect(production.stats).toEqual({ filesRead: 1, filesReused: 2 });
    expect(production.resources.find((r) => r.name === "v")?.spec.read()).toMatchObject({ rate: 8 });
    expect(staging.resources.find((r) => r.name === "v")?.spec.read()).toMatchObject({ rate: 7 });
    // a patch of production's naming `a` makes `a` production's own; staging still gets the shared verdict
    const patches = [
      { type: "inline", document: { kind: "OrgKey", metadata: { name: "a" }, spec: { rate: 99 } }, at: "environments.production.patches[0]" },
    ] as const;
    const patched = await validator.validate({ root: dir, ...values("production", 8), patches });
    expect(patched.resources.find((r) => r.name === "a")?.spec.read()).toMatchObject({ rate: 99 });
    const again = await validator.validate({ root: dir, ...values("staging", 7) });
    expect(again.resources.find((r) => r.name === "a")?.spec.read()).toMatchObject({ rate: 5 });
    expect(again.stats).toEqual({ filesRead: 0, filesReused: 3 });
    // each the same as a validator that kept nothing sees
    for (const [opts, result] of [
      [{ root: dir, ...values("staging", 7) }, again],
      [{ root: dir, ...values("production", 8), patches }, patched],
    ] as const) {
      expect(seen(result)).toEqual(seen(await new RepositoryValidator({ workers: { threads: 0 } }).validate(opts)));
    }
  });

  it("running side by side, check such a file once: one waits for the other's verdict", async () => {
    const files = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`k${i}.yaml`, orgKey({ name: `k${i}`, rate: 5 })]));
    const dir = await tempRepo({ ...files, "valued.yaml": orgKey({ name: "v", rate: "${var:rate}" }) });
    const validator = new RepositoryValidator({ workers: { threads: 0 } });
    const [staging, production] = await Promise.all([
      validator.validate({ root: dir, ...values("staging", 7) }),
      validator.validate({ root: dir, ...values("production", 8) }),
    ]);
    // the eight shared files once between them, the valued one by each
    expect(staging.stats.filesRead + production.stats.filesRead).toBe(8 + 2);
    expect(production.resources.find((r) => r.name === "v")?.spec.read()).toMatchObject({ rate: 8 });
    expect(staging.resources.find((r) => r.name === "v")?.spec.read()).toMatchObject({ rate: 7 });
    expect(seen(production)).toEqual(seen(await new RepositoryValidator({ workers: { threads: 0 } }).validate({ root: dir, ...values("production", 8) })));
  });
});
