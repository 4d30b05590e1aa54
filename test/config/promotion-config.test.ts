/**
 * `track`, `soak` and `promotion` of an environment (config/track-section.ts, config/promotion-section.ts): the defaults (the
 * branch, no soak, manual), a chain dev → staging → production read as written, and the chain's
 * errors located at the setting: a source that is not an environment, itself, a cycle, a shape
 * the schema refuses.
 */
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { environmentNamed } from "../../src/config/environments.js";
import { ValidationFailed } from "../../src/errors.js";
import { positionOf, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

const configWith = (environments: string): string => `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { git: { url: https://example.com/team/apis.git, branch: main } }
targets:
  gateway: { url: "http://127.0.0.1:9", credentialEnv: GW_KEY }
server: { promoteTokenEnv: PROMOTE }
environments:
${environments}`;

const load = async (text: string): Promise<Awaited<ReturnType<typeof loadConfig>>> => {
  const dir = await tempRepo({ "gatesync.yaml": text });
  return loadConfig(path.join(dir, "gatesync.yaml"));
};

const failures = async (text: string): Promise<string[]> => {
  const failure = await load(text).catch((e: unknown) => e);
  expect(failure).toBeInstanceOf(ValidationFailed);
  return (failure as ValidationFailed).diagnostics.map((d) => `${d.path} ${d.line}:${d.column} ${d.message}`);
};

describe("track, soak and promotion", () => {
  it("reads a chain dev → staging → production, with the branch, no soak and manual promotion as defaults", async () => {
    const config = await load(
      configWith(`  dev: { soak: 10m }
  staging: { track: { promotedFrom: dev }, soak: 1h, promotion: auto }
  production: { track: { promotedFrom: staging } }
`),
    );
    expect(config.server.promoteTokenEnv).toBe("PROMOTE");
    const settings = (name: string): unknown => {
      const c = environmentNamed(config, name).config;
      return { track: c.track, promotion: c.promotion };
    };
    expect(settings("dev")).toEqual({ track: undefined, promotion: { soakMs: 600_000, mode: "manual" } });
    expect(settings("staging")).toEqual({ track: { promotedFrom: "dev" }, promotion: { soakMs: 3_600_000, mode: "auto" } });
    expect(settings("production")).toEqual({ track: { promotedFrom: "staging" }, promotion: { soakMs: 0, mode: "manual" } });
  });

  it("locates a source that is not an environment, and one promoted from itself", async () => {
    const text = configWith(`  staging: { track: { promotedFrom: stagign } }
  production: { track: { promotedFrom: production } }
`);
    const found = await failures(text);
    const typo = positionOf(text, "stagign");
    const self = positionOf(text, "production }");
    expect(found).toContain(
      `environments.staging.track.promotedFrom ${typo.line}:${typo.column} environment staging is promoted from stagign, which is not an environment`,
    );
    expect(found).toContain(`environments.production.track.promotedFrom ${self.line}:${self.column} environment production is promoted from itself`);
  });

  it("refuses a cycle, naming it", async () => {
    const found = await failures(
      configWith(`  a: { track: { promotedFrom: c } }
  b: { track: { promotedFrom: a } }
  c: { track: { promotedFrom: b } }
`),
    );
    expect(found.some((f) => f.startsWith("environments.a.track.promotedFrom") && f.endsWith("a cycle: a → c → b → a"))).toBe(true);
  });

  it("refuses a track of two kinds and an unknown promotion mode", async () => {
    const found = await failures(configWith(`  staging: { track: { branch: main, promotedFrom: dev }, promotion: sometimes }\n  dev: {}\n`));
    expect(found.some((f) => f.startsWith("environments.staging.track "))).toBe(true);
    expect(found.some((f) => f.startsWith("environments.staging.promotion "))).toBe(true);
  });
});
