/**
 * Post-apply checks of an ApiDefinition (`spec.verify`): one batch call (operation 4) at the
 * API's listen path, run one after another; each check passes when its sub-request answers
 * the expected status.
 */
import { documentMember } from "./document-ref.js";
import type { CheckAnswer, CheckResult, PostApplyChecks, RuleFinding, Spec } from "./kind.js";

interface Check {
  readonly method?: string;
  readonly path: string;
  readonly expectStatus?: number;
  readonly headers?: Record<string, string>;
}

/** The listen path the checks run at: the query flag, else the extension's. */
export function listenPathOf(spec: Spec): string | undefined {
  const query = spec.query as Record<string, unknown> | undefined;
  if (typeof query?.listenPath === "string") return query.listenPath;
  const ext = documentMember(spec.definition, "x-gw-api-gateway") as Record<string, unknown> | undefined;
  const value = ((ext?.server as Record<string, unknown> | undefined)?.listenPath as Record<string, unknown> | undefined)?.value;
  return typeof value === "string" ? value : undefined;
}

/** The batch route below a listen path: production registers it with its trailing slash. */
export function batchRoute(listenPath: string, trailingSlash = false): string {
  const trimmed = listenPath.replace(/^\/+|\/+$/g, "");
  return `${trimmed === "" ? "" : `/${trimmed}`}/gw/batch${trailingSlash ? "/" : ""}`;
}

/** A sub-request address: never with a leading slash (the gateway would see `//`). */
export function relativeUrlOf(path: string): string {
  return path.replace(/^\/+/, "");
}

const checksOf = (spec: Spec): readonly Check[] => (Array.isArray(spec.verify) ? (spec.verify as Check[]) : []);

function unanswered(spec: Spec): CheckResult[] {
  return checksOf(spec).map((c) => ({ method: c.method ?? "GET", path: c.path, expected: c.expectStatus ?? 200, status: 0, ok: false }));
}

export const apiDefinitionChecks: PostApplyChecks = {
  changed(spec, recorded) {
    const want = checksOf(spec).map((c) => `${c.method ?? "GET"} ${c.path} ${c.expectStatus ?? 200}`);
    const had = (recorded ?? []).map((x) => {
      const c = x as Partial<CheckResult>;
      return `${c.method} ${c.path} ${c.expected}`;
    });
    return want.length !== had.length || want.some((w, i) => w !== had[i]);
  },
  request(spec) {
    const checks = checksOf(spec);
    if (checks.length === 0) return undefined;
    const listen = listenPathOf(spec);
    if (listen === undefined) return { error: "the API's listen path is unknown: set spec.query.listenPath" };
    const requests = checks.map((c) => ({ method: c.method ?? "GET", relative_url: relativeUrlOf(c.path), headers: c.headers ?? {} }));
    // the batch call itself carries no credential: each sub-request is authorised on its own
    return { method: "POST", path: batchRoute(listen, true), body: { requests, suppress_parallel_execution: true }, anonymous: true };
  },
  results(spec, answer: CheckAnswer) {
    if ("error" in answer) return { checks: unanswered(spec), error: answer.error };
    if (answer.status !== 200 || !Array.isArray(answer.body)) {
      return {
        checks: unanswered(spec),
        error: `the batch route at ${listenPathOf(spec) ?? "?"} answered ${answer.status}${answer.status === 200 ? " without a list of results" : ""} (is batch processing enabled for this API?)`,
      };
    }
    const results = answer.body as Array<{ relative_url?: unknown; code?: unknown }>;
    const byUrl = new Map(
      results
        .filter((x) => typeof x?.relative_url === "string" && x.relative_url !== "")
        .map((x) => [x.relative_url as string, typeof x.code === "number" ? x.code : 0]),
    );
    const checks = checksOf(spec).map((c) => {
      const status = byUrl.get(relativeUrlOf(c.path)) ?? 0;
      const expected = c.expectStatus ?? 200;
      return { method: c.method ?? "GET", path: c.path, expected, status, ok: status === expected };
    });
    return { checks };
  },
};

/**
 * Where the checks cannot be answered, as validate warns: they run as one batch call at the
 * API's batch route (`{listenPath}/gw/batch/`), which needs the listen path and the API's batch
 * processing on; without either every check fails (the gateway answers 404 or, proxying the
 * call to the upstream, 502).
 */
export function verifyFindings(spec: Spec): RuleFinding[] {
  if (checksOf(spec).length === 0) return [];
  if (listenPathOf(spec) === undefined)
    return [
      {
        path: ["spec", "verify"],
        key: true,
        severity: "warning",
        message: "the checks run at the API's batch route below its listen path, which this resource does not give: they cannot be answered",
        hint: "set spec.query.listenPath (or x-gw-api-gateway.server.listenPath.value in the document)",
      },
    ];
  const server = (documentMember(spec.definition, "x-gw-api-gateway") as Record<string, unknown> | undefined)?.server as Record<string, unknown> | undefined;
  const batch = server?.batchProcessing as Record<string, unknown> | undefined;
  if (batch?.enabled !== false) return [];
  return [
    {
      path: ["spec", "verify"],
      key: true,
      severity: "warning",
      message:
        "the checks run through the API's batch route, which the document turns off (x-gw-api-gateway.server.batchProcessing.enabled: false): every check fails",
      hint: "set x-gw-api-gateway.server.batchProcessing.enabled: true, or remove spec.verify",
    },
  ];
}
