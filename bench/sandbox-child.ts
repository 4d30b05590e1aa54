/**
 * The sandbox for the whole-process runs, as its own process (`gatesync sandbox`): its work —
 * OpenAPI-validated patches, batch sub-requests — is neither counted in the bench's time nor
 * competes with the bench's own event loop, and its peak memory is measured apart from
 * gatesync's (from /proc, just before it is stopped).
 */
import { spawn } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Fixtures } from "../src/sandbox/fixtures.js";

export interface SandboxUrls {
  readonly base: string;
  readonly gateway: string;
  readonly portal: string;
  readonly dashboard: string;
  readonly llm: string;
}

export interface SandboxChild {
  readonly urls: SandboxUrls;
  readonly pid: number;
  /** Stops it (SIGTERM); resolves with its peak RSS in MiB, once it has exited. */
  stop(): Promise<{ readonly peakRssMb: number }>;
}

export interface SandboxChildOptions {
  /** `node` arguments that run gatesync (the compiled CLI, or the sources through tsx). */
  readonly gatesync: readonly string[];
  readonly fixtures: Fixtures;
  /** Where the fixtures file is written. */
  readonly dir: string;
  /** The sandbox's credentials: the variables `gatesync sandbox` reads. */
  readonly credentials: { readonly gatewayKey: string; readonly portalKey: string; readonly dashboardToken: string; readonly llmKey: string };
  /** Calls kept in its log (default 100: a long run must not grow it). */
  readonly logSize?: number;
  /** How long it may take to listen (default 120 s: 100,000 resources' fixtures are checked first). */
  readonly startTimeoutMs?: number;
}

/** The addresses `gatesync sandbox` prints once it listens, or undefined before. */
export function printedUrls(out: string): SandboxUrls | undefined {
  const base = /sandbox listening on (http:\/\/\S+)/.exec(out)?.[1];
  const line = (name: string): string | undefined => new RegExp(`^\\s+${name}\\s+(http://\\S+)`, "m").exec(out)?.[1];
  const [gateway, portal, dashboard, llm] = [line("gateway"), line("portal"), line("dashboard"), line("llm")];
  if (base === undefined || gateway === undefined || portal === undefined || dashboard === undefined || llm === undefined) return undefined;
  // the gateway and dashboard lines name a route below their base address
  return { base, gateway: gateway.replace(/\/gw\/$/, ""), portal, dashboard: dashboard.replace(/\/api\/hooks$/, ""), llm };
}

/** Peak resident set size of a running process, in MiB (Linux: VmHWM). */
async function peakRssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
  const kb = /^VmHWM:\s+(\d+)\s+kB/m.exec(status)?.[1];
  return kb === undefined ? Number.NaN : Number(kb) / 1024;
}

export async function startSandboxChild(opts: SandboxChildOptions): Promise<SandboxChild> {
  const file = path.join(opts.dir, "sandbox-fixtures.json");
  await writeFile(file, JSON.stringify(opts.fixtures));
  const { gatewayKey, portalKey, dashboardToken, llmKey } = opts.credentials;
  const env = { ...process.env, GW_ADMIN_KEY: gatewayKey, PORTAL_API_KEY: portalKey, DASHBOARD_TOKEN: dashboardToken, LLM_API_KEY: llmKey };
  const args = [...opts.gatesync, "sandbox", "--port", "0", "--fixtures", file, "--log-size", String(opts.logSize ?? 100)];
  const child = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  const closed = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  let out = "";
  child.stdout.on("data", (b: Buffer) => (out += b.toString()));
  child.stderr.on("data", (b: Buffer) => (out += b.toString()));
  const urls = await new Promise<SandboxUrls>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGTERM");
      reject(new Error(`the sandbox did not listen within ${opts.startTimeoutMs ?? 120_000} ms:\n${out.slice(0, 2000)}`));
    }, opts.startTimeoutMs ?? 120_000);
    const check = (): void => {
      const found = printedUrls(out);
      if (found === undefined) return;
      clearTimeout(timer);
      child.stdout.off("data", check);
      resolve(found);
    };
    child.stdout.on("data", check);
    void closed.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the sandbox exited (${code}) before listening:\n${out.slice(0, 2000)}`));
    });
  });
  const pid = child.pid!;
  return {
    urls,
    pid,
    stop: async () => {
      const peak = await peakRssMb(pid);
      child.kill("SIGTERM");
      const code = await closed;
      if (code !== 0) throw new Error(`the sandbox exited ${code} when stopped:\n${out.slice(-2000)}`);
      return { peakRssMb: peak };
    },
  };
}
