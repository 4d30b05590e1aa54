/**
 * `gatesync state resolve` as the CLI's hints lead a user to it (issue 43, point 5): the command
 * printed under a create in doubt carries the resource, `--forget` and `--env` and runs as
 * printed; `--forget` takes several records, and `--all-orphans` forgets every orphaned one
 * after a confirmation (`--yes`), refusing off a terminal without it.
 */
import { rm } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { Harness } from "../helpers/apply.js";
import { harness } from "../helpers/apply.js";
import { runCli, spawnCli } from "../helpers/cli.js";
import { removeTempRepos } from "../helpers/temp-repo.js";
import { orgKey, product } from "../helpers/resources.js";
import { SqliteStateBackend } from "../../src/record/sqlite/sqlite-backend.js";

afterAll(removeTempRepos);
let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const quiet = { GATESYNC_LOG_LEVEL: "silent" };
const recorded = async (x: Harness): Promise<string[]> => [...(await x.state.read()).resources.keys()].sort();

describe("gatesync state resolve", { timeout: 120_000 }, () => {
  it("the --forget printed under a create in doubt names the resource and --env, and runs as printed", async () => {
    h = await harness({
      files: { "p.yaml": product({ name: "shop" }) },
      configExtra: "environments: { staging: {} }\n",
      sandbox: { faults: { resetRate: 1, interfaces: ["portal"] } },
    });
    const cfg = path.join(h.dir, "gatesync.yaml");
    const apply = await runCli(["apply", "-c", cfg, "--env", "staging", "--auto-approve", "--allow-empty-state"], { ...h.env, ...quiet });
    h.sandbox.inspect.setFaults({ resetRate: 0 });
    expect(apply.code).toBe(1);
    const printed = /^ {4}(gatesync state resolve .+? --forget.*?) {3}\(/m.exec(apply.stdout)?.[1];
    // the config is named as the command can reach it from where it runs (the test's directory is elsewhere)
    expect(printed).toBe(`gatesync state resolve ApiProduct/shop --forget -c ${cfg} --env staging`);
    // exactly as printed
    const followed = await runCli(printed!.split(" ").slice(1), h.env);
    expect(followed.stderr).toBe("");
    expect(followed.stdout).toBe("forgot ApiProduct/shop\n");
    const staging = new SqliteStateBackend(path.join(h.dir, "state/state.staging.db"));
    expect((await staging.read()).resources.size).toBe(0);
    await staging.close();
  });

  it("--forget takes several records, and forgets none when one is not recorded", async () => {
    h = await harness({ files: { "a.yaml": product({ name: "a" }), "b.yaml": product({ name: "b" }), "k.yaml": orgKey({ name: "k" }) } });
    const cfg = path.join(h.dir, "gatesync.yaml");
    expect((await runCli(["apply", "-c", cfg, "--auto-approve", "--allow-empty-state"], { ...h.env, ...quiet })).code).toBe(0);
    const refused = await runCli(["state", "resolve", "ApiProduct/a", "ApiProduct/nope", "--forget", "-c", cfg], h.env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("ApiProduct/nope is not in the state: nothing forgotten");
    expect(await recorded(h)).toEqual(["ApiProduct/a", "ApiProduct/b", "OrgKey/k"]);
    const several = await runCli(["state", "resolve", "ApiProduct/a", "ApiProduct/b", "--forget", "-c", cfg], h.env);
    expect(several.code, several.stderr).toBe(0);
    expect(several.stdout).toBe("forgot ApiProduct/a\nforgot ApiProduct/b\n");
    expect(await recorded(h)).toEqual(["OrgKey/k"]);
    const notForget = await runCli(["state", "resolve", "ApiProduct/a", "ApiProduct/b", "--accept", "-c", cfg], h.env);
    expect(notForget.stderr).toContain("2 resources given: only --forget takes several");
  });

  it("--all-orphans is refused off a terminal without --yes; with it, forgets the orphans only", async () => {
    h = await harness({ files: { "a.yaml": product({ name: "a" }), "b.yaml": product({ name: "b" }), "k.yaml": orgKey({ name: "k" }) } });
    const cfg = path.join(h.dir, "gatesync.yaml");
    expect((await runCli(["apply", "-c", cfg, "--auto-approve", "--allow-empty-state"], { ...h.env, ...quiet })).code).toBe(0);
    await rm(path.join(h.dir, "config/a.yaml"));
    await rm(path.join(h.dir, "config/k.yaml"));
    // a real process, its stdin no terminal
    const refused = await spawnCli(["state", "resolve", "--all-orphans", "-c", cfg], { env: h.env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("error[USAGE] refusing to forget the orphaned records without confirmation");
    expect(refused.stderr).toContain("pass --yes to forget them all");
    expect(await recorded(h)).toEqual(["ApiProduct/a", "ApiProduct/b", "OrgKey/k"]);
    const forgotten = await spawnCli(["state", "resolve", "--all-orphans", "--yes", "-c", cfg], { env: h.env });
    expect(forgotten.code, forgotten.stderr).toBe(0);
    expect(forgotten.stdout).toBe("orphaned records (their objects stay on the servers):\n  ApiProduct/a\n  OrgKey/k\nforgot ApiProduct/a\nforgot OrgKey/k\n");
    expect(await recorded(h)).toEqual(["ApiProduct/b"]);
    const none = await spawnCli(["state", "resolve", "--all-orphans", "--yes", "-c", cfg], { env: h.env });
    expect(none.stdout).toBe("no orphaned records: nothing forgotten\n");
  });
});
