/**
 * Adoption against the sandbox over real HTTP: objects made by hand (before gatesync) are
 * adopted, from the repository's annotation or by `gatesync state adopt`; plan and apply then
 * create nothing, and send the spec where the kind has an update.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import type { Harness } from "../helpers/apply.js";
import { harness } from "../helpers/apply.js";
import { runCli } from "../helpers/cli.js";
import { doc } from "../helpers/plan.js";
import { call, dash, llm, portal } from "../helpers/sandbox.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);
let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const annotated = (kind: string, name: string, id: string, spec: string): string =>
  doc(kind, name, spec).replace(`  name: ${name}\n`, `  name: ${name}\n  annotations:\n    gatesync.dev/adopt: "${id}"\n`);
const productSpec = "Name: shop\nProviderID: 1";
const hookSpec = "Name: CRM\nURL: https://crm.example.com/hook\nMethod: POST\nTimeout: 10\nEvents: [UserRegistered]";
const llmSpec = "attributes:\n  model_name: support-large\n  max_tokens: 512";
const dashSpec = "name: alerts\nmethod: POST\ntarget_path: https://chat.example.com/alerts";

/** The four creatable kinds, made by hand on the servers: their ids. */
async function madeByHand(sandbox: SandboxHandle): Promise<{ product: string; hook: string; llm: string }> {
  const p = await call(`${sandbox.urls.portal}/products`, {
    method: "POST",
    headers: portal,
    body: { Name: "shop", ProviderID: 1, IsDocumentationOnly: false },
  });
  const w = await call(`${sandbox.urls.portal}/webhooks`, {
    method: "POST",
    headers: portal,
    body: { Name: "old name", URL: "https://crm.example.com/old", Method: "POST", Timeout: 3, Events: ["UserRegistered"] },
  });
  const l = await call(`${sandbox.urls.llm}/llm-settings`, {
    method: "POST",
    headers: llm,
    body: { data: { type: "llm-settings", attributes: { model_name: "support-large", max_tokens: 512 } } },
  });
  const d = await call(`${sandbox.urls.dashboard}/api/hooks`, {
    method: "POST",
    headers: dash,
    body: { name: "alerts", method: "POST", target_path: "https://chat.example.com/alerts", header_map: {} },
  });
  expect([p.status, w.status, l.status, d.status].every((s) => s >= 200 && s < 300)).toBe(true);
  const id = (body: unknown, ...keys: string[]): string => String(keys.reduce<unknown>((v, k) => (v as Record<string, unknown>)[k], body));
  return { product: id(p.body, "ID"), hook: id(w.body, "ID"), llm: id(l.body, "data", "id") };
}

const counts = (sandbox: SandboxHandle): number[] => {
  const o = sandbox.inspect.objects() as Record<string, unknown[]>;
  return [o.products!.length, o.portalWebhooks!.length, o.llmSettings!.length, o.dashboardHooks!.length];
};
const managementCalls = (sandbox: SandboxHandle): string[] =>
  sandbox.inspect
    .calls()
    .log.filter((c) => !["traffic", "batch", "unknown"].includes(c.operation))
    .map((c) => `${c.method} ${c.path}`);

describe("adoption", () => {
  it("adopts each creatable kind from the repository's annotation: nothing created, the webhook's spec sent to its id", async () => {
    h = await harness({ files: { "adopted.yaml": "" } });
    const ids = await madeByHand(h.sandbox);
    const before = counts(h.sandbox);
    h.sandbox.inspect.resetCalls();
    await writeFile(
      path.join(h.dir, "config/adopted.yaml"),
      [
        annotated("ApiProduct", "shop", ids.product, productSpec),
        annotated("PortalWebhook", "crm", ids.hook, hookSpec),
        annotated("LlmSettings", "assistant", ids.llm, llmSpec),
        annotated("DashboardWebhook", "alerts", "hook-1", dashSpec),
      ].join("---\n"),
    );
    const plan = await h.plan();
    expect(plan.changes.map((c) => [c.id, c.action, c.operation?.method ?? null, c.adopt?.serverId])).toEqual([
      ["ApiProduct/shop", "adopt", null, ids.product],
      ["PortalWebhook/crm", "adopt", "PUT", ids.hook],
      ["DashboardWebhook/alerts", "adopt", null, "hook-1"],
      ["LlmSettings/assistant", "adopt", null, ids.llm],
    ]);
    expect(plan.summary).toMatchObject({ adopt: 4, create: 0, calls: { total: 1 } });
    expect(plan.changes.find((c) => c.id === "ApiProduct/shop")!.notes.join(" ")).toContain("its current content is unknown");

    const { summary } = await h.apply();
    expect(summary.applied).toEqual(["PortalWebhook/crm"]);
    expect(managementCalls(h.sandbox)).toEqual([`PUT /portal/api/webhooks/${ids.hook}`]);
    expect(counts(h.sandbox)).toEqual(before);
    expect(
      (h.sandbox.inspect.objects() as { portalWebhooks: Array<{ ID: unknown; URL: string }> }).portalWebhooks.find((w) => String(w.ID) === ids.hook)!.URL,
    ).toBe("https://crm.example.com/hook");
    const state = await h.state.read();
    expect(state.resources.get("ApiProduct/shop")).toMatchObject({
      serverId: ids.product,
      status: "applied",
      adopted: { source: "repository", verified: false },
    });
    expect(state.resources.get("PortalWebhook/crm")).toMatchObject({ serverId: ids.hook, address: { webhook_id: ids.hook }, adopted: { verified: true } });
    expect(state.resources.get("LlmSettings/assistant")!.adopted!.verified).toBe(false);

    // converged: nothing more to do; a later change to a kind without an update is blocked, as for any created object
    expect((await h.plan()).changes.every((c) => c.action === "no-op")).toBe(true);
    await writeFile(path.join(h.dir, "config/adopted.yaml"), annotated("ApiProduct", "shop", ids.product, "Name: shop-renamed\nProviderID: 1"));
    const changed = await h.plan();
    expect(changed.changes.find((c) => c.id === "ApiProduct/shop")!.action).toBe("blocked");
  });

  it("adopts by command; refuses an id recorded for another resource, a kind that cannot be adopted, a recorded resource", async () => {
    h = await harness({ files: { "p.yaml": doc("ApiProduct", "shop", productSpec) + "---\n" + doc("ApiProduct", "other", "Name: other\nProviderID: 1") } });
    const ids = await madeByHand(h.sandbox);
    const cfg = path.join(h.dir, "gatesync.yaml");
    const adopt = await runCli(["state", "adopt", "ApiProduct/shop", "--id", ids.product, "--config", cfg], h.env);
    expect(adopt.stderr).toBe("");
    expect(adopt.stdout).toContain(`adopted ApiProduct/shop as server id ${ids.product} (not verified`);
    const again = await runCli(["state", "adopt", "ApiProduct/other", "--id", ids.product, "--config", cfg], h.env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`server id ${ids.product} is already recorded for ApiProduct/shop`);
    expect((await runCli(["state", "adopt", "OrgKey/acme", "--id", "x", "--config", cfg], h.env)).stderr).toContain("OrgKey cannot be adopted");
    expect((await runCli(["state", "list", "--config", cfg], h.env)).stdout).toContain(`ApiProduct/shop (id ${ids.product}) [adopted; not verified]`);

    h.sandbox.inspect.resetCalls();
    const { plan, summary } = await h.apply();
    expect(plan.changes.map((c) => [c.id, c.action])).toEqual([
      ["ApiProduct/other", "create"],
      ["ApiProduct/shop", "adopt"],
    ]);
    expect(summary.applied).toEqual(["ApiProduct/other"]);
    expect(managementCalls(h.sandbox)).toEqual(["POST /portal/api/products"]);
    expect((await runCli(["state", "adopt", "ApiProduct/shop", "--id", "999", "--config", cfg], h.env)).stderr).toContain(
      "ApiProduct/shop is already recorded",
    );
  });

  it("blocks an annotation whose id another resource holds, or that contradicts the record", async () => {
    h = await harness({ files: { "p.yaml": doc("ApiProduct", "shop", productSpec) } });
    await h.apply();
    const id = (await h.state.read()).resources.get("ApiProduct/shop")!.serverId!;
    await writeFile(path.join(h.dir, "config/q.yaml"), annotated("ApiProduct", "copy", id, "Name: copy\nProviderID: 1"));
    await writeFile(path.join(h.dir, "config/p.yaml"), annotated("ApiProduct", "shop", "12345", productSpec));
    const plan = await h.plan();
    const copy = plan.changes.find((c) => c.id === "ApiProduct/copy")!;
    expect(copy.action).toBe("blocked");
    expect(copy.reason).toContain(`server id ${id} is already recorded or adopted for ApiProduct/shop`);
    const shop = plan.changes.find((c) => c.id === "ApiProduct/shop")!;
    expect(shop.action).toBe("blocked");
    expect(shop.reason).toContain(`records this resource with server id ${id}`);
    await writeFile(path.join(h.dir, "config/q.yaml"), annotated("ApiProduct", "copy", " ", "Name: copy\nProviderID: 1"));
    expect((await h.plan()).changes.find((c) => c.id === "ApiProduct/copy")!.reason).toContain("gives no server id");
    // an org key is written to its spec's own id: an annotation naming another id is refused, its hint followed adopts
    await writeFile(path.join(h.dir, "config/p.yaml"), annotated("OrgKey", "k", "x", "keyId: k"));
    const key = (await h.plan()).changes.find((c) => c.id === "OrgKey/k")!;
    expect([key.action, key.reason]).toEqual(["blocked", expect.stringContaining('gives "x", but an OrgKey is written to its spec\'s own id "k"') as unknown]);
    const set = /set `(gatesync\.dev\/adopt: "k")`/.exec(key.hint ?? "")![1]!;
    await writeFile(path.join(h.dir, "config/p.yaml"), doc("OrgKey", "k", "keyId: k").replace("  name: k\n", `  name: k\n  annotations:\n    ${set}\n`));
    const followed = (await h.plan()).changes.find((c) => c.id === "OrgKey/k")!;
    expect([followed.action, followed.adopt?.serverId, followed.operation?.path]).toEqual(["adopt", "k", "/gw/org/keys/k"]);
    expect(followed.notes.join()).toContain("taken as existing");
  });
});
