/**
 * `gatesync promote` given an address where no daemon answers says so with STATE_UNREACHABLE and
 * the hint to check --daemon / GATESYNC_DAEMON_URL; following that hint (the daemon's real
 * address) makes the same command plan the promotion. Real daemon, real git, two sandboxes.
 */
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { doc } from "../helpers/plan.js";
import { candidateReady, promoteToken, promotionDaemon } from "../helpers/promotion-daemon.js";
import type { PromotionDaemon } from "../helpers/promotion-daemon.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

let d: PromotionDaemon | undefined;

afterAll(async () => {
  await d?.stop();
  await removeTempRepos();
});

/** A loopback port nobody listens on (taken, then given back). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("gatesync promote at a wrong address", () => {
  it("is STATE_UNREACHABLE with the hint to check the address; with the daemon's address, the same command plans the promotion", async () => {
    d = await promotionDaemon({ "config/keys.yaml": doc("OrgKey", "acme", "keyId: org-acme\nrate: 10") });
    await candidateReady(d);
    const wrong = `http://127.0.0.1:${await closedPort()}`;
    const promote = (address: string): ReturnType<typeof runCli> =>
      runCli(["promote", "production", "--dry-run"], { GATESYNC_DAEMON_URL: address, GATESYNC_PROMOTE_TOKEN: promoteToken });
    const refused = await promote(wrong);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`STATE_UNREACHABLE`);
    expect(refused.stderr).toContain(`cannot reach the daemon at ${wrong}`);
    expect(refused.stderr).toContain("check --daemon / GATESYNC_DAEMON_URL");
    expect(refused.stderr).not.toContain(promoteToken);
    // the hint followed: the daemon's own address
    const planned = await promote(d.daemon.url!);
    expect(planned.code, planned.stderr).toBe(0);
    expect(planned.stdout).toMatch(/would apply 1 change; nothing promoted/);
  }, 90_000);
});
