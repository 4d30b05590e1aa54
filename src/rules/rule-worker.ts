/**
 * The rules' thread (rule-thread.ts starts one per checking thread): Spectral runs here, one
 * document at a time, so that a rule that never returns — a backtracking RegExp on the wrong
 * value — stops this thread only, which the checking thread ends past the document's budget.
 * Before each of a rule's calls, `progress` says which rule is running.
 */
import { parentPort, workerData } from "node:worker_threads";
import { RuleRunner } from "./rule-runner.js";
import type { RawFinding, RulesetCode } from "./rule-runner.js";

/** What the checking thread asks: a ruleset comes with the first document it is run on. */
export interface LintRequest {
  readonly id: number;
  readonly hash: string;
  readonly ruleset?: RulesetCode;
  readonly value: unknown;
  readonly absolute: string;
}

export type LintReply =
  | { readonly id: number; readonly started: true; readonly ruleNames?: readonly string[] }
  | { readonly id: number; readonly findings: readonly RawFinding[] }
  | { readonly id: number; readonly failed: string };

const progress = new Int32Array((workerData as { progress: SharedArrayBuffer }).progress);
const runners = new Map<string, RuleRunner>();

async function lint(request: LintRequest): Promise<LintReply> {
  let runner = runners.get(request.hash);
  const fresh = runner === undefined;
  if (runner === undefined) {
    if (request.ruleset === undefined) return { id: request.id, failed: "the rules' thread was sent a ruleset it does not hold" };
    runner = new RuleRunner(request.ruleset, progress);
    if (runners.size >= 4) runners.delete(runners.keys().next().value!);
    runners.set(request.hash, runner);
  }
  Atomics.store(progress, 0, 0);
  parentPort!.postMessage({ id: request.id, started: true, ...(fresh ? { ruleNames: runner.ruleNames } : {}) } satisfies LintReply);
  return { id: request.id, findings: await runner.run(request.value, request.absolute) };
}

// one document at a time: the budget of each is its own
let queue = Promise.resolve();
parentPort!.on("message", (request: LintRequest) => {
  queue = queue.then(async () => {
    const reply = await lint(request).catch((err: unknown): LintReply => ({ id: request.id, failed: err instanceof Error ? err.message : String(err) }));
    parentPort!.postMessage(reply);
  });
});
