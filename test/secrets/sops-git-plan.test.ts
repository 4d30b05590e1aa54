/**
 * `gatesync plan -c` and `validate -c` with a git source read a `${sops:}` from the commit they
 * fetched, as the daemon does (the operator's file in a directory of its own, holding no
 * secrets): the plan resolves the committed value. A `fileRoot` that climbs out of the
 * repository is refused (PATH_ESCAPE) with the way out; following its second option
 * (`fromDaemonDisk: [sops]`) reads the daemon's disk. On the old code plan read the daemon's
 * directory: SECRET_UNRESOLVED.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { spawnCli } from "../helpers/cli.js";
import { gitRemote, pushFiles } from "../helpers/git-remote.js";
import { ageIdentity, sopsYaml, hmacOrgKey } from "../helpers/sops-file.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

const orgKey = hmacOrgKey("${sops:app.enc.yaml#acme.hmac}");

describe("plan and validate -c with a git source", () => {
  it("read ${sops:} from the fetched commit; a fileRoot out of the repository is refused with the way out", async () => {
    const id = ageIdentity();
    const dir = await tempRepo();
    const work = gitRemote(dir);
    await pushFiles(
      work,
      { "config/org-key.yaml": orgKey, "secrets/app.enc.yaml": sopsYaml({ acme: { hmac: "committed-plan-hmac-3e9f" } }, id.recipient) },
      "acme",
    );
    const home = await tempRepo();
    const config = (secrets: string): string => `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { git: { url: ${JSON.stringify(path.join(dir, "origin.git"))}, branch: main, subdirectory: config, cacheDir: ./cache } }
targets:
  gateway: { url: http://127.0.0.1:1, credentialEnv: GW_KEY }
state: { backend: sqlite, path: ./state.db }
secrets: ${secrets}
`;
    const env = { ...process.env, HOME: home, NO_COLOR: "1", SOPS_AGE_KEY: id.secret, GW_KEY: "gw-key-for-the-plan-test" };
    const run = async (...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
      spawnCli([...args, "--config", "gatesync.yaml"], { cwd: home, env });

    await writeFile(path.join(home, "gatesync.yaml"), config("{ fileRoot: ./secrets }"));
    const planned = await run("plan", "--format", "json");
    expect(planned.code, planned.stderr).toBe(0);
    expect((JSON.parse(planned.stdout) as { changes: Array<{ id: string; action: string }> }).changes).toEqual([
      expect.objectContaining({ id: "OrgKey/acme", action: "create" }),
    ]);
    expect(planned.stdout + planned.stderr).not.toContain("committed-plan-hmac-3e9f");

    await writeFile(path.join(home, "gatesync.yaml"), config("{ fileRoot: ../outside }"));
    const refused = await run("validate");
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(
      /error\[PATH_ESCAPE\] config\/org-key\.yaml:10:16 OrgKey\/acme spec\.hmac_string: .*reads below secrets\.fileRoot \.\.\/outside, which lies outside the repository/,
    );
    expect(refused.stdout).toContain("add sops to secrets.fromDaemonDisk to read it on the daemon's disk");

    // the way out followed: the daemon's own disk
    await mkdir(path.join(home, "secrets"), { recursive: true });
    await writeFile(path.join(home, "secrets/app.enc.yaml"), sopsYaml({ acme: { hmac: "daemon-disk-plan-hmac-77a1" } }, id.recipient));
    await writeFile(path.join(home, "gatesync.yaml"), config("{ fileRoot: ./secrets, fromDaemonDisk: [sops] }"));
    const onDisk = await run("validate");
    expect(onDisk.code, onDisk.stdout).toBe(0);
  }, 120_000);
});
