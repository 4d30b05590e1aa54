/**
 * `ensureDirectory`: creates missing parents, accepts an existing directory, and always ends —
 * where Node's recursive mkdir spins forever (below /proc) it fails with the kernel's answer.
 */
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ensureDirectory } from "../../src/ensure-directory.js";
import { runCli } from "../helpers/cli.js";
import { doc } from "../helpers/plan.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

describe("ensureDirectory", () => {
  it("creates every missing level, and accepts one that exists", async () => {
    const dir = await tempRepo();
    const deep = path.join(dir, "a/b/c");
    await ensureDirectory(deep);
    expect(existsSync(deep)).toBe(true);
    await ensureDirectory(deep);
    await ensureDirectory(dir);
  });

  it("refuses a path through a file", async () => {
    const dir = await tempRepo({ f: "x" });
    await expect(ensureDirectory(path.join(dir, "f"))).rejects.toMatchObject({ code: "ENOTDIR" });
    await expect(ensureDirectory(path.join(dir, "f/sub"))).rejects.toMatchObject({ code: "ENOTDIR" });
  });

  it.runIf(existsSync("/proc/self"))("ends with ENOENT below /proc, where recursive mkdir never returns", async () => {
    await expect(ensureDirectory("/proc/gatesync-no-such/dir")).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("makes an unwritable --out a clear error, not a hang or an internal one", async () => {
    const dir = await tempRepo({
      "gatesync.yaml":
        "apiVersion: gatesync.dev/v1\nkind: GatesyncConfig\nsource: { directory: ./config }\ntargets: { portal: { url: http://127.0.0.1:1/portal, credentialEnv: P_KEY } }\nstate: { backend: sqlite, path: ./state/state.db }\n",
      "config/p.yaml": doc("ApiProduct", "shop", "Name: Shop\nProviderID: 1"),
    });
    await writeFile(path.join(dir, "blocker"), "a file where a directory should be");
    const r = await runCli(["plan", "--config", path.join(dir, "gatesync.yaml"), "--out", path.join(dir, "blocker/plan.json")]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`error[USAGE] cannot save the plan to ${path.join(dir, "blocker/plan.json")}: ENOTDIR`);
  });
});
