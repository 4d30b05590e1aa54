/**
 * Selection against the sandbox over real HTTP, on the examples: a targeted apply calls only
 * for its target (and what it references), orphans outside a selector are left alone, and two
 * instances with disjoint selectors (each its own state) share one sandbox without touching
 * each other's resources.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { Agent } from "undici";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { runApply } from "../../src/run/run-apply.js";
import { loadConfig } from "../../src/config/config.js";
import { silentLogger } from "../../src/logger.js";
import { runPlan } from "../../src/run/run-plan.js";
import { SqliteStateBackend } from "../../src/record/sqlite/sqlite-backend.js";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import type { SelectionRequest } from "../../src/select/selection.js";
import { RepositoryValidator } from "../../src/validate/repository/repository-validator.js";
import type { Harness } from "../helpers/apply.js";
import { harness } from "../helpers/apply.js";
import { runCli } from "../helpers/cli.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);
let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const select = (r: Partial<SelectionRequest>): SelectionRequest => ({ targets: [], excludes: [], kinds: [], ...r });
/** Management operations the sandbox carried out (inside batch calls or not): method and path without the query. */
const operations = (sandbox: SandboxHandle): string[] =>
  sandbox.inspect
    .calls()
    .log.filter((c) => !["traffic", "batch", "unknown"].includes(c.operation))
    .map((c) => `${c.method} ${c.path.split("?")[0]!}`)
    .sort();

describe("selection on the examples", () => {
  it("a targeted apply changes only the target and what it references, and says so", async () => {
    h = await harness();
    const { plan, summary } = await h.apply({ selection: select({ targets: ["OAuthClient/petstore-mobile"] }) });
    expect(plan.selection).toMatchObject({
      targets: ["OAuthClient/petstore-mobile"],
      selected: 2,
      leftOut: 15,
      pulledIn: [{ id: "ApiDefinition/petstore", by: ["OAuthClient/petstore-mobile"] }],
    });
    expect([...summary.applied].sort()).toEqual(["ApiDefinition/petstore", "OAuthClient/petstore-mobile"]);
    expect(operations(h.sandbox)).toEqual(["PATCH /gw/apis/oas/petstore-v1", "PUT /gw/oauth/clients/petstore-v1/petstore-mobile-app"]);
    expect([...(await h.state.read()).resources.keys()].sort()).toEqual(["ApiDefinition/petstore", "OAuthClient/petstore-mobile"]);
    // the rest is still to do, and the full plan says so
    expect((await h.plan()).summary).toMatchObject({ create: 10, update: 5, noop: 2 });
  });

  it("--exclude leaves a target's reference out; --kind and --selector pick by kind and labels", async () => {
    h = await harness();
    await h.apply({ selection: select({ targets: ["OAuthClient/petstore-mobile"], excludes: ["ApiDefinition/petstore"] }) });
    expect(operations(h.sandbox)).toEqual(["PUT /gw/oauth/clients/petstore-v1/petstore-mobile-app"]);
    h.sandbox.inspect.resetCalls();
    await h.apply({ selection: select({ kinds: ["OrgKey"], selector: "plan in (gold)" }) });
    expect(operations(h.sandbox)).toEqual(["POST /gw/org/keys/acme"]);
  });

  it("orphans outside the selection are never reported, deactivated or forgotten", async () => {
    h = await harness({ configExtra: "orphans: deactivate\n" });
    await h.apply();
    // globex (plan: silver) leaves the repository; acme (plan: gold) stays
    const keys = path.join(h.dir, "config/gateway/org-keys.yaml");
    await writeFile(keys, (await readFile(keys, "utf8")).split("\n---\n")[0]!);
    h.sandbox.inspect.resetCalls();

    for (const selector of ["team=storefront", "plan=gold", "plan notin (silver)"]) {
      const { plan } = await h.apply({ selection: select({ selector }) });
      expect(plan.changes.filter((c) => c.action === "orphan")).toEqual([]);
      expect(plan.selection).toMatchObject({ selector, recordsOutside: 1 });
    }
    expect(operations(h.sandbox)).toEqual([]);
    expect((await h.state.read()).resources.get("OrgKey/globex")).toMatchObject({ status: "applied", labels: { plan: "silver" } });

    const silver = await h.apply({ selection: select({ selector: "plan=silver" }) });
    expect(silver.plan.changes.filter((c) => c.action === "orphan").map((c) => [c.id, c.deactivate])).toEqual([["OrgKey/globex", true]]);
    expect(operations(h.sandbox)).toEqual(["POST /gw/org/keys/globex"]);
    expect((await h.state.read()).resources.get("OrgKey/globex")!.deactivatedAt).toBeDefined();
  });

  it("two instances with disjoint config selectors, each with its own state, converge on one sandbox", async () => {
    h = await harness({ configExtra: "selector: team=storefront\n" });
    const configA = path.join(h.dir, "gatesync.yaml");
    const configB = path.join(h.dir, "gatesync-b.yaml");
    await writeFile(
      configB,
      (await readFile(configA, "utf8")).replace("selector: team=storefront", "selector: team!=storefront").replace("./state/state.db", "./state-b/state.db"),
    );
    const stateB = new SqliteStateBackend(path.join(h.dir, "state-b/state.db"));
    const validator = new RepositoryValidator();
    const dispatcher = new Agent();
    const root = path.join(h.dir, "config");
    const applyB = async (): Promise<Awaited<ReturnType<typeof runApply>>> =>
      runApply({ config: await loadConfig(configB), root, validator, state: stateB, env: h!.env, logger: silentLogger(), dispatcher });
    try {
      // interleaved, twice: the second round calls nothing
      const a1 = await h.apply();
      const b1 = await applyB();
      expect(a1.plan.selection).toMatchObject({ configSelector: "team=storefront", selected: 1, leftOut: 16 });
      expect(b1.plan.selection).toMatchObject({ configSelector: "team!=storefront", selected: 16, leftOut: 1 });
      h.sandbox.inspect.resetCalls();
      const a2 = await h.apply();
      const b2 = await applyB();
      expect(operations(h.sandbox)).toEqual([]);
      expect(a2.plan.changes.every((c) => c.action === "no-op")).toBe(true);
      expect(b2.plan.changes.every((c) => c.action === "no-op")).toBe(true);
      const idsA = [...(await h.state.read()).resources.keys()];
      const idsB = [...(await stateB.read()).resources.keys()];
      expect(idsA).toEqual(["ApiDefinition/petstore"]);
      expect(idsB).toHaveLength(16);
      expect(idsB).not.toContain("ApiDefinition/petstore");
      // each object exactly once on the servers
      const objects = h.sandbox.inspect.objects() as Record<string, unknown[]>;
      for (const k of ["products", "portalWebhooks", "dashboardHooks", "llmSettings", "orgKeys"]) expect(objects[k]).toHaveLength(2);
      // neither reports the other's resources as orphans
      const planB = await runPlan({ config: await loadConfig(configB), root, validator, state: stateB, env: h.env });
      expect(planB.plan.summary.orphan).toBe(0);
    } finally {
      await dispatcher.close();
    }
  });
});

describe("selection on the command line", () => {
  it("plan --target prints the selection header; apply --plan keeps the saved plan's selection", async () => {
    h = await harness();
    const cfg = path.join(h.dir, "gatesync.yaml");
    const out = path.join(h.dir, "plan.json");
    const plan = await runCli(["plan", "--config", cfg, "--target", "ApiProduct/storefront", "--out", out], h.env);
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain(
      "Selection: --target ApiProduct/storefront — 3 of 17 resources selected, 14 left out; pulled in by reference: ApiDefinition/orders (by ApiProduct/storefront), ApiDefinition/petstore (by ApiProduct/storefront).",
    );
    const md = await runCli(["plan", "--config", cfg, "--kind", "OrgKey", "--format", "markdown"], h.env);
    expect(md.stdout).toContain("> Selection: --kind OrgKey — 2 of 17 resources selected, 15 left out.");
    expect((await runCli(["apply", "--config", cfg, "--plan", out, "--kind", "OrgKey"], h.env)).stderr).toContain("cannot be given with --plan");
    const applied = await runCli(["apply", "--config", cfg, "--plan", out, "--allow-empty-state"], { ...h.env, GATESYNC_LOG_LEVEL: "silent" });
    expect(applied.code).toBe(0);
    expect(applied.stdout).toContain("Apply: 3 applied");
    expect([...(await h.state.read()).resources.keys()].sort()).toEqual(["ApiDefinition/orders", "ApiDefinition/petstore", "ApiProduct/storefront"]);
    const bad = await runCli(["plan", "--config", cfg, "--target", "ApiProduct/shop"], h.env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(
      "--target ApiProduct/shop: no such resource in the repository or the state (known: ApiProduct/open-data, ApiProduct/storefront)",
    );
  });

  it("a malformed config selector is a CONFIG_INVALID error at load", async () => {
    h = await harness({ configExtra: "selector: team in (a\n" });
    const r = await runCli(["plan", "--config", path.join(h.dir, "gatesync.yaml")], h.env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("error[CONFIG_INVALID]");
    expect(r.stderr).toContain("is not closed");
  });
});
