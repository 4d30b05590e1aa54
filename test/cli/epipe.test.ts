import { spawn } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { cliArgs } from "../helpers/cli.js";
import { doc } from "../helpers/plan.js";
import { projectRoot, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

describe("output into a pipe closed early (`| head`)", () => {
  it("ends quietly, without an EPIPE stack", async () => {
    // far more than a pipe's buffer of output: 2,000 located errors
    const many = Array.from({ length: 2000 }, (_, i) => doc("OrgKey", `k${i}`, `keyId: k${i}\nrate: fast`)).join("---\n");
    const dir = await tempRepo({ "keys.yaml": many });
    const cmd = `"${process.execPath}" ${cliArgs("validate", dir)
      .map((a) => `"${a}"`)
      .join(" ")} | head -n 1`;
    const child = spawn("bash", ["-o", "pipefail", "-c", cmd], { cwd: projectRoot, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b: Buffer) => (stdout += b.toString()));
    child.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(stdout.split("\n").filter(Boolean)).toHaveLength(1);
    expect(stderr).not.toContain("EPIPE");
    expect(stderr).not.toContain("Error");
    // validate's own verdict (1: invalid), not a crash's
    expect(code).toBe(1);
  }, 60_000);
});
