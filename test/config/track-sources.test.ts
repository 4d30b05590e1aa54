/**
 * Which environments share one fetch (daemon/environment-sources.ts, config/track-section.ts
 * trackKey): a `track:` naming the very branch the top level follows is the top level's source
 * (one fetch, one cache directory), another branch or a tag pattern its own. And what the CLI
 * takes from the daemon's `GET /config` as an environment's followed ref (followedRefFrom): a
 * hostile answer is dropped, never shown.
 */
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { environmentsOf } from "../../src/config/environments.js";
import { followedRefFrom } from "../../src/config/track-section.js";
import { EnvironmentSources } from "../../src/daemon/environments/environment-sources.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

const yaml = `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { git: { url: https://example.com/team/apis.git, branch: main } }
targets:
  gateway: { url: "http://127.0.0.1:9", credentialEnv: GW_KEY }
environments:
  dev: {}
  staging:
    track: { branch: main }
  next:
    track: { branch: next }
  production:
    track: { tag: "v*" }
`;

describe("environment sources", () => {
  it("fetches the top level's branch once when an environment's track names it, another branch or a pattern apart", async () => {
    const dir = await tempRepo({ "gatesync.yaml": yaml });
    const config = await loadConfig(path.join(dir, "gatesync.yaml"));
    const sources = new EnvironmentSources(config, environmentsOf(config), { GW_KEY: "k" });
    try {
      expect(sources.of("staging")).toBe(sources.of("dev"));
      expect(sources.of("next")).not.toBe(sources.of("dev"));
      expect(sources.of("production")).not.toBe(sources.of("dev"));
      expect(sources.of("production")).not.toBe(sources.of("next"));
    } finally {
      await sources.closeShared();
    }
  });
});

describe("followedRefFrom: the daemon's answer", () => {
  it("takes a well-formed ref of each kind", () => {
    expect(followedRefFrom({ branch: "release/2026" })).toEqual({ branch: "release/2026" });
    expect(followedRefFrom({ tag: "v*" })).toEqual({ tag: "v*" });
    expect(followedRefFrom({ promotedFrom: "staging" })).toEqual({ promotedFrom: "staging" });
    expect(followedRefFrom({ defaultBranch: true })).toEqual({ defaultBranch: true });
    expect(followedRefFrom({ commit: "0123456789abcdef0123456789abcdef01234567" })).toEqual({ commit: "0123456789abcdef0123456789abcdef01234567" });
  });

  it("drops huge strings, control characters, markup and wrong types", () => {
    const hostile: unknown[] = [
      null,
      "main",
      42,
      [],
      { branch: "m".repeat(201) },
      { branch: "x".repeat(5_000_000) },
      { tag: "v*\nreaches it at once" },
      { branch: "main\u0000" },
      { branch: "main\u001b[31m" },
      { branch: "main\u202e" },
      { branch: "`main`" },
      { branch: "<b>main</b>" },
      { branch: "" },
      { branch: 1 },
      { branch: ["main"] },
      { branch: { toString: () => "main" } },
      { promotedFrom: "s".repeat(41) },
      { defaultBranch: "true" },
      { defaultBranch: 1 },
      { commit: "0123456789ABCDEF0123456789ABCDEF01234567" },
      { commit: "0123456789abcdef0123456789abcdef01234567 " },
      { commit: "f".repeat(65) },
      { commit: 123456789 },
    ];
    for (const answer of hostile) expect(followedRefFrom(answer), JSON.stringify(answer)?.slice(0, 80)).toBeUndefined();
  });
});
