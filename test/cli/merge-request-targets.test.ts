/**
 * The targets' settings of a merge-request plan are the daemon's (issue 55): a merge request
 * whose gatesync.yaml moves the batch route onto its own API and sets `batch.maxSize: 1` plans,
 * in a real CLI process with CI=true against a real daemon process, exactly what it plans with
 * the daemon's own file — the daemon's route (`/gw-batch/`) and batch size, served by its
 * `GET /config`, are used. With no daemon to ask, the checkout's settings are ignored with a note.
 * On the old code the checkout's route refused the merge request's API (BATCH_ROUTE_RESERVED).
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnCli } from "../helpers/cli.js";
import { committedRepo } from "../helpers/git-repo.js";
import { spawnDaemon, stopDaemon } from "../helpers/daemon-process.js";
import type { DaemonProcess } from "../helpers/daemon-process.js";
import { doc, petstore } from "../helpers/plan.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

const stateToken = "merge-request-targets-state-token";
const targets = (batch: string): string => `targets:
  gateway: { url: "http://127.0.0.1:1", credentialEnv: GW_KEY, batch: { ${batch}, keyEnv: BATCH_KEY } }
  portal: { url: "http://127.0.0.1:1", credentialEnv: PORTAL_KEY }
`;
const settings = (batch: string, extra = ""): string =>
  `apiVersion: gatesync.dev/v1\nkind: GatesyncConfig\nsource: { directory: ./config }\n${targets(batch)}state: { backend: sqlite, path: .gatesync/state.db }\n${extra}`;
const daemonBatch = "listenPath: /gw-batch/, apiId: gw-loopback";
const keys = ["a", "b", "c"].map((n) => doc("OrgKey", n, `keyId: org-${n}\nrate: 5`)).join("---\n");

let daemon: DaemonProcess;

beforeAll(async () => {
  const dir = await tempRepo();
  await mkdir(path.join(dir, "config"));
  await writeFile(path.join(dir, "config/keys.yaml"), keys);
  await writeFile(
    path.join(dir, "gatesync.yaml"),
    settings(daemonBatch, `schedule: { interval: 1h }\nserver: { listen: "127.0.0.1:0", stateTokenEnv: STATE_TOKEN }\n`),
  );
  daemon = await spawnDaemon("gatesync.yaml", dir, { STATE_TOKEN: stateToken });
}, 90_000);
afterAll(async () => {
  await stopDaemon(daemon);
  await removeTempRepos();
});

/** A merge request's checkout adding the petstore API (listen path /petstore/) and three keys, with its gatesync.yaml's batch settings. */
async function checkout(batch: string): Promise<string> {
  const { dir } = await committedRepo({ "gatesync.yaml": settings(batch), "config/keys.yaml": keys, "config/petstore.yaml": petstore });
  return dir;
}

const job = { CI: "true", GATESYNC_STATE_TOKEN: stateToken, NO_COLOR: "1" };
const plan = (dir: string, env: Record<string, string>) =>
  spawnCli(["plan", "--config", "gatesync.yaml", "--dir", "config", "--allow-empty-state"], { cwd: dir, env: { ...job, ...env } });

describe("a merge-request plan's targets' settings", () => {
  it("are the daemon's: a merge request moving the batch route and its size plans what the daemon's own settings plan", async () => {
    const own = await plan(await checkout(daemonBatch), { GATESYNC_STATE_URL: daemon.url });
    expect(own.code, own.stderr).toBe(0);
    const hostile = await plan(await checkout("listenPath: /petstore/, apiId: petstore-v1, maxSize: 1"), { GATESYNC_STATE_URL: daemon.url });
    expect(hostile.stderr).not.toContain("BATCH_ROUTE_RESERVED");
    expect(hostile.code, hostile.stderr).toBe(0);
    expect(hostile.stdout).toContain("ApiDefinition/petstore");
    // the daemon's batch size (50): one batch call, as with its own file; the checkout's (1) would make four
    const calls = (out: string): string | undefined => /^.*HTTP call.*$/m.exec(out)?.[0];
    expect(calls(hostile.stdout)).toContain("1 batch call carrying 4 gateway changes");
    expect(calls(hostile.stdout)).toBe(calls(own.stdout));
    expect(hostile.stdout).toContain("PATCH /gw/apis/oas/petstore-v1?listenPath=%2Fpetstore%2F [batch]");
  }, 90_000);

  it("are the defaults with no daemon to ask, the checkout's said ignored", async () => {
    const hostile = await plan(await checkout("listenPath: /petstore/, apiId: petstore-v1, maxSize: 1"), {});
    expect(hostile.stderr).toContain("a merge-request job takes no operator setting from the merge request: the targets' batch route and size");
    expect(hostile.stderr).not.toContain("BATCH_ROUTE_RESERVED");
    expect(hostile.code, hostile.stderr).toBe(0);
    const validate = await spawnCli(["validate", "--config", "gatesync.yaml"], { cwd: await checkout("listenPath: /petstore/, maxSize: 1"), env: job });
    expect(validate.code, validate.stdout + validate.stderr).toBe(0);
    expect(validate.stdout + validate.stderr).toContain("the targets' batch route and size");
  }, 90_000);
});
