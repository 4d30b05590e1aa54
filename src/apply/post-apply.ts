/**
 * After the apply: the post-apply checks of every resource applied in this run whose kind has
 * a `postApply` hook, one request each through its interface's queue; the result is the
 * resource's health, recorded in the state.
 */
import type { HealthResult } from "../kinds/kind.js";
import { kindModule } from "../kinds/registry.js";
import type { Resource } from "../kinds/resource.js";
import { resourceId } from "../kinds/resource.js";
import type { Logger } from "../logger.js";
import type { ResourceRecord } from "../record/state.js";
import type { Interfaces } from "./clients.js";
import type { Recorder } from "./records/recorder.js";
import { answerExcerpt, describeHealth } from "./health-text.js";
import { scrubText } from "../secrets/redaction.js";

export interface PostApplyDeps {
  readonly interfaces: Interfaces;
  readonly recorder: Recorder;
  readonly halt: AbortSignal;
  readonly now: () => Date;
  readonly logger: Logger;
  /** Every resource's checks, applied in this run or not (a soak's end re-runs them). */
  readonly recheck?: boolean;
}

/** A resource recorded as applied whose spec asks for other checks than its recorded health's (a check was added). */
export function checksChanged(r: Resource, records: { record(id: string): ResourceRecord | undefined }): boolean {
  const checks = kindModule(r.kind).postApply;
  const record = records.record(resourceId(r));
  return (
    checks?.changed !== undefined &&
    record?.status === "applied" &&
    record.applied !== undefined &&
    checks.changed(r.spec.read(), record.health?.read().results)
  );
}

/** Runs the checks; returns their results and how many calls they made. */
export async function runPostApply(
  resources: readonly Resource[],
  applied: ReadonlySet<string>,
  deps: PostApplyDeps,
): Promise<{ health: HealthResult[]; calls: number }> {
  const health: HealthResult[] = [];
  let calls = 0;
  for (const r of resources) {
    if (deps.halt.aborted) break;
    const kind = kindModule(r.kind);
    const id = resourceId(r);
    const due = applied.has(id) || checksChanged(r, deps.recorder) || (deps.recheck === true && deps.recorder.record(id)?.status === "applied");
    const request = due ? kind.postApply?.request(r.spec.read()) : undefined;
    const client = deps.interfaces.clients.get(kind.interface);
    const queue = deps.interfaces.queues.get(kind.interface);
    if (request === undefined || client === undefined || queue === undefined) continue;
    const checkedAt = deps.now().toISOString();
    let answer: { status: number; body: unknown } | { error: string };
    if ("error" in request) answer = request;
    else {
      try {
        const outcome = await queue.run(() => client.call(request), deps.halt);
        calls++;
        answer = outcome.kind === "answered" ? { status: outcome.status, body: outcome.body } : { error: outcome.error };
      } catch (err) {
        // stopped, or the interface closed for this run: no health this time
        deps.logger.child({ resource: id }).warn({ reason: (err as Error).message }, "checks not run");
        continue;
      }
    }
    const { checks, error } = kind.postApply!.results(r.spec.read(), answer);
    const ok = error === undefined && checks.every((c) => c.ok);
    // what the route answered, when a check failed: the cause is in it (a 502 from a batch route that is off)
    const excerpt = ok || !("body" in answer) ? undefined : answerExcerpt(answer.body);
    const result: HealthResult = {
      id,
      ok,
      checkedAt,
      checks,
      ...(error === undefined ? {} : { error: scrubText(error) }),
      ...(excerpt === undefined ? {} : { excerpt }),
    };
    health.push(result);
    await deps.recorder.health(result);
    if (ok) deps.logger.child({ resource: id }).info({ ok, checks: checks.length }, "checks run");
    else deps.logger.child({ resource: id }).warn({ ok, checks: checks.length, reason: describeHealth(result) }, "post-apply check failed");
  }
  return { health, calls };
}
