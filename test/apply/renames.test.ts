/**
 * Real renames, reverts and deactivations against the sandbox, through the CLI as a user runs
 * them (issues 31 point 2 and 36 points 1, 3, 4): a renamed product or dashboard hook is never
 * made twice, a renamed API under `orphans: deactivate` stays on, a removed API is
 * deactivated (breaking: exit 4) and switched on again when its file comes back byte for byte.
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { Harness } from "../helpers/apply.js";
import { harness } from "../helpers/apply.js";
import { runCli } from "../helpers/cli.js";
import { call } from "../helpers/sandbox.js";
import { removeTempRepos } from "../helpers/temp-repo.js";
import { apiDefinition, doc, orgKey, product } from "../helpers/resources.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});
afterAll(removeTempRepos);

const cli = (...args: string[]): ReturnType<typeof runCli> => runCli([...args, "-c", path.join(h!.dir, "gatesync.yaml")], h!.env);
const file = (name: string): string => path.join(h!.dir, "config", name);
const withAnnotation = (text: string, annotation: string): string => text.replace(/(metadata:\n {2}name: .+\n)/, `$1  annotations:\n    ${annotation}\n`);

const hook = (name: string): string => doc("DashboardWebhook", name, "name: alerts\nmethod: POST\ntarget_path: https://chat.example.com/x");
/** The one API here, under the name `name` (what a rename changes). */
const api = (name: string): string =>
  apiDefinition({ name, apiId: "petstore-v1", listenPath: "/petstore/", definition: { title: "Petstore", server: "http://petstore.internal:8080" } });
const key = orgKey({ name: "acme", keyId: "org-acme", rate: 10 });

describe("renaming a created object (it cannot be updated)", () => {
  it("ApiProduct: undeclared, blocked (exit 3, no second product); declared with gatesync.dev/moved-from, `~ moved` and no call", async () => {
    h = await harness({ files: { "p.yaml": product({ name: "shop", title: "Shop" }) } });
    expect((await cli("apply", "--auto-approve", "--allow-empty-state")).code).toBe(0);
    const [productId] = [...h.sandbox.inspect.store.products.keys()];
    await rm(file("p.yaml"));
    await writeFile(file("storefront.yaml"), product({ name: "storefront", title: "Shop" }));
    const blocked = await cli("apply", "--auto-approve", "--allow-empty-state");
    expect(blocked.code).toBe(3);
    expect(h.sandbox.inspect.store.products.size).toBe(1);
    const plan = await cli("plan");
    expect(plan.stdout).toMatch(/! ApiProduct\/storefront {2}blocked/);
    expect(plan.stdout).toContain("gatesync.dev/moved-from: shop");
    // following the hint: declare the rename
    await writeFile(file("storefront.yaml"), withAnnotation(product({ name: "storefront", title: "Shop" }), "gatesync.dev/moved-from: shop"));
    const moved = await cli("plan", "--detailed-exitcode");
    expect(moved.code).toBe(2);
    expect(moved.stdout).toMatch(/~ ApiProduct\/storefront {2}moved {2}from ApiProduct\/shop\n/);
    expect(moved.stdout).toContain("0 HTTP calls");
    const calls = h.sandbox.inspect.calls().log.length;
    const applied = await cli("apply", "--auto-approve", "--allow-empty-state");
    expect(applied.code).toBe(0);
    expect(applied.stdout).toContain("1 moved");
    expect(applied.stdout).toContain("Moved (renamed; same object, no call): ApiProduct/shop → ApiProduct/storefront");
    expect(h.sandbox.inspect.calls().log.length).toBe(calls);
    const state = await h.state.read();
    expect([...state.resources.keys()]).toEqual(["ApiProduct/storefront"]);
    expect(state.resources.get("ApiProduct/storefront")!.serverId).toBe(String(productId));
    expect((await cli("plan", "--detailed-exitcode")).code).toBe(0);
  });

  it("DashboardWebhook: a declared rename sends nothing (no 409, no failed record left as an orphan)", async () => {
    h = await harness({ files: { "w.yaml": hook("alerts") } });
    await cli("apply", "--auto-approve", "--allow-empty-state");
    await writeFile(file("w.yaml"), withAnnotation(hook("chat-alerts"), "gatesync.dev/moved-from: alerts"));
    // reviewed as a saved plan (its JSON validates against plan.schema.json), then applied as saved
    const saved = path.join(h.dir, "rename.plan.json");
    expect((await cli("plan", "--out", saved)).code).toBe(0);
    const applied = await cli("apply", "--plan", saved);
    expect(applied.code).toBe(0);
    expect(h.sandbox.inspect.calls().counts.createDashboardWebhook?.byStatus).toEqual({ "200": 1 });
    expect([...(await h.state.read()).resources.keys()]).toEqual(["DashboardWebhook/chat-alerts"]);
  });
});

describe("orphans: deactivate", () => {
  it("renaming an API (same apiId) moves it and leaves it on; no deactivation is planned for it", async () => {
    h = await harness({ files: { "a.yaml": api("petstore"), "k.yaml": key }, configExtra: "orphans: deactivate\n" });
    await cli("apply", "--auto-approve", "--allow-empty-state");
    const traffic = `${h.sandbox.urls.base}/petstore/pets`;
    const before = (await call(traffic)).status;
    expect(before).not.toBe(404);
    await writeFile(file("a.yaml"), api("pets"));
    const plan = await cli("plan");
    expect(plan.stdout).toMatch(/~ ApiDefinition\/pets {2}moved {2}from ApiDefinition\/petstore \(detected: same object\)/);
    expect(plan.stdout).not.toContain("deactivate");
    expect((await cli("apply", "--auto-approve", "--allow-empty-state")).code).toBe(0);
    expect(h.sandbox.inspect.store.apis.get("petstore-v1")!.extension).toMatchObject({ info: { state: { active: true } } });
    expect((await call(traffic)).status).toBe(before);
  });

  it("a partial apply (--selector) never deactivates the old name of an object a resource outside the selection declares", async () => {
    const labelled = (name: string, team: string): string => api(name).replace(`  name: ${name}\n`, `  name: ${name}\n  labels: { team: ${team} }\n`);
    h = await harness({
      files: { "a.yaml": labelled("petstore", "a"), "k.yaml": key.replace("  name: acme\n", "  name: acme\n  labels: { team: a }\n") },
      configExtra: "orphans: deactivate\n",
    });
    await cli("apply", "--auto-approve", "--allow-empty-state");
    // renamed and handed to team b: the old record (team a) is in team a's selection, the new resource is not
    await writeFile(file("a.yaml"), labelled("pets", "b"));
    const plan = await cli("plan", "--selector", "team=a");
    expect(plan.stdout).toContain("declared as ApiDefinition/pets: not deactivated");
    expect((await cli("apply", "--auto-approve", "--allow-empty-state", "--selector", "team=a")).code).toBe(0);
    expect(h.sandbox.inspect.store.apis.get("petstore-v1")!.extension).toMatchObject({ info: { state: { active: true } } });
  });

  it("removing the API's file is breaking (plan --fail-on-breaking exits 4); the revert switches it back on", async () => {
    h = await harness({ files: { "a.yaml": api("petstore"), "k.yaml": key }, configExtra: "orphans: deactivate\n" });
    await cli("apply", "--auto-approve", "--allow-empty-state");
    const traffic = `${h.sandbox.urls.base}/petstore/pets`;
    const on = (await call(traffic)).status;
    const original = await readFile(file("a.yaml"), "utf8");
    await rm(file("a.yaml"));
    const review = await cli("plan", "--detailed-exitcode", "--fail-on-breaking");
    expect(review.code).toBe(4);
    expect(review.stdout).toMatch(/- ApiDefinition\/petstore {2}orphan {2}PATCH .*\[batch, deactivate\] {2}⚠ breaking/);
    expect((await cli("apply", "--auto-approve", "--allow-empty-state")).code).toBe(0);
    expect(await call(traffic)).toMatchObject({ status: 404 });
    // the revert: the file back, byte for byte
    await writeFile(file("a.yaml"), original);
    const revert = await cli("plan", "--detailed-exitcode");
    expect(revert.code).toBe(2);
    expect(revert.stdout).toContain("~ definition.x-gw-api-gateway.info.state.active: false → true");
    expect((await cli("apply", "--auto-approve", "--allow-empty-state")).code).toBe(0);
    expect(h.sandbox.inspect.store.apis.get("petstore-v1")!.extension).toMatchObject({ info: { state: { active: true } } });
    expect((await call(traffic)).status).toBe(on);
    const record = (await h.state.read()).resources.get("ApiDefinition/petstore")!;
    expect(record.deactivatedAt).toBeUndefined();
    expect((await cli("plan", "--detailed-exitcode")).code).toBe(0);
  });

  it("a saved plan made with --allow-mass-deactivation is applied as reviewed (apply --plan needs no flag)", async () => {
    h = await harness({ files: { "a.yaml": api("petstore"), "k.yaml": key }, configExtra: "orphans: deactivate\n" });
    await cli("apply", "--auto-approve", "--allow-empty-state");
    await rm(file("a.yaml"));
    await rm(file("k.yaml"));
    const guarded = await cli("plan", "--detailed-exitcode");
    expect(guarded.code).toBe(3);
    expect(guarded.stdout).toContain("Mass deactivation withheld");
    const saved = path.join(h.dir, "empty.plan.json");
    expect((await cli("plan", "--allow-mass-deactivation", "--out", saved)).stdout).toContain("(2 to deactivate)");
    expect((await cli("apply", "--plan", saved)).code).toBe(0);
    expect(h.sandbox.inspect.store.orgKeys.get("org-acme")!.session).toMatchObject({ is_inactive: true });
  });

  it("a deactivated org key comes back on with its file", async () => {
    h = await harness({ files: { "a.yaml": api("petstore"), "k.yaml": key }, configExtra: "orphans: deactivate\n" });
    await cli("apply", "--auto-approve", "--allow-empty-state");
    await rm(file("k.yaml"));
    await cli("apply", "--auto-approve", "--allow-empty-state");
    expect(h.sandbox.inspect.store.orgKeys.get("org-acme")!.session).toMatchObject({ is_inactive: true });
    await writeFile(file("k.yaml"), key);
    expect((await cli("apply", "--auto-approve", "--allow-empty-state")).code).toBe(0);
    expect(h.sandbox.inspect.store.orgKeys.get("org-acme")!.session).toMatchObject({ is_inactive: false, rate: 10 });
    expect((await cli("plan", "--detailed-exitcode")).code).toBe(0);
  });
});

describe("what the plan, the apply summary and `state list` say (issue 31, point 7)", () => {
  it("`state list` marks the records of resources gone from the repository as orphaned, and deactivated ones as such", async () => {
    h = await harness({
      files: { "a.yaml": api("petstore"), "k.yaml": key, "p.yaml": product({ name: "shop", title: "Shop" }) },
      configExtra: "orphans: deactivate\n",
    });
    await cli("apply", "--auto-approve", "--allow-empty-state");
    await rm(file("k.yaml"));
    await rm(file("p.yaml"));
    await cli("apply", "--auto-approve", "--allow-empty-state");
    const list = await cli("state", "list");
    expect(list.stdout).toMatch(/^applied\s+ApiDefinition\/petstore$/m);
    expect(list.stdout).toMatch(/^orphaned, deactivated \S+ OrgKey\/acme$/m);
    expect(list.stdout).toMatch(/^orphaned\s+ApiProduct\/shop \(id \d+\)$/m);
    expect(JSON.parse((await cli("state", "list", "--json")).stdout)).toMatchObject({ orphans: ["ApiProduct/shop", "OrgKey/acme"] });
    // a repository that does not validate: nothing is marked, and the listing says why
    await writeFile(file("bad.yaml"), doc("OrgKey", "bad", "rate: fast"));
    const unmarked = await cli("state", "list");
    expect(unmarked.stdout).toContain("the repository does not validate: records of resources gone from it are not marked orphaned");
    expect(unmarked.stdout).toMatch(/^applied\s+ApiProduct\/shop/m);
  });

  it("the apply summary lists adoptions", async () => {
    h = await harness({ files: { "p.yaml": withAnnotation(product({ name: "shop", title: "Shop" }), 'gatesync.dev/adopt: "41"') } });
    const applied = await cli("apply", "--auto-approve", "--allow-empty-state");
    expect(applied.stdout).toContain("Apply: 0 applied, 1 adopted,");
    expect(applied.stdout).toContain("Adopted (recorded under the server id the annotation or `state adopt` gave): ApiProduct/shop");
  });

  it("numbers the waves it shows 1, 2 … even when a wave holds only unchanged resources", async () => {
    const client = doc(
      "OAuthClient",
      "app",
      "apiRef: petstore\nclientId: petstore-mobile-app\nredirect_uri: https://app.example.com/cb\npolicy_id: mobile-default",
    );
    h = await harness({ files: { "a.yaml": api("petstore"), "c.yaml": client, "k.yaml": key } });
    await cli("apply", "--auto-approve", "--allow-empty-state");
    // wave 1 (the API) changes, wave 2 (the client) does not, and the orphaned key comes last
    await writeFile(file("a.yaml"), api("petstore").replace("title: Petstore", "title: Pets"));
    await rm(file("k.yaml"));
    const plan = await cli("plan");
    expect([...plan.stdout.matchAll(/^wave (\d+)$/gm)].map((m) => m[1])).toEqual(["1", "2"]);
  });
});
