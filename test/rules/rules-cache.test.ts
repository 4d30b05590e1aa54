/**
 * The rulesets' findings kept across processes (src/rules/findings-cache.ts), as a CI job or a
 * pre-commit hook meets it: `gatesync validate` run again as a new process on the same
 * repository. An unchanged file's entry is used as it is (not written again), a changed file, a
 * changed ruleset — or a changed file it extends — is linted again, a corrupt or tampered entry
 * is ignored and written again, and the findings are those of a run without any cache.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { mkdir, readFile, rm, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { pruneFindingsCache } from "../../src/rules/findings-cache.js";
import { spawnCli } from "../helpers/cli.js";
import { projectRoot, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

interface Finding {
  severity: string;
  code: string;
  rule?: string;
  file?: string;
  line?: number;
  message: string;
}

const api = (name: string, team: string | undefined): string =>
  [
    "apiVersion: gatesync.dev/v1",
    "kind: ApiDefinition",
    "metadata:",
    `  name: ${name}`,
    ...(team === undefined ? [] : [`  labels: { team: ${team} }`]),
    "spec:",
    `  apiId: ${name}`,
    `  definitionFile: openapi/${name}.yaml`,
    "",
  ].join("\n");

const openapi = (title: string, contact: boolean): string =>
  [
    "openapi: 3.0.3",
    "info:",
    `  title: ${title}`,
    "  version: 1.0.0",
    ...(contact ? ["  contact: { name: Platform }"] : []),
    "paths:",
    "  /pets:",
    "    get:",
    "      responses:",
    "        '200': { description: ok }",
    "",
  ].join("\n");

async function repository(): Promise<string> {
  const dir = await tempRepo({
    "gatesync.yaml":
      "apiVersion: gatesync.dev/v1\nkind: GatesyncConfig\nsource: { directory: ./config }\ntargets: {}\nrules: { openapi: rules/openapi.yaml, resources: rules/resources.yaml }\n",
    "rules/base.yaml":
      'rules:\n  team-label:\n    given: "$.metadata"\n    severity: warn\n    message: "an API names its team"\n    then: { field: labels.team, function: truthy }\n',
    "rules/resources.yaml":
      'extends: [./base.yaml]\nrules:\n  name-prefix:\n    given: "$.metadata.name"\n    severity: error\n    then: { function: pattern, functionOptions: { match: "^shop-" } }\n',
    "rules/openapi.yaml": 'rules:\n  has-contact:\n    given: "$.info"\n    severity: warn\n    then: { field: contact, function: truthy }\n',
  });
  await mkdir(path.join(dir, "config/openapi"), { recursive: true });
  const files: Record<string, string> = {
    "config/shop-a.yaml": api("shop-a", "shop"),
    "config/shop-b.yaml": api("shop-b", undefined),
    "config/pets.yaml": api("pets", "pets"),
    "config/openapi/shop-a.yaml": openapi("Shop A", true),
    "config/openapi/shop-b.yaml": openapi("Shop B", false),
    "config/openapi/pets.yaml": openapi("Pets", false),
  };
  for (const [f, text] of Object.entries(files)) await writeFile(path.join(dir, f), text);
  return dir;
}

const cacheDir = (dir: string): string => path.join(dir, ".gatesync/rules-cache");

/** Each entry of the cache with what identifies its writing (inode and modification time). */
function entries(dir: string): Map<string, string> {
  const at = cacheDir(dir);
  return new Map(
    readdirSync(at)
      .filter((n) => n.endsWith(".json"))
      .map((n) => {
        const s = statSync(path.join(at, n));
        return [n, `${s.ino}:${s.mtimeMs}`];
      }),
  );
}

async function validate(dir: string, cache = true): Promise<Finding[]> {
  const r = await spawnCli(["validate", "--config", path.join(dir, "gatesync.yaml"), "--format", "json"], {
    env: cache ? {} : { GATESYNC_RULES_CACHE: "off" },
    cwd: projectRoot,
  });
  expect(r.stderr).toBe("");
  return (JSON.parse(r.stdout) as { diagnostics: Finding[] }).diagnostics;
}

const ruled = (d: Finding[]): Finding[] => d.filter((x) => x.code === "RULESET_VIOLATION");

describe("the findings cache", () => {
  it("keeps an unchanged file's findings, lints a changed file again, and equals a run without cache", async () => {
    const dir = await repository();
    const first = await validate(dir);
    // at the values the rules looked at: shop-b's metadata, pets' name, the documents' info
    expect(ruled(first).map((d) => `${d.rule} ${d.file}:${d.line}`)).toEqual([
      "has-contact openapi/pets.yaml:3",
      "has-contact openapi/shop-b.yaml:3",
      "name-prefix pets.yaml:4",
      "team-label shop-b.yaml:4",
    ]);
    const written = entries(dir);
    expect(written.size).toBe(6);
    // some time passes: an entry written again would carry a newer time
    for (const n of written.keys()) await utimes(path.join(cacheDir(dir), n), new Date(1_000_000), new Date(1_000_000));
    const before = entries(dir);

    // a hit: the same findings, no entry written
    expect(await validate(dir)).toEqual(first);
    expect(entries(dir)).toEqual(before);

    // a miss: the changed file alone is linted again, and its finding is gone
    await writeFile(path.join(dir, "config/shop-b.yaml"), api("shop-b", "shop"));
    const changed = await validate(dir);
    expect(ruled(changed).filter((d) => d.rule === "team-label")).toEqual([]);
    const after = entries(dir);
    const fresh = [...after.keys()].filter((n) => before.get(n) !== after.get(n));
    expect(fresh).toHaveLength(1);
    expect(changed).toEqual(await validate(dir, false));
  }, 180_000);

  it("is missed by every file when a ruleset changes, or a file it extends", async () => {
    const dir = await repository();
    await validate(dir);
    const first = entries(dir);

    // the extended file only: its message changes in the findings
    const base = path.join(dir, "rules/base.yaml");
    await writeFile(base, (await readFile(base, "utf8")).replace("an API names its team", "label the owning team"));
    const extended = await validate(dir);
    expect(ruled(extended).find((d) => d.rule === "team-label")?.message).toBe("label the owning team");
    // every file linted again: an entry of its own beside the former one (both kept: the cache is under its bound)
    const second = entries(dir);
    expect(second.size).toBe(2 * first.size);

    // the named ruleset: an error rule becomes a warning
    const resources = path.join(dir, "rules/resources.yaml");
    await writeFile(resources, (await readFile(resources, "utf8")).replace("severity: error", "severity: warn"));
    const relaxed = await validate(dir);
    expect(ruled(relaxed).find((d) => d.rule === "name-prefix")?.severity).toBe("warning");
    expect(entries(dir).size).toBe(3 * first.size);
    expect(relaxed).toEqual(await validate(dir, false));
  }, 180_000);

  it("ignores a corrupt or tampered entry, lints again and writes it anew", async () => {
    const dir = await repository();
    const clean = await validate(dir);
    const names = [...entries(dir).keys()];
    const at = (n: string): string => path.join(cacheDir(dir), n);
    const entry = (n: string): { key: string; file: string; findings: Record<string, Finding[]> } =>
      JSON.parse(readFileSync(at(n), "utf8")) as { key: string; file: string; findings: Record<string, Finding[]> };
    const withFindings = names.filter((n) => Object.values(entry(n).findings).some((f) => f.length > 0));
    expect(withFindings.length).toBeGreaterThanOrEqual(3);
    const [cut, hushed, moved] = withFindings as [string, string, string];
    // cut short (a process killed while writing before renames were atomic; a full disk)
    await writeFile(at(cut), readFileSync(at(cut), "utf8").slice(0, 40));
    // well-formed JSON hiding a finding: the findings of a slot emptied, one given a foreign key
    const h = entry(hushed);
    await writeFile(at(hushed), JSON.stringify({ ...h, findings: Object.fromEntries(Object.keys(h.findings).map((k) => [k, [{ bogus: true }]])) }));
    // another file's finding under this entry's name
    const m = entry(moved);
    const other = Object.values(m.findings).flat()[0]!;
    await writeFile(at(moved), JSON.stringify({ ...m, findings: { x: [{ ...other, file: "elsewhere.yaml" }] } }));
    await writeFile(at("0".repeat(64) + ".json"), "not json");

    expect(await validate(dir)).toEqual(clean);
    for (const n of [cut, hushed, moved]) expect(entry(n).file).toBeDefined();
    expect(entry(hushed)).toEqual(h);
    expect(entry(moved)).toEqual(m);
    expect(await validate(dir, false)).toEqual(clean);
  }, 180_000);

  it("is not used while git tracks it: a committed entry cannot hide a finding, and following the hint brings the cache back", async () => {
    const dir = await repository();
    const git = (...args: string[]): string =>
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd: dir, encoding: "utf8" });
    git("init", "-q");
    git("add", "-A");
    git("commit", "-qm", "config");
    const honest = ruled(await validate(dir));
    expect(honest.map((d) => `${d.severity} ${d.rule} ${d.file}`)).toContain("error name-prefix config/pets.yaml");
    // a merge request commits the cache, every entry emptied of its findings: well-formed, right keys
    for (const n of entries(dir).keys()) {
      const at = path.join(cacheDir(dir), n);
      const entry = JSON.parse(readFileSync(at, "utf8")) as { findings: Record<string, unknown[]> };
      for (const slot of Object.keys(entry.findings)) entry.findings[slot] = [];
      await writeFile(at, JSON.stringify(entry));
    }
    git("add", "-f", ".gatesync/rules-cache");
    git("commit", "-qm", "cache");
    const forged = entries(dir);
    const r = await spawnCli(["validate", "--config", path.join(dir, "gatesync.yaml"), "--format", "json"], { cwd: projectRoot });
    expect(r.code).toBe(1);
    const found = (JSON.parse(r.stdout) as { diagnostics: Finding[] }).diagnostics;
    expect(ruled(found)).toEqual(honest);
    const warning = found.find((d) => d.code === "RULES_CACHE_TRACKED") as Finding & { hint: string };
    expect(warning.severity).toBe("warning");
    // nothing read, nothing written
    expect(entries(dir)).toEqual(forged);
    // the hint, followed: the directory out of git and out of the work tree, .gatesync/ ignored
    expect(warning.hint).toContain("git rm -r .gatesync/rules-cache");
    git("rm", "-rq", ".gatesync/rules-cache");
    await writeFile(path.join(dir, ".gitignore"), ".gatesync/\n");
    const after = await validate(dir);
    expect(after.filter((d) => d.code === "RULES_CACHE_TRACKED")).toEqual([]);
    expect(ruled(after)).toEqual(honest);
    expect(entries(dir).size).toBe(6);
  }, 180_000);

  it("is not used when git cannot say whether it tracks it, and turning it off, as the hint says, silences the warning", async () => {
    const dir = await repository();
    execFileSync("git", ["init", "-q"], { cwd: dir });
    // the cache directory exists (an earlier run): what is in it may be what a commit brought
    await mkdir(cacheDir(dir), { recursive: true });
    // a git that fails at the question (here: a wrapper on PATH), as a broken or locked repository would
    const bin = path.join(dir, "bin");
    await mkdir(bin);
    const real = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
    await writeFile(path.join(bin, "git"), `#!/bin/sh\nif [ "$1" = ls-files ]; then echo "fatal: index file corrupt" >&2; exit 128; fi\nexec ${real} "$@"\n`, {
      mode: 0o755,
    });
    const run = async (env: NodeJS.ProcessEnv): Promise<Finding[]> => {
      const r = await spawnCli(["validate", "--config", path.join(dir, "gatesync.yaml"), "--format", "json"], { cwd: projectRoot, env });
      return (JSON.parse(r.stdout) as { diagnostics: Finding[] }).diagnostics;
    };
    const broken = { PATH: `${bin}:${process.env.PATH ?? ""}` };
    const found = await run(broken);
    const warning = found.find((d) => d.code === "RULES_CACHE_TRACKED") as Finding & { hint: string };
    expect(warning.message).toContain("could not say");
    expect(warning.hint).toContain("GATESYNC_RULES_CACHE=off");
    // neither read nor written
    expect(entries(dir).size).toBe(0);
    const off = await run({ ...broken, GATESYNC_RULES_CACHE: "off" });
    expect(off.filter((d) => d.code === "RULES_CACHE_TRACKED")).toEqual([]);
    expect(ruled(off)).toEqual(ruled(found));
  }, 180_000);

  it("is bounded: entries no run uses are removed once they outnumber the used ones", async () => {
    const dir = await tempRepo({});
    const at = cacheDir(dir);
    await mkdir(at, { recursive: true });
    const name = (i: number): string => `${i.toString(16).padStart(64, "0")}.json`;
    for (let i = 0; i < 1_010; i++) await writeFile(path.join(at, name(i)), "{}");
    await writeFile(path.join(at, "notes.txt"), "kept: not an entry");
    pruneFindingsCache(at, new Set([name(0), name(1), name(2)]));
    expect(readdirSync(at).sort()).toEqual([name(0), name(1), name(2), "notes.txt"].sort());
    // below the bound nothing is removed (a run over part of the repository keeps the rest)
    for (let i = 10; i < 20; i++) await writeFile(path.join(at, name(i)), "{}");
    pruneFindingsCache(at, new Set([name(0)]));
    expect(readdirSync(at)).toHaveLength(14);
    await rm(at, { recursive: true });
  });
});

describe("the findings cache with environments", () => {
  it("lints again when an environment's value or patch changes what a file becomes, though the file did not change", async () => {
    const config = (rate: number, patchRate: number): string =>
      [
        "apiVersion: gatesync.dev/v1",
        "kind: GatesyncConfig",
        "source: { directory: ./config }",
        "targets: {}",
        "rules: { resources: rules/resources.yaml }",
        "environments:",
        `  staging: { values: { rate: ${rate} } }`,
        `  production: { values: { rate: 1 }, patches: [{ kind: OrgKey, metadata: { name: acme }, spec: { rate: ${patchRate} } }] }`,
        "",
      ].join("\n");
    const dir = await tempRepo({
      "gatesync.yaml": config(50, 60),
      "rules/resources.yaml":
        'rules:\n  agreed-rate:\n    given: "$.spec.rate"\n    severity: error\n    message: "above the agreed rate"\n    then: { function: schema, functionOptions: { schema: { maximum: 100 } } }\n',
      "config/acme.yaml": "apiVersion: gatesync.dev/v1\nkind: OrgKey\nmetadata: { name: acme }\nspec:\n  keyId: acme\n  rate: ${var:rate}\n",
    });
    const rateFindings = async (env: string): Promise<string[]> => {
      const r = await spawnCli(["validate", "--config", path.join(dir, "gatesync.yaml"), "--env", env, "--format", "json"], { cwd: projectRoot });
      return (JSON.parse(r.stdout) as { diagnostics: Finding[] }).diagnostics.filter((d) => d.rule === "agreed-rate").map((d) => d.message);
    };
    expect(await rateFindings("staging")).toEqual([]);
    expect(await rateFindings("production")).toEqual([]);
    // the resource file is byte for byte the same: only the config's value and patch change
    await writeFile(path.join(dir, "gatesync.yaml"), config(500, 600));
    expect(await rateFindings("staging")).toEqual(["above the agreed rate"]);
    // the patch set the rate: its finding names the environment (and is located in the patch)
    expect(await rateFindings("production")).toEqual(["environment production: above the agreed rate"]);
  }, 60_000);
});
