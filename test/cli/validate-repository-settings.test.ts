/**
 * A fresh repository validates with no finding (issue 55): `gatesync init && gatesync validate`,
 * as the README shows it, in a real git work tree and a real process, prints "valid" and nothing
 * else. The operator settings of the repository's gatesync.yaml (source, targets, state …, which
 * local runs need) are said only where they matter — by a daemon reading the repository whose
 * values in force differ (test/daemon/effective-settings-views.test.ts) — never by validate.
 */
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, spawnCli } from "../helpers/cli.js";
import { committedRepo, git } from "../helpers/git-repo.js";
import { doc } from "../helpers/plan.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

describe("validate of a repository's gatesync.yaml", () => {
  it("gatesync init && gatesync validate prints valid, with no finding", async () => {
    const dir = await tempRepo();
    git(dir, "init", "-q", "-b", "main");
    const init = await spawnCli(["init"], { cwd: dir, env: { NO_COLOR: "1", CI: "" } });
    expect(init.code, init.stderr).toBe(0);
    const validate = await spawnCli(["validate"], { cwd: dir, env: { NO_COLOR: "1", CI: "" } });
    expect(validate.code, validate.stderr).toBe(0);
    expect(validate.stdout).toBe("valid: 8 resources in 8 files\n");
    expect(validate.stderr).toBe("");
  }, 60_000);

  it("says nothing of the operator settings a committed gatesync.yaml keeps for local runs", async () => {
    const whole = `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
orphans: deactivate
environments:
  staging:
    targets: { gateway: { url: "http://127.0.0.1:8081", credentialEnv: GW_KEY } }
    values: { rate: 10 }
`;
    const { dir } = await committedRepo({ "config/keys.yaml": doc("OrgKey", "acme", "keyId: org-acme\nrate: ${var:rate}"), "gatesync.yaml": whole });
    const r = await runCli(["validate", "--config", path.join(dir, "gatesync.yaml")], { NO_COLOR: "1" });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("valid: 1 resources in 1 files\n");
  });
});
