import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { manifestMemory, memoryCgroup } from "../../bench/memory-limit.js";
import type { MemoryCgroup } from "../../bench/memory-limit.js";
import { projectRoot } from "../helpers/temp-repo.js";

const run = promisify(execFile);
const limit: MemoryCgroup | undefined = await memoryCgroup(`gatesync-test-${process.pid}`, 512);
afterAll(async () => limit?.remove());

describe("the bench's memory limit", () => {
  it("is read from the shipped manifest's gatesync container, with its NODE_OPTIONS", async () => {
    expect(manifestMemory().limitMiB).toBe(512);
    const dir = await mkdtemp(path.join(tmpdir(), "gatesync-manifest-"));
    const file = path.join(dir, "m.yaml");
    await writeFile(
      file,
      "kind: ConfigMap\n---\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n        - name: sidecar\n          resources: { limits: { memory: 64Mi } }\n        - name: gatesync\n          env: [{ name: NODE_OPTIONS, value: --max-old-space-size=300 }]\n          resources: { limits: { memory: 768Mi } }\n",
    );
    expect(manifestMemory(file)).toEqual({ limitMiB: 768, nodeOptions: "--max-old-space-size=300" });
    await writeFile(file, "kind: Deployment\nspec: {}\n");
    expect(() => manifestMemory(file)).toThrow(/no gatesync container/);
  });

  // under a heap cap alone V8 kept its new space at 2 MiB for a whole apply: 16,300 scavenges at 10,000 resources instead of 1,040
  it("gives V8's young generation 16 MiB semi-spaces in every shipped manifest and the image, beside a heap that leaves 100 MiB of the limit", async () => {
    const flag = (options: string | undefined, name: string): number | undefined => {
      const value = new RegExp(`--${name}=(\\d+)`).exec(options ?? "")?.[1];
      return value === undefined ? undefined : Number(value);
    };
    for (const name of ["gatesync.yaml", "gatesync-postgres-ha.yaml"]) {
      const { limitMiB, nodeOptions } = manifestMemory(path.join(projectRoot, "examples/k8s", name));
      const semi = flag(nodeOptions, "max-semi-space-size");
      const old = flag(nodeOptions, "max-old-space-size");
      expect(semi, name).toBe(16);
      expect(old, name).toBeGreaterThan(0);
      // V8's young generation is three semi-spaces
      expect(old! + 3 * semi! + 100, name).toBeLessThanOrEqual(limitMiB);
    }
    const env = (await readFile(path.join(projectRoot, "Dockerfile"), "utf8"))
      .split("\n")
      .filter((line) => line.startsWith("ENV "))
      .join("\n");
    expect(flag(env, "max-semi-space-size")).toBe(16);
  });

  // a machine where the bench cannot make a cgroup runs unlimited and says so in the table
  it.skipIf(limit === undefined)("runs a command inside a 512 MiB cgroup, where Node sizes its heap from the limit as in the manifest's pod", async () => {
    const script = "console.log(JSON.stringify({ heap: require('v8').getHeapStatistics().heap_size_limit, constrained: process.constrainedMemory() }))";
    const [cmd, ...args] = [...limit!.wrap, process.execPath, "-e", script];
    const inside = JSON.parse((await run(cmd, args)).stdout) as { heap: number; constrained: number };
    const outside = JSON.parse((await run(process.execPath, ["-e", script])).stdout) as { heap: number };
    expect(inside.constrained).toBe(512 * 1024 * 1024);
    expect(inside.heap / 2 ** 20).toBeLessThan(300);
    expect(outside.heap).toBeGreaterThan(inside.heap);
    expect(limit!.label).toMatch(/^cgroup v[12] 512 MiB$/);
    expect(await limit!.peakMiB()).toBeGreaterThan(0);
  });
});
