import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { Harness } from "../helpers/apply.js";
import { harness } from "../helpers/apply.js";
import { runCli } from "../helpers/cli.js";
import { doc } from "../helpers/plan.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);
let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const quiet = { GATESYNC_LOG_LEVEL: "silent" };

describe("blocked changes are a distinct signal", () => {
  it("plan --detailed-exitcode and apply exit 3 while a change is blocked, and say which `state resolve … --accept` settles it", async () => {
    h = await harness({ files: { "p.yaml": doc("ApiProduct", "shop", "Name: Shop\nProviderID: 1"), "k.yaml": doc("OrgKey", "k", "keyId: k\nrate: 5") } });
    const cfg = path.join(h.dir, "gatesync.yaml");
    const env = { ...h.env, ...quiet };
    expect((await runCli(["apply", "--config", cfg, "--auto-approve", "--allow-empty-state"], env)).code).toBe(0);
    // a product cannot be updated: its rename is blocked; the org key's change is not
    await writeFile(path.join(h.dir, "config/p.yaml"), doc("ApiProduct", "shop", "Name: Shop renamed\nProviderID: 1"));
    await writeFile(path.join(h.dir, "config/k.yaml"), doc("OrgKey", "k", "keyId: k\nrate: 6"));
    const plan = await runCli(["plan", "--config", cfg, "--detailed-exitcode"], env);
    expect(plan.code).toBe(3);
    expect(plan.stdout).toContain("gatesync state resolve ApiProduct/shop --accept");
    const apply = await runCli(["apply", "--config", cfg, "--auto-approve", "--allow-empty-state"], env);
    expect(apply.stdout).toContain("Apply: 1 applied, 0 failed, 0 in doubt, 1 blocked");
    expect(apply.stdout).toContain("Blocked, not applied (exit code 3");
    expect(apply.code).toBe(3);
    expect(h.sandbox.inspect.store.orgKeys.get("k")!.session.rate).toBe(6);
    // settled by hand: accepted, after which nothing is blocked
    expect((await runCli(["state", "resolve", "ApiProduct/shop", "--accept", "--config", cfg], env)).code).toBe(0);
    expect((await runCli(["plan", "--config", cfg, "--detailed-exitcode"], env)).code).toBe(0);
  });
});

describe("no request leaves with an unfilled path parameter", () => {
  const hook = (timeout: number): string =>
    doc("PortalWebhook", "audit", `Name: audit\nURL: https://hooks.example.com/a\nMethod: POST\nTimeout: ${timeout}\nEvents: [UserRegistered]`);

  it("state resolve --accept refuses a portal webhook whose id is unknown", async () => {
    h = await harness({ files: { "w.yaml": hook(5) } });
    const r = await runCli(["state", "resolve", "PortalWebhook/audit", "--accept", "--config", path.join(h.dir, "gatesync.yaml")], { ...h.env, ...quiet });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("cannot accept PortalWebhook/audit: its `webhook_id` is unknown");
    expect((await h.state.read()).resources.size).toBe(0);
  });

  it("the plan blocks an update it cannot address, and nothing is sent", async () => {
    h = await harness({ files: { "w.yaml": hook(5) } });
    const cfg = path.join(h.dir, "gatesync.yaml");
    const env = { ...h.env, ...quiet };
    expect((await runCli(["apply", "--config", cfg, "--auto-approve", "--allow-empty-state"], env)).code).toBe(0);
    // a record accepted by an earlier version without the id: applied, but no webhook_id
    const lock = await h.state.lock("test");
    const record = (await h.state.read()).resources.get("PortalWebhook/audit")!;
    const { serverId: _s, ...rest } = record;
    await h.state.write({ ...rest, address: {} });
    await lock.release();
    expect(JSON.stringify((await h.state.read()).resources.get("PortalWebhook/audit"))).not.toContain("webhook_id");
    await writeFile(path.join(h.dir, "config/w.yaml"), hook(9));
    const before = h.sandbox.inspect.calls().log.length;
    const plan = await runCli(["plan", "--config", cfg, "--detailed-exitcode"], env);
    expect(plan.code).toBe(3);
    expect(plan.stdout).toContain("PUT /webhooks/{webhook_id} cannot be sent: the object's `webhook_id` is unknown");
    const apply = await runCli(["apply", "--config", cfg, "--auto-approve", "--allow-empty-state"], env);
    expect(apply.code).toBe(3);
    const sent = h.sandbox.inspect.calls().log.slice(before);
    expect(sent).toEqual([]);
  });
});
