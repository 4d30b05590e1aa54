/**
 * `track:` of an environment in gatesync.yaml (issue 46): the three shapes read as the typed
 * TrackSetting, and what a user meets when the setting is wrong — two keys at once, a pattern or
 * branch that could read as a git option, a `track:` on a directory source — located.
 */
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { environmentsOf } from "../../src/config/environments.js";
import { ValidationFailed } from "../../src/errors.js";
import { positionOf, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

const config = (source: string, tracks: Record<string, string>): string => `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: ${source}
targets:
  gateway: { url: "http://127.0.0.1:9", credentialEnv: GW_KEY }
environments:
${Object.entries(tracks)
  .map(([name, track]) => `  ${name}:${track === "" ? " {}" : `\n    track: ${track}`}`)
  .join("\n")}
`;
const git = "{ git: { url: https://example.com/team/apis.git, branch: main } }";

async function problems(yaml: string): Promise<string[]> {
  const dir = await tempRepo({ "gatesync.yaml": yaml });
  const failure = await loadConfig(path.join(dir, "gatesync.yaml")).catch((e: unknown) => e);
  expect(failure).toBeInstanceOf(ValidationFailed);
  return (failure as ValidationFailed).diagnostics.map((d) => `${d.path} ${d.line}:${d.column} ${d.message}`);
}

describe("track: in gatesync.yaml", () => {
  it("reads each shape as the environment's track; an environment without one follows the top level's ref", async () => {
    const yaml = config(git, { dev: "", staging: "{ branch: release/2026 }", production: '{ tag: "v*" }', canary: "{ promotedFrom: staging }" });
    const dir = await tempRepo({ "gatesync.yaml": yaml });
    const tracks = Object.fromEntries(environmentsOf(await loadConfig(path.join(dir, "gatesync.yaml"))).map((e) => [e.name, e.config.track]));
    expect(tracks).toEqual({ dev: undefined, staging: { branch: "release/2026" }, production: { tag: "v*" }, canary: { promotedFrom: "staging" } });
  });

  it("refuses two shapes at once, and a branch or pattern that starts like an option, at the setting", async () => {
    const yaml = config(git, { a: '{ branch: main, tag: "v*" }', b: '{ tag: "--upload-pack=x" }', c: "{ branch: -f }" });
    const found = await problems(yaml);
    for (const [env, text] of [
      ["a", "{ branch: main"],
      ["b", '"--upload-pack=x"'],
      ["c", "-f }"],
    ] as const) {
      const at = positionOf(yaml, text);
      expect(found.some((f) => f.startsWith(`environments.${env}.track`) && f.includes(`${at.line}:`))).toBe(true);
    }
  });

  it("refuses `track:` when the source is a directory, which has neither branches nor tags", async () => {
    const yaml = config("{ directory: config }", { staging: "{ branch: main }" });
    const found = await problems(yaml);
    const at = positionOf(yaml, "{ branch: main }");
    expect(found, found.join("\n")).toContain(
      `environments.staging.track ${at.line}:${at.column} environment staging sets \`track\`, but the source is a directory`,
    );
  });
});
