/**
 * A dashboard webhook whose create ended in doubt is settled by the next apply, without a
 * person: it is sent again, and the dashboard's answer decides (200: it was not there; 409: the
 * earlier create happened, recorded as applied with a note, since no id comes back).
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { Harness } from "../helpers/apply.js";
import { harness } from "../helpers/apply.js";
import { doc } from "../helpers/plan.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});
afterAll(removeTempRepos);

const hook = (target = "https://chat.example.com/x"): Record<string, string> => ({
  "w.yaml": doc("DashboardWebhook", "d", `name: alerts\nmethod: POST\ntarget_path: ${target}`),
});

describe("DashboardWebhook: a create in doubt is settled by sending it again", () => {
  it("409: the earlier create happened — recorded as applied, saying no id came back, and nothing duplicated", async () => {
    h = await harness({ files: hook(), sandbox: { faults: { lostResponseRate: 1, interfaces: ["dashboard"] } } });
    expect((await h.apply()).summary.inDoubt.map((x) => x.id)).toEqual(["DashboardWebhook/d"]);
    expect(h.sandbox.inspect.store.dashboardHooks).toHaveLength(1);
    h.sandbox.inspect.setFaults({ lostResponseRate: 0 });

    const plan = await h.plan();
    expect(plan.changes[0]).toMatchObject({ action: "create", operation: { name: "createDashboardWebhook" } });
    expect(plan.changes[0]!.notes.join(" ")).toMatch(/sent again to settle it/);

    const { summary } = await h.apply();
    expect(summary.applied).toEqual(["DashboardWebhook/d"]);
    expect(summary.inDoubt).toEqual([]);
    expect(h.sandbox.inspect.store.dashboardHooks).toHaveLength(1);
    expect(h.sandbox.inspect.calls().counts.createDashboardWebhook?.byStatus).toEqual({ "0": 1, "409": 1 });
    const record = (await h.state.read()).resources.get("DashboardWebhook/d")!;
    expect(record).toMatchObject({ status: "applied", note: expect.stringMatching(/409.*earlier create had happened.*no id/) as string });
    expect(record.serverId).toBeUndefined();
    expect((await h.plan()).changes[0]).toMatchObject({ action: "no-op" });
  });

  it("200: it was not there — created now, once", async () => {
    h = await harness({ files: hook(), sandbox: { faults: { resetRate: 1, interfaces: ["dashboard"] } } });
    expect((await h.apply()).summary.inDoubt.map((x) => x.id)).toEqual(["DashboardWebhook/d"]);
    expect(h.sandbox.inspect.store.dashboardHooks).toHaveLength(0);
    h.sandbox.inspect.setFaults({ resetRate: 0 });
    const { summary } = await h.apply();
    expect(summary.applied).toEqual(["DashboardWebhook/d"]);
    expect(h.sandbox.inspect.store.dashboardHooks).toHaveLength(1);
    expect((await h.state.read()).resources.get("DashboardWebhook/d")!.note).toBeUndefined();
  });

  it("stays blocked when the spec now names another hook than the create in doubt", async () => {
    h = await harness({ files: hook(), sandbox: { faults: { lostResponseRate: 1, interfaces: ["dashboard"] } } });
    await h.apply();
    h.sandbox.inspect.setFaults({ lostResponseRate: 0 });
    await writeFile(path.join(h.dir, "config/w.yaml"), hook("https://chat.example.com/other")["w.yaml"]!);
    expect((await h.plan()).changes[0]).toMatchObject({ action: "blocked", reason: expect.stringMatching(/outcome is unknown/) as string });
  });

  it("a 409 to a create nothing was in doubt about is a failure, not an adoption", async () => {
    h = await harness({ files: hook() });
    h.sandbox.inspect.store.dashboardHooks.push({ id: "by-hand", name: "alerts", method: "POST", target_path: "https://chat.example.com/x", header_map: {} });
    const { summary } = await h.apply();
    expect(summary.failed).toEqual([{ id: "DashboardWebhook/d", message: expect.stringMatching(/^409/) as string }]);
    expect((await h.state.read()).resources.get("DashboardWebhook/d")?.status).toBe("failed");
  });
});
