import { mkdir, writeFile } from "node:fs/promises";
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

describe("gatesync apply", () => {
  it("refuses to apply without confirmation when not on a terminal", async () => {
    h = await harness({ files: { "k.yaml": doc("OrgKey", "k", "keyId: k") } });
    const r = await runCli(["apply", "--config", path.join(h.dir, "gatesync.yaml")], h.env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("refusing to apply without confirmation");
    expect(h.sandbox.inspect.calls().log).toEqual([]);
  });

  it("applies with --auto-approve (exit 0), prints the summary, and lists the state", async () => {
    h = await harness({ files: { "k.yaml": doc("OrgKey", "k", "keyId: k"), "p.yaml": doc("ApiProduct", "p", "Name: P\nProviderID: 1") } });
    const cfg = path.join(h.dir, "gatesync.yaml");
    const r = await runCli(["apply", "--config", cfg, "--auto-approve", "--allow-empty-state"], { ...h.env, GATESYNC_LOG_LEVEL: "silent" });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Apply: 2 applied, 0 failed, 0 in doubt, 0 blocked, 0 unchanged, 0 orphaned");
    expect(r.stdout).toMatch(/Calls: gateway 1 \(1 batch call carrying 1 change\), portal 1/);
    const list = await runCli(["state", "list", "--config", cfg], h.env);
    expect(list.stdout).toMatch(/applied\s+ApiProduct\/p \(id \d+\)/);
  });

  it("applies the resources of a checkout given with --dir instead of the config's source", async () => {
    h = await harness({ files: { "k.yaml": doc("OrgKey", "k", "keyId: k") } });
    const other = path.join(h.dir, "checkout");
    await mkdir(other);
    await writeFile(path.join(other, "p.yaml"), doc("ApiProduct", "p", "Name: P\nProviderID: 1"));
    const r = await runCli(["apply", "--config", path.join(h.dir, "gatesync.yaml"), "--dir", other, "--auto-approve", "--allow-empty-state"], {
      ...h.env,
      GATESYNC_LOG_LEVEL: "silent",
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Apply: 1 applied");
    expect([...(await h.state.read()).resources.keys()]).toEqual(["ApiProduct/p"]);
    expect(h.sandbox.inspect.store.orgKeys.has("k")).toBe(false);
  });

  it("refuses an unknown GATESYNC_LOG_LEVEL by name, before any call", async () => {
    h = await harness({ files: { "k.yaml": doc("OrgKey", "k", "keyId: k") } });
    const r = await runCli(["apply", "--config", path.join(h.dir, "gatesync.yaml"), "--auto-approve", "--allow-empty-state"], {
      ...h.env,
      GATESYNC_LOG_LEVEL: "loud",
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('error[USAGE] GATESYNC_LOG_LEVEL is "loud", which is not a log level');
    expect(r.stderr).toContain("use one of trace, debug, info, warn, error, fatal, silent");
    expect(h.sandbox.inspect.calls().log).toEqual([]);
  });

  it("refuses a saved plan it cannot read, or that is not JSON, before any call", async () => {
    h = await harness({ files: { "k.yaml": doc("OrgKey", "k", "keyId: k") } });
    const cfg = path.join(h.dir, "gatesync.yaml");
    const missing = await runCli(["apply", "--config", cfg, "--plan", path.join(h.dir, "nope.json")], h.env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("error[USAGE] cannot read the saved plan");
    await writeFile(path.join(h.dir, "plan.md"), "### gatesync plan\n");
    const markdown = await runCli(["apply", "--config", cfg, "--plan", path.join(h.dir, "plan.md")], h.env);
    expect(markdown.stderr).toContain("plan.md is not a gatesync plan: it is not JSON");
    expect(h.sandbox.inspect.calls().log).toEqual([]);
  });

  it("exits 1 when anything failed, naming the server's message", async () => {
    h = await harness({ files: { "c.yaml": doc("OAuthClient", "c", "apiId: petstore-v1\nclientId: petstore-mobile-app\npolicy_id: no-such-policy") } });
    const r = await runCli(["apply", "--config", path.join(h.dir, "gatesync.yaml"), "--auto-approve", "--allow-empty-state"], {
      ...h.env,
      GATESYNC_LOG_LEVEL: "silent",
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("OAuthClient/c: 404: Policy doesn't exist");
  });

  it("applies a saved plan without asking, and refuses it once applied", async () => {
    h = await harness({ files: { "k.yaml": doc("OrgKey", "k", "keyId: k") } });
    const cfg = path.join(h.dir, "gatesync.yaml");
    const planFile = path.join(h.dir, "plan.json");
    expect((await runCli(["plan", "--config", cfg, "--out", planFile], h.env)).code).toBe(0);
    expect((await runCli(["apply", "--config", cfg, "--plan", planFile, "--allow-empty-state"], { ...h.env, GATESYNC_LOG_LEVEL: "silent" })).code).toBe(0);
    const again = await runCli(["apply", "--config", cfg, "--plan", planFile], { ...h.env, GATESYNC_LOG_LEVEL: "silent" });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("error[STATE_CHANGED]");
  });
});
