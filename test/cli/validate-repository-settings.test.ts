/**
 * Migration to the two owners (issue 44): `gatesync validate` of the repository's gatesync.yaml
 * (at the root of a git work tree, where a daemon reads the team's settings) says, located,
 * which of its sections a daemon ignores; following the hint — local settings in a file of
 * one's own, passed with --config — leaves nothing to say, and the CLI runs as before.
 */
import { copyFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { committedRepo } from "../helpers/git-repo.js";
import { doc } from "../helpers/plan.js";
import { positionOf, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

const whole = `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
orphans: deactivate
environments:
  staging:
    targets: { gateway: { url: "http://127.0.0.1:8081", credentialEnv: GW_KEY } }
    values: { rate: 10 }
`;
const files = { "config/keys.yaml": doc("OrgKey", "acme", "keyId: org-acme\nrate: ${var:rate}"), "gatesync.yaml": whole };

afterAll(removeTempRepos);

describe("validate of the repository's gatesync.yaml", () => {
  it("says, located, which sections a daemon reading the repository ignores; moved to a file of one's own, nothing is said", async () => {
    const { dir } = await committedRepo(files);
    const r = await runCli(["validate", "--config", path.join(dir, "gatesync.yaml")], { NO_COLOR: "1" });
    expect(r.code, r.stderr).toBe(0);
    const at = (token: string): string => `${positionOf(whole, token).line}:${positionOf(whole, token).column}`;
    expect(r.stdout).toContain(
      `info[CONFIG_SETTING_IGNORED] gatesync.yaml:${at("{ directory")} source: source is an operator setting: a daemon reading this repository ignores it`,
    );
    expect(r.stdout).toContain(`gatesync.yaml:${at("deactivate")} orphans: orphans is an operator setting`);
    expect(r.stdout).toContain(`gatesync.yaml:${at("{ gateway")} environments.staging.targets: environments.staging.targets is an operator setting`);
    expect(r.stdout).toContain("hint: remove it from the repository's gatesync.yaml (keep local settings in a file of your own, passed with --config)");
    expect(r.stdout).not.toMatch(/values is an operator setting/);
    // the hint followed: the whole file for local runs under another name, the team's settings in gatesync.yaml
    await copyFile(path.join(dir, "gatesync.yaml"), path.join(dir, "gatesync.local.yaml"));
    await writeFile(
      path.join(dir, "gatesync.yaml"),
      "apiVersion: gatesync.dev/v1\nkind: GatesyncConfig\nenvironments:\n  staging:\n    values: { rate: 10 }\n",
    );
    const local = await runCli(["validate", "--config", path.join(dir, "gatesync.local.yaml")], { NO_COLOR: "1" });
    expect(local.code, local.stderr).toBe(0);
    expect(local.stdout).not.toContain("CONFIG_SETTING_IGNORED");
  });

  it("says nothing of a gatesync.yaml outside a git work tree (a daemon's own file beside its directory source)", async () => {
    const dir = await tempRepo(files);
    const r = await runCli(["validate", "--config", path.join(dir, "gatesync.yaml")], { NO_COLOR: "1" });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain("CONFIG_SETTING_IGNORED");
  });
});
