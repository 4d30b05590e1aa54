import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { harness } from "../helpers/apply.js";
import { assertNoDuplicates, assertStateMatches, converge, externalCalls, gatesyncChild } from "../helpers/convergence.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);
const reps = Number(process.env.REPRO_REPS ?? 50);
const killAfter = Number(process.env.REPRO_KILL ?? 2);
describe("repro", () => {
  it("repro", async () => {
    for (let t = 0; t < reps; t++) {
      const h = await harness({ sandbox: { faults: { latencyMs: 10, jitterMs: 20, interfaces: ["gateway", "portal", "dashboard", "llm"] }, seed: 1 } });
      try {
        const child = gatesyncChild(h, "apply");
        let exited = false;
        const watcher = (async () => {
          while (!exited) {
            if (externalCalls(h) >= killAfter) { child.kill(); return; }
            await sleep(1);
          }
        })();
        await child.done;
        exited = true;
        await watcher;
        const st = await h.state.read();
        const desc = [...st.resources.values()].map((r) => `${r.id}:${r.status}`).join(",");
        const calls = h.sandbox.inspect.calls().log.filter((c) => !c.internal).map((c) => `${c.method} ${c.path}`).join(" | ");
        try {
          assertNoDuplicates(h);
          await assertStateMatches(h);
          await converge(h);
        } catch (err) {
          throw new Error(`rep ${t}: ${(err as Error).message}\nstate after kill: ${desc}\ncalls: ${calls}\nafter: ${h.sandbox.inspect.calls().log.filter((c) => !c.internal).map((c) => `${c.method} ${c.path} ${c.status}`).join(" | ")}`);
        }
      } finally {
        await h.stop();
      }
    }
    expect(true).toBe(true);
  }, 1_200_000);
});
