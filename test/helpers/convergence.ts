/**
 * What the reliability suites check after a process died or stopped mid-apply: nothing was
 * created twice, the state matches the sandbox except for what it reports in doubt, and the
 * in-doubt resources are resolved the way an operator would (by looking at the server).
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { expect } from "vitest";
import type { ResourceRecord } from "../../src/record/state.js";
import type { Harness } from "./apply.js";
import { cliArgs, runCli } from "./cli.js";

export interface Child {
  /** The exit code (null when killed). */
  readonly done: Promise<number | null>;
  readonly output: () => { stdout: string; stderr: string };
  readonly kill: () => void;
  /** The process id (to pause it with SIGSTOP). */
  readonly pid: number | undefined;
}

/** `gatesync apply --auto-approve` (or `gatesync run --once`) on the harness, as a child process. */
export function gatesyncChild(h: Harness, command: "apply" | "run" = "apply", env: Record<string, string> = {}): Child {
  const args = command === "apply" ? ["apply", "--auto-approve", "--allow-empty-state"] : ["run", "--once", "--listen", "127.0.0.1:0"];
  const child = spawn(process.execPath, cliArgs(...args, "--config", path.join(h.dir, "gatesync.yaml")), {
    cwd: h.dir,
    env: { ...process.env, ...h.env, GATESYNC_LOG_LEVEL: "silent", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (b: Buffer) => (stdout += b.toString()));
  child.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
  return {
    done: new Promise((resolve) => child.on("close", (code) => resolve(code))),
    output: () => ({ stdout, stderr }),
    kill: () => child.kill("SIGKILL"),
    pid: child.pid,
  };
}

export const externalCalls = (h: Harness): number => h.sandbox.inspect.calls().log.filter((c) => !c.internal).length;

/** Nothing created twice: every create kind holds at most one object per resource. */
export function assertNoDuplicates(h: Harness): void {
  const s = h.sandbox.inspect.store;
  const names = (xs: unknown[], key: (x: Record<string, unknown>) => unknown): unknown[] => xs.map((x) => key(x as Record<string, unknown>));
  const unique = (xs: unknown[]): void => expect(new Set(xs).size, JSON.stringify(xs)).toBe(xs.length);
  unique(names([...s.products.values()], (p) => p.Name));
  unique(names([...s.portalWebhooks.values()], (w) => w.Name));
  unique(names(s.dashboardHooks, (d) => d.name));
  unique(names([...s.llmSettings.values()], (l) => (l.attributes as Record<string, unknown>).model_name));
  expect(s.orgKeys.get("acme")?.quotaResets ?? 0).toBeLessThanOrEqual(1);
}

/** Where a created object is in the sandbox, for a state record (undefined: not there). */
function findCreated(h: Harness, r: ResourceRecord): string | undefined {
  const s = h.sandbox.inspect.store;
  const attempted = (r.attempted?.read() ?? r.applied?.read() ?? {}) as Record<string, unknown>;
  switch (r.kind) {
    case "ApiProduct": {
      const p = [...s.products.values()].find((x) => (r.serverId === undefined ? x.Name === attempted.Name : String(x.ID) === r.serverId));
      return p === undefined ? undefined : String(p.ID);
    }
    case "PortalWebhook": {
      const w = [...s.portalWebhooks.values()].find((x) => (r.serverId === undefined ? x.Name === attempted.Name : x.ID === r.serverId));
      return w === undefined ? undefined : String(w.ID);
    }
    case "LlmSettings": {
      const model = (attempted.attributes as Record<string, unknown> | undefined)?.model_name;
      const l = [...s.llmSettings.values()].find((x) =>
        r.serverId === undefined ? (x.attributes as Record<string, unknown>).model_name === model : x.id === r.serverId,
      );
      return l === undefined ? undefined : String(l.id);
    }
    case "DashboardWebhook":
      return s.dashboardHooks.some((d) => d.name === attempted.name) ? "exists" : undefined;
    default:
      return undefined;
  }
}

/** The state matches the sandbox, except for resources in doubt. */
export async function assertStateMatches(h: Harness): Promise<void> {
  const state = await h.state.read();
  const s = h.sandbox.inspect.store;
  const createKinds = new Set(["ApiProduct", "PortalWebhook", "LlmSettings", "DashboardWebhook"]);
  for (const r of state.resources.values()) {
    if (r.status !== "applied") continue;
    if (createKinds.has(r.kind)) expect(findCreated(h, r), `${r.id} recorded as applied but not on the server`).toBeDefined();
    if (r.kind === "OrgKey") expect(s.orgKeys.has(r.address.keyID!), r.id).toBe(true);
    if (r.kind === "OAuthClient")
      expect(s.oauthClients.get(`${r.address.apiID}\0${r.address.keyName}`)?.redirect_uri, r.id).toBe(r.applied?.read().redirect_uri);
    if (r.kind === "ApiDefinition") expect(s.apis.get(r.address.apiID!)?.document, r.id).toBeDefined();
  }
  // and every object created on the server is accounted for: applied, or in doubt
  const accounted = (kind: string, exists: (r: ResourceRecord) => boolean): number =>
    [...state.resources.values()].filter((r) => r.kind === kind && (r.status === "in-doubt" || (r.status === "applied" && exists(r)))).length;
  expect(accounted("ApiProduct", (r) => findCreated(h, r) !== undefined)).toBeGreaterThanOrEqual(s.products.size);
  expect(accounted("PortalWebhook", (r) => findCreated(h, r) !== undefined)).toBeGreaterThanOrEqual(s.portalWebhooks.size);
  expect(accounted("LlmSettings", (r) => findCreated(h, r) !== undefined)).toBeGreaterThanOrEqual(s.llmSettings.size);
  expect(accounted("DashboardWebhook", (r) => findCreated(h, r) !== undefined)).toBeGreaterThanOrEqual(s.dashboardHooks.length);
}

/** What an operator does with an in-doubt resource: look at the server, then --id or --forget. */
export async function resolveInDoubt(h: Harness, journal: string[] = []): Promise<number> {
  // a killed apply's last request may still be in the server's hands: wait it out before looking
  await h.sandbox.idle();
  const state = await h.state.read();
  const config = path.join(h.dir, "gatesync.yaml");
  let resolved = 0;
  for (const r of state.resources.values()) {
    // a dashboard webhook settles itself: the next apply sends it again (409: it exists)
    if (r.status !== "in-doubt" || r.kind === "DashboardWebhook") continue;
    resolved++;
    let args: string[];
    if (r.kind === "OrgKey") {
      // a write carrying a quota reset: did the reset happen?
      args = (h.sandbox.inspect.store.orgKeys.get(r.address.keyID!)?.quotaResets ?? 0) > 0 ? ["--accept"] : ["--forget"];
    } else {
      const id = findCreated(h, r);
      args = id === undefined ? ["--forget"] : ["--id", id];
    }
    journal.push(`state resolve ${r.id} ${args.join(" ")}`);
    const out = await runCli(["state", "resolve", r.id, ...args, "--config", config], h.env);
    expect(out.code, out.stderr).toBe(0);
  }
  return resolved;
}

/**
 * Re-runs apply (resolving what is in doubt first) until it exits 0; then the plan is empty and
 * nothing exists twice. A failure says what was done on the way (resolutions, exit codes, and
 * the calls the server saw), so a rare interleaving can be read from one failed run.
 */
export async function converge(h: Harness, attempts = 6): Promise<{ applies: number; inDoubtResolved: number }> {
  const journal: string[] = [];
  try {
    return await convergeSteps(h, attempts, journal);
  } catch (err) {
    const calls = h.sandbox.inspect
      .calls()
      .log.filter((c) => !c.internal)
      .map((c) => `${c.seq} ${c.method} ${c.path} ${c.status}${c.fault === undefined ? "" : ` ${c.fault}`}`);
    throw new Error(`${(err as Error).message}\nsteps: ${journal.join(" | ")}\ncalls: ${calls.join(" | ")}`, { cause: err });
  }
}

async function convergeSteps(h: Harness, attempts: number, journal: string[]): Promise<{ applies: number; inDoubtResolved: number }> {
  let inDoubtResolved = 0;
  for (let applies = 1; applies <= attempts; applies++) {
    journal.push(`calls before apply ${applies}: ${externalCalls(h)}`);
    inDoubtResolved += await resolveInDoubt(h, journal);
    const again = gatesyncChild(h);
    const code = await again.done;
    journal.push(
      `apply ${applies} exited ${code}: ${again
        .output()
        .stdout.split("\n")
        .filter((l) => /in doubt|failed/i.test(l))
        .join("; ")}`,
    );
    assertNoDuplicates(h);
    await assertStateMatches(h);
    if (code === 0) {
      const plan = await h.plan();
      expect(plan.changes.filter((c) => c.action !== "no-op").map((c) => `${c.id} ${c.action}`)).toEqual([]);
      const s = h.sandbox.inspect.store;
      expect([s.products.size, s.portalWebhooks.size, s.dashboardHooks.length, s.llmSettings.size]).toEqual([2, 2, 2, 2]);
      expect(s.orgKeys.get("acme")?.quotaResets).toBe(1);
      return { applies, inDoubtResolved };
    }
  }
  throw new Error(`did not converge in ${attempts} applies`);
}
