/**
 * `npm test`'s closing line, read by CI as "N passed, N failed": a run that fails (exit 1)
 * never says "0 failed" — a file whose `beforeAll` threw (its tests count as skipped), an
 * `afterAll` that threw and an unhandled error count, and the files are named. Vitest runs as
 * a real process on fixture files with the repository's reporter.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { projectRoot } from "../helpers/temp-repo.js";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** Runs vitest on `files` (named *.fixture.ts: never part of the real suite) with the SummaryReporter. */
async function vitestOn(files: Record<string, string>): Promise<{ code: number | null; closing: string }> {
  // inside the repository, so that the fixtures resolve `vitest`
  const dir = await mkdtemp(path.join(projectRoot, ".tmp-reporter-"));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(dir, name), text);
  await writeFile(
    path.join(dir, "vitest.config.ts"),
    `import { defineConfig } from "vitest/config";\nimport { SummaryReporter } from "../test/helpers/summary-reporter.js";\nexport default defineConfig({ test: { root: ${JSON.stringify(dir)}, include: ["*.fixture.ts"], reporters: [new SummaryReporter()] } });\n`,
  );
  const child = spawn(process.execPath, [path.join(projectRoot, "node_modules/vitest/vitest.mjs"), "run", "--config", path.join(dir, "vitest.config.ts")], {
    cwd: projectRoot,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (b: Buffer) => (out += b.toString()));
  child.stderr.on("data", () => undefined);
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  return { code, closing: out.trim().split("\n").at(-1) ?? "" };
}

describe("the closing line of npm test", () => {
  it("counts files that failed outside their tests and unhandled errors, and names the files", async () => {
    const r = await vitestOn({
      "hook.fixture.ts":
        'import { beforeAll, expect, it } from "vitest";\nbeforeAll(() => { throw new Error("no database"); });\nit("one", () => expect(1).toBe(1));\nit("two", () => expect(1).toBe(1));\n',
      "cleanup.fixture.ts":
        'import { afterAll, describe, expect, it } from "vitest";\ndescribe("s", () => { afterAll(() => { throw new Error("cleanup failed"); }); it("ok", () => expect(1).toBe(1)); });\n',
      "late.fixture.ts":
        'import { expect, it } from "vitest";\nit("passes", () => { setTimeout(() => { throw new Error("late"); }, 1); expect(1).toBe(1); });\nit("waits", async () => { await new Promise((r) => setTimeout(r, 50)); });\n',
      "fine.fixture.ts": 'import { expect, it } from "vitest";\nit("fine", () => expect(2).toBe(2));\n',
    });
    expect(r.code).toBe(1);
    expect(r.closing).toMatch(
      /^tests: 4 passed, 3 failed, 2 skipped \(2 files failed outside tests: \S+(cleanup|hook)\.fixture\.ts, \S+(cleanup|hook)\.fixture\.ts; 1 unhandled error\)$/,
    );
  });

  it("says 0 failed only when the run passed", async () => {
    const r = await vitestOn({ "fine.fixture.ts": 'import { expect, it } from "vitest";\nit("fine", () => expect(2).toBe(2));\n' });
    expect(r.code).toBe(0);
    expect(r.closing).toBe("tests: 1 passed, 0 failed, 0 skipped");
  });
});
