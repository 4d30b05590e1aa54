/**
 * The test tiers (test/helpers/test-tiers.ts) are what `npm run test:unit` promises: a file of the
 * `unit` tier starts no process, reaches no PostgreSQL and drives no browser. The tiers are read
 * from imports; these checks read the files' text another way, so a helper that starts a process
 * without the classifier knowing it shows here.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { slowInProcess, testTiers } from "../helpers/test-tiers.js";
import { projectRoot } from "./source-files.js";

const tiers = testTiers();
const text = (file: string): string => readFileSync(path.join(projectRoot, file), "utf8");
const importsHelper = (file: string, helper: string): boolean => new RegExp(`from "[./]*/helpers/${helper}\\.js"`).test(text(file));

/** Calls that start a process, connect to PostgreSQL or launch a browser, as a test file writes them. */
const startsSomething =
  /\b(spawn|spawnSync|execFile|execFileSync|execSync|fork|spawnCli|spawnReplica|spawnDaemon|launchBrowser)\(|\bnew pg\.(Client|Pool)\b|chromium\.launch/;

/** Helpers of test/ whose every importer is a service file. */
const serviceHelpers = ["postgres", "daemon-process", "browser", "replica", "git-remote", "git-repo", "promotion-daemon", "sops-file"];

describe("the test tiers", () => {
  it("put every test file in exactly one tier", () => {
    const all = [...tiers.unit, ...tiers.slow, ...tiers.services];
    expect(new Set(all).size).toBe(all.length);
    expect(tiers.unit.length).toBeGreaterThan(50);
    for (const file of tiers.postgres) expect(tiers.services, file).toContain(file);
  });

  it("keep the unit tier free of processes, PostgreSQL and browsers", () => {
    const offenders = tiers.unit.filter((f) => startsSomething.test(text(f)) || serviceHelpers.some((h) => importsHelper(f, h)));
    expect(offenders.map((f) => `${f}: ${startsSomething.exec(text(f))?.[0] ?? "imports a service helper"}`)).toEqual([]);
  });

  it("name why each service file is one", () => {
    for (const file of tiers.services) expect(tiers.reasons.get(file), file).toMatch(/^(imports|uses) /);
    // a file that imports the PostgreSQL helper is known to need it
    for (const file of [...tiers.unit, ...tiers.slow, ...tiers.services].filter((f) => importsHelper(f, "postgres"))) {
      expect(tiers.postgres, file).toContain(file);
    }
  });

  it("list as slow only in-process files that exist", () => {
    for (const file of slowInProcess.keys()) expect(tiers.slow, `${file}: a service file, or no longer there`).toContain(file);
  });
});
