/**
 * Ctrl-C during `gatesync apply`, as a user meets it: a real `gatesync apply` process against a
 * slow sandbox, interrupted by a real SIGINT — on a pseudo-terminal (`script` gives the process
 * a terminal; Ctrl-C is the byte 0x03 typed into it, turned into SIGINT by the terminal's line
 * discipline) and off a terminal (SIGINT sent to the process).
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import path from "node:path";
import { stripVTControlCharacters } from "node:util";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { Harness } from "../helpers/apply.js";
import { harness } from "../helpers/apply.js";
import { cliArgs } from "../helpers/cli.js";
import { eventually } from "../helpers/eventually.js";
import { doc } from "../helpers/plan.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);
let h: Harness | undefined;
let child: ChildProcess | undefined;
afterEach(async () => {
  if (child?.exitCode === null) child.kill("SIGKILL");
  child = undefined;
  await h?.stop();
  h = undefined;
});

const products = 16;

/** 16 API products (a create cannot be repeated: a lost answer is in doubt), each answered after about a second. */
async function slowHarness(): Promise<Harness> {
  const files = Object.fromEntries(Array.from({ length: products }, (_, i) => [`p${i}.yaml`, doc("ApiProduct", `p${i}`, `Name: P${i}\nProviderID: 1`)]));
  return harness({ files, batch: false, rate: "{ concurrency: 4, requestsPerSecond: 1000 }", sandbox: { faults: { latencyMs: 900, jitterMs: 300 } } });
}

function collect(c: ChildProcess): { text: () => string; closed: Promise<number | null> } {
  let text = "";
  c.stdout?.on("data", (b: Buffer) => (text += b.toString()));
  c.stderr?.on("data", (b: Buffer) => (text += b.toString()));
  return { text: () => text, closed: new Promise((resolve) => c.once("close", resolve)) };
}

const shellQuote = (s: string): string => `'${s.replace(/'/g, "'\\''")}'`;

/** Records by status, and the products the sandbox holds. */
async function outcome(x: Harness): Promise<{ status: Record<string, string[]>; onServer: string[] }> {
  const state = await x.state.read();
  const status: Record<string, string[]> = {};
  for (const r of state.resources.values()) (status[r.status] ??= []).push(r.id);
  const onServer = [...x.sandbox.inspect.store.products.values()].map((p) => (p as { Name: string }).Name).sort();
  return { status, onServer };
}

describe("Ctrl-C during apply", () => {
  it("on a terminal: stops starting calls, records the calls in flight, prints the summary and gives the terminal back", async () => {
    h = await slowHarness();
    const cmd = [process.execPath, ...cliArgs("apply", "--config", path.join(h.dir, "gatesync.yaml"), "--auto-approve", "--allow-empty-state")]
      .map(shellQuote)
      .join(" ");
    const env = { ...process.env, ...h.env, GATESYNC_LOG_LEVEL: "warn", TERM: "xterm", COLUMNS: "160" };
    child = spawn("script", ["-qfec", cmd, "/dev/null"], { cwd: h.dir, env, stdio: ["pipe", "pipe", "pipe"] });
    const out = collect(child);
    // the bar shows at least one product done: some are applied, some in flight, most not started
    await eventually(
      () => /applying \[.*\] ([1-9]\d*)\/16/.exec(out.text()),
      (m) => m !== null,
      30_000,
      () => out.text(),
    );
    const typedAt = Date.now();
    child.stdin!.write("\x03");
    const code = await out.closed;
    const stoppedMs = Date.now() - typedAt;
    const text = out.text();
    // the words without their colours (the escape sequences that matter are checked below)
    const words = stripVTControlCharacters(text);
    expect(code, text).toBe(130);
    // the calls in flight were waited for (each answers within ~1.2 s), not the whole apply
    expect(stoppedMs).toBeLessThan(5_000);
    console.log(`Ctrl-C → exit after waiting for the calls in flight: ${stoppedMs} ms`);
    expect(text).toContain("SIGINT: stopping — no new calls; waiting for the calls in flight");
    expect(text).toContain("Press Ctrl-C again to stop waiting");
    const summary = /Apply: (\d+) applied, 0 failed, 0 in doubt, 0 blocked, 0 unchanged, 0 orphaned/.exec(words);
    expect(summary, text).not.toBeNull();
    const applied = Number(summary![1]);
    expect(applied).toBeGreaterThan(0);
    expect(applied).toBeLessThan(products);
    expect(words).toMatch(/Not started \(the apply was stopped\): ApiProduct\/p/);
    expect(words).toContain(`Stopped by SIGINT: ${products - applied} changes not started — \`gatesync apply\` again applies them.`);
    // the terminal is given back: the last word on the cursor is "show", on line wrapping "on"
    expect(text).toContain("\x1b[?25l");
    expect(text.lastIndexOf("\x1b[?25h")).toBeGreaterThan(text.lastIndexOf("\x1b[?25l"));
    expect(text).toContain("\x1b[?7l");
    expect(text.lastIndexOf("\x1b[?7h")).toBeGreaterThan(text.lastIndexOf("\x1b[?7l"));
    // every call that was answered is recorded: what the server holds is exactly what the state says was applied
    const { status, onServer } = await outcome(h);
    expect(status["in-doubt"]).toBeUndefined();
    expect(status.applied).toHaveLength(applied);
    expect(onServer).toHaveLength(applied);
    // and the next apply makes the rest, no duplicates
    child = spawn(process.execPath, cliArgs("apply", "--config", path.join(h.dir, "gatesync.yaml"), "--auto-approve", "--allow-empty-state"), {
      cwd: h.dir,
      env: { ...process.env, ...h.env, GATESYNC_LOG_LEVEL: "silent" },
    });
    const rest = collect(child);
    expect(await rest.closed, rest.text()).toBe(0);
    expect(rest.text()).toContain(`Apply: ${products - applied} applied`);
    expect((await outcome(h)).onServer).toHaveLength(products);
  }, 90_000);

  it("off a terminal: the same, with the summary on stdout", async () => {
    h = await slowHarness();
    child = spawn(process.execPath, cliArgs("apply", "--config", path.join(h.dir, "gatesync.yaml"), "--auto-approve", "--allow-empty-state"), {
      cwd: h.dir,
      env: { ...process.env, ...h.env, GATESYNC_LOG_LEVEL: "silent" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (b: Buffer) => (stdout += b.toString()));
    child.stderr!.on("data", (b: Buffer) => (stderr += b.toString()));
    const closed = new Promise<number | null>((resolve) => child!.once("close", resolve));
    await eventually(
      () => h!.sandbox.inspect.store.products.size,
      (n) => n >= 1,
      30_000,
    );
    child.kill("SIGINT");
    const code = await closed;
    expect(code, stdout + stderr).toBe(130);
    expect(stderr).toContain("SIGINT: stopping — no new calls");
    const summary = /Apply: (\d+) applied, 0 failed, 0 in doubt/.exec(stdout);
    expect(summary, stdout + stderr).not.toBeNull();
    expect(stdout).toMatch(/Stopped by SIGINT: \d+ changes? not started/);
    const { status, onServer } = await outcome(h);
    expect(status["in-doubt"]).toBeUndefined();
    expect(status.applied).toHaveLength(Number(summary![1]));
    expect(onServer).toHaveLength(Number(summary![1]));
  }, 60_000);

  it("a second Ctrl-C stops waiting: the calls still in flight are recorded in doubt and listed with what to do", async () => {
    h = await slowHarness();
    child = spawn(process.execPath, cliArgs("apply", "--config", path.join(h.dir, "gatesync.yaml"), "--auto-approve", "--allow-empty-state"), {
      cwd: h.dir,
      env: { ...process.env, ...h.env, GATESYNC_LOG_LEVEL: "silent" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (b: Buffer) => (stdout += b.toString()));
    child.stderr!.on("data", (b: Buffer) => (stderr += b.toString()));
    const closed = new Promise<number | null>((resolve) => child!.once("close", resolve));
    // calls are in flight as soon as the sandbox has received some
    await eventually(
      () => h!.sandbox.inspect.calls().log.length,
      (n) => n >= 1,
      30_000,
    );
    child.kill("SIGINT");
    await eventually(
      () => stderr,
      (s) => s.includes("Press Ctrl-C again"),
      10_000,
    );
    const secondAt = Date.now();
    child.kill("SIGINT");
    const code = await closed;
    const abandonMs = Date.now() - secondAt;
    expect(abandonMs).toBeLessThan(3_000);
    console.log(`second Ctrl-C → exit: ${abandonMs} ms`);
    expect(code, stdout + stderr).toBe(130);
    expect(stderr).toContain("Not waiting any longer: the connections are closed; calls still in flight are recorded in doubt.");
    const summary = /Apply: (\d+) applied, 0 failed, (\d+) in doubt/.exec(stdout);
    expect(summary, stdout + stderr).not.toBeNull();
    const inDoubt = Number(summary![2]);
    expect(inDoubt).toBeGreaterThan(0);
    expect(stdout).toContain("In doubt (sent; the outcome is unknown):");
    expect(stdout).toMatch(/gatesync state resolve ApiProduct\/p\d+ --id <server id>/);
    const { status, onServer } = await outcome(h);
    expect(status["in-doubt"]).toHaveLength(inDoubt);
    expect(status.applied ?? []).toHaveLength(Number(summary![1]));
    // nothing the server holds is unknown to the state: each product made is applied or in doubt
    const recorded = new Set([...(status.applied ?? []), ...(status["in-doubt"] ?? [])].map((id) => `P${id.slice("ApiProduct/p".length)}`));
    for (const name of onServer) expect(recorded.has(name), name).toBe(true);
  }, 60_000);

  it("Ctrl-C at the confirmation prompt cancels: nothing is sent, the terminal is given back", async () => {
    h = await slowHarness();
    const cmd = [process.execPath, ...cliArgs("apply", "--config", path.join(h.dir, "gatesync.yaml"), "--allow-empty-state")].map(shellQuote).join(" ");
    child = spawn("script", ["-qfec", cmd, "/dev/null"], {
      cwd: h.dir,
      env: { ...process.env, ...h.env, GATESYNC_LOG_LEVEL: "warn", TERM: "xterm" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const out = collect(child);
    await eventually(
      () => out.text(),
      (t) => t.includes("Apply these changes? Only 'yes' is accepted:"),
      30_000,
    );
    child.stdin!.write("\x03");
    const code = await out.closed;
    const words = stripVTControlCharacters(out.text());
    expect(code, words).toBe(130);
    expect(words).toContain("Apply cancelled.");
    expect(h.sandbox.inspect.calls().log).toEqual([]);
    expect((await h.state.read()).resources.size).toBe(0);
  }, 60_000);

  it("SIGTERM stops the same way (exit 143)", async () => {
    h = await slowHarness();
    child = spawn(process.execPath, cliArgs("apply", "--config", path.join(h.dir, "gatesync.yaml"), "--auto-approve", "--allow-empty-state"), {
      cwd: h.dir,
      env: { ...process.env, ...h.env, GATESYNC_LOG_LEVEL: "silent" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const out = collect(child);
    await eventually(
      () => h!.sandbox.inspect.store.products.size,
      (n) => n >= 1,
      30_000,
    );
    child.kill("SIGTERM");
    expect(await out.closed, out.text()).toBe(143);
    const summary = /Apply: (\d+) applied, 0 failed, 0 in doubt/.exec(out.text());
    expect(summary, out.text()).not.toBeNull();
    expect(out.text()).toContain("Stopped by SIGTERM");
    expect((await outcome(h)).onServer).toHaveLength(Number(summary![1]));
  }, 60_000);
});
