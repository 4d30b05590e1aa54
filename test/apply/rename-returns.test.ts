/**
 * Names that come back, through the CLI against the sandbox, in a real git repository (issue 54):
 * a portal webhook renamed (declared) and changed, then the old commit checked out and applied
 * again, then the rename commit reverted with `git revert` and applied — one webhook on the
 * portal all along, updated back to the earlier values each time. A product (which the portal
 * cannot update) coming back to a name keeps its values, says so, and following the plan's hint
 * settles it; the way to a second object under an earlier name is an explicit `state resolve`.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { Harness } from "../helpers/apply.js";
import { harness } from "../helpers/apply.js";
import { runCli } from "../helpers/cli.js";
import { git } from "../helpers/git-repo.js";
import { removeTempRepos } from "../helpers/temp-repo.js";
import { doc, product } from "../helpers/resources.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});
afterAll(removeTempRepos);

const cli = (...args: string[]): ReturnType<typeof runCli> => runCli([...args, "-c", path.join(h!.dir, "gatesync.yaml")], h!.env);
const annotated = (text: string, from: string): string =>
  text.replace(/(metadata:\n {2}name: .+\n)/, `$1  annotations:\n    gatesync.dev/moved-from: ${from}\n`);
const hook = (name: string, title: string, url: string): string =>
  doc("PortalWebhook", name, `Name: ${title}\nURL: ${url}\nMethod: POST\nEvents: [UserRegistered]`);
const v1 = hook("orders", "Orders", "https://hooks.example/v1");
const v2 = annotated(hook("orders-events", "Order events", "https://hooks.example/v2"), "orders");

/** The harness's directory as a git repository of its `config/` (state and gatesync.yaml stay out of it). */
function commitConfig(message: string): string {
  const dir = h!.dir;
  git(dir, "add", "config");
  git(dir, "commit", "-q", "-m", message);
  return git(dir, "rev-parse", "HEAD");
}
const webhooks = (): Array<Record<string, unknown>> => [...h!.sandbox.inspect.store.portalWebhooks.values()] as Array<Record<string, unknown>>;

describe("a renamed webhook's old commit applied again, and the rename reverted", () => {
  it("leaves one webhook on the portal, updated back to the earlier values each time", async () => {
    h = await harness({ files: { "hook.yaml": v1 } });
    git(h.dir, "init", "-q", "-b", "main");
    const first = commitConfig("orders webhook");
    expect((await cli("apply", "--auto-approve", "--allow-empty-state")).code).toBe(0);
    const [created] = webhooks();
    await writeFile(path.join(h.dir, "config", "hook.yaml"), v2);
    const rename = commitConfig("rename orders → orders-events, new URL");
    const renamed = await cli("apply", "--auto-approve");
    expect(renamed.code).toBe(0);
    expect(webhooks()).toMatchObject([{ ID: created!.ID, Name: "Order events", URL: "https://hooks.example/v2" }]);

    // an old commit applied again (a re-apply of v1): the same webhook, v1's values
    git(h.dir, "checkout", "-q", first);
    const plan = await cli("plan", "--detailed-exitcode");
    expect(plan.code).toBe(2);
    expect(plan.stdout).toContain(
      `~ PortalWebhook/orders  update  from PortalWebhook/orders-events (back to an earlier name: same object)  PUT /webhooks/${String(created!.ID)}`,
    );
    expect(plan.stdout).toContain("0 to create");
    expect((await cli("apply", "--auto-approve")).code).toBe(0);
    expect(webhooks()).toMatchObject([{ ID: created!.ID, Name: "Orders", URL: "https://hooks.example/v1" }]);
    expect((await cli("plan", "--detailed-exitcode")).code).toBe(0);

    // forward again (the rename commit), then `git revert` of it, committed and applied
    git(h.dir, "checkout", "-q", "main");
    expect((await cli("apply", "--auto-approve")).code).toBe(0);
    expect(webhooks()).toMatchObject([{ ID: created!.ID, Name: "Order events" }]);
    git(h.dir, "revert", "--no-edit", rename);
    const reverted = await cli("apply", "--auto-approve");
    expect(reverted.code).toBe(0);
    expect(reverted.stdout).toContain("1 moved");
    expect(webhooks()).toMatchObject([{ ID: created!.ID, Name: "Orders", URL: "https://hooks.example/v1" }]);
    expect(h.sandbox.inspect.store.portalWebhooks.size).toBe(1);
    const list = await cli("state", "list");
    expect(list.stdout).toContain("PortalWebhook/orders");
    expect(list.stdout).not.toContain("PortalWebhook/orders-events");
  });

  it("an earlier name declared beside its newer one creates nothing until `state resolve NAME --forget` says a second webhook is meant", async () => {
    h = await harness({ files: { "hook.yaml": v1 } });
    expect((await cli("apply", "--auto-approve", "--allow-empty-state")).code).toBe(0);
    await writeFile(path.join(h.dir, "config", "hook.yaml"), v2);
    expect((await cli("apply", "--auto-approve")).code).toBe(0);
    await writeFile(path.join(h.dir, "config", "second.yaml"), hook("orders", "Orders (new)", "https://hooks.example/new"));
    const blocked = await cli("apply", "--auto-approve");
    expect(blocked.code).toBe(3);
    expect(blocked.stdout).toContain("PortalWebhook/orders is an earlier name of PortalWebhook/orders-events");
    expect(h.sandbox.inspect.store.portalWebhooks.size).toBe(1);
    // the hint, followed: the operator says a new object is meant
    const forgot = await cli("state", "resolve", "PortalWebhook/orders", "--forget");
    expect(forgot.code).toBe(0);
    expect(forgot.stdout).toContain("forgot PortalWebhook/orders as an earlier name of PortalWebhook/orders-events");
    expect((await cli("apply", "--auto-approve")).code).toBe(0);
    expect(
      webhooks()
        .map((w) => w.Name)
        .sort(),
    ).toEqual(["Order events", "Orders (new)"]);
    expect((await cli("plan", "--detailed-exitcode")).code).toBe(0);
  });
});

describe("a product (the portal cannot update it) coming back to its earlier name", () => {
  it("keeps its values and says so, creates nothing; following the hint settles it", async () => {
    h = await harness({ files: { "p.yaml": product({ name: "shop", title: "Shop" }) } });
    git(h.dir, "init", "-q", "-b", "main");
    const first = commitConfig("shop");
    expect((await cli("apply", "--auto-approve", "--allow-empty-state")).code).toBe(0);
    const [id] = [...h.sandbox.inspect.store.products.keys()];
    await writeFile(path.join(h.dir, "config", "p.yaml"), annotated(product({ name: "storefront", title: "Shop" }), "shop"));
    commitConfig("rename shop → storefront");
    expect((await cli("apply", "--auto-approve")).code).toBe(0);
    // renamed in the portal by hand, the spec set to match and recorded (the kind's own advice)
    (h.sandbox.inspect.store.products.get(id!) as Record<string, unknown>).Name = "Storefront";
    await writeFile(path.join(h.dir, "config", "p.yaml"), product({ name: "storefront", title: "Storefront" }));
    commitConfig("storefront's name");
    expect((await cli("state", "resolve", "ApiProduct/storefront", "--accept")).code).toBe(0);

    git(h.dir, "checkout", "-q", first);
    const back = await cli("apply", "--auto-approve");
    expect(back.code).toBe(3);
    expect(back.stdout).toContain("the object stays as ApiProduct/storefront left it (the values below are not sent) and no second one is created");
    expect(h.sandbox.inspect.store.products.size).toBe(1);
    const plan = await cli("plan");
    expect(plan.stdout).toContain("! ApiProduct/shop  blocked");
    expect(plan.stdout).toContain("0 to create");
    // the hint: change it in the portal by hand, then `state resolve ApiProduct/shop --accept`
    expect(plan.stdout).toContain("gatesync state resolve ApiProduct/shop --accept");
    (h.sandbox.inspect.store.products.get(id!) as Record<string, unknown>).Name = "Shop";
    expect((await cli("state", "resolve", "ApiProduct/shop", "--accept")).code).toBe(0);
    expect((await cli("plan", "--detailed-exitcode")).code).toBe(0);
    expect((await cli("apply", "--auto-approve")).code).toBe(0);
    expect(h.sandbox.inspect.store.products.size).toBe(1);
    expect([...h.sandbox.inspect.store.products.keys()]).toEqual([id]);
  });
});
