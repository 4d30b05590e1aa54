/**
 * Post-apply checks of an ApiDefinition (`spec.verify`): one batch call at the API's listen
 * path; each check passes when its sub-request answers the expected status. The result is
 * the resource's health.
 */
import type { Resource } from "../kinds/resource.js";
import { resourceId } from "../kinds/resource.js";
import type { ResourceRecord } from "../record/state.js";
import type { InterfaceClient } from "./http-client.js";
import type { InterfaceQueue } from "./queues.js";

export interface CheckResult {
  readonly method: string;
  readonly path: string;
  readonly expected: number;
  /** 0 when no answer came for it. */
  readonly status: number;
  readonly ok: boolean;
}

export interface HealthResult {
  readonly id: string;
  readonly ok: boolean;
  readonly checkedAt: string;
  readonly checks: readonly CheckResult[];
  /** Why the checks could not run, when they could not. */
  readonly error?: string;
}

interface Check {
  readonly method?: string;
  readonly path: string;
  readonly expectStatus?: number;
  readonly headers?: Record<string, string>;
}

/**
 * Whether an ApiDefinition's checks are due after an apply: it was applied in this run, or its
 * `verify:` list differs from the checks its recorded health was computed from (a check added
 * or changed runs at the next apply even though the definition did not change).
 */
export function checksDue(r: Resource, appliedNow: boolean, recorded: ResourceRecord | undefined): boolean {
  if (!Array.isArray(r.spec.verify)) return false;
  if (appliedNow) return true;
  if (recorded?.status !== "applied" || recorded.applied === undefined) return false;
  const want = (r.spec.verify as Check[]).map((c) => `${c.method ?? "GET"} ${c.path} ${c.expectStatus ?? 200}`);
  const had = (recorded.health?.results ?? []).map((x) => {
    const c = x as Partial<CheckResult>;
    return `${c.method} ${c.path} ${c.expected}`;
  });
  return want.length !== had.length || want.some((w, i) => w !== had[i]);
}

/** The listen path the checks run at: the query flag, else the extension's. */
export function listenPathOf(r: Resource): string | undefined {
  const query = r.spec.query as Record<string, unknown> | undefined;
  if (typeof query?.listenPath === "string") return query.listenPath;
  const ext = (r.spec.definition as Record<string, unknown> | undefined)?.["x-gw-api-gateway"] as Record<string, unknown> | undefined;
  const value = ((ext?.server as Record<string, unknown> | undefined)?.listenPath as Record<string, unknown> | undefined)?.value;
  return typeof value === "string" ? value : undefined;
}

export async function runChecks(r: Resource, client: InterfaceClient, queue: InterfaceQueue, now: () => Date): Promise<HealthResult> {
  const checks = (r.spec.verify ?? []) as Check[];
  const id = resourceId(r);
  const checkedAt = now().toISOString();
  const listen = listenPathOf(r);
  const fail = (error: string): HealthResult => ({ id, ok: false, checkedAt, checks: checks.map((c) => ({ method: c.method ?? "GET", path: c.path, expected: c.expectStatus ?? 200, status: 0, ok: false })), error });
  if (listen === undefined) return fail("the API's listen path is unknown: set spec.query.listenPath");
  const trimmed = listen.replace(/^\/+|\/+$/g, "");
  const requests = checks.map((c) => ({ method: c.method ?? "GET", relative_url: c.path, headers: c.headers ?? {} }));
  const outcome = await queue.run(() => client.call({ method: "POST", path: `${trimmed === "" ? "" : `/${trimmed}`}/gw/batch`, body: { requests, suppress_parallel_execution: true }, anonymous: true }));
  if (outcome.kind !== "answered" || outcome.status !== 200 || !Array.isArray(outcome.body)) {
    return fail(outcome.kind === "answered" ? `the batch route at ${listen} answered ${outcome.status} (is batch processing enabled for this API?)` : outcome.error);
  }
  const results = outcome.body as Array<{ relative_url?: string; code?: number }>;
  const byUrl = new Map(results.filter((x) => typeof x.relative_url === "string" && x.relative_url !== "").map((x) => [x.relative_url!, x.code ?? 0]));
  const out = checks.map((c) => {
    const status = byUrl.get(c.path) ?? 0;
    const expected = c.expectStatus ?? 200;
    return { method: c.method ?? "GET", path: c.path, expected, status, ok: status === expected };
  });
  return { id, ok: out.every((c) => c.ok), checkedAt, checks: out };
}
