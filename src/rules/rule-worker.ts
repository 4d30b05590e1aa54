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
  /** Only build the ruleset (a config being prepared): what Spectral says of a bad one comes back. */
  readonly prepareOnly?: boolean;
}

/** One of Spectral's findings about a ruleset's definition, at its path in the ruleset. */
export interface DefinitionError {
  readonly message: string;
  readonly path?: ReadonlyArray<string | number>;
}

export type LintReply =
  | { readonly id: number; readonly started: true; readonly ruleNames?: readonly string[] }
  | { readonly id: number; readonly findings: readonly RawFinding[]; readonly ruleNames?: readonly string[] }
  | { readonly id: number; readonly failed: string; readonly errors?: readonly DefinitionError[] };

const given = workerData as { progress: SharedArrayBuffer; keptRulesets: number };
const progress = new Int32Array(given.progress);
/** As many rulesets as the checking thread counts on (rule-thread.ts). */
const keptRulesets = given.keptRulesets;
const runners = new Map<string, RuleRunner>();

/** What was thrown, as plain data: Spectral's AggregateError keeps one error (with its path) per problem. */
function failure(id: number, err: unknown): LintReply {
  const inner = err instanceof Error ? (err as { errors?: unknown }).errors : undefined;
  const errors = Array.isArray(inner)
    ? inner.map((e: unknown): DefinitionError => {
        const path = (e as { path?: unknown }).path;
        return { message: e instanceof Error ? e.message : String(e), ...(Array.isArray(path) ? { path: path as Array<string | number> } : {}) };
      })
    : undefined;
  const path = (err as { path?: unknown } | null)?.path;
  const single = Array.isArray(path) && err instanceof Error ? [{ message: err.message, path: path as Array<string | number> }] : undefined;
  const located = errors ?? single;
  return { id, failed: err instanceof Error ? err.message : String(err), ...(located === undefined ? {} : { errors: located }) };
}

async function lint(request: LintRequest): Promise<LintReply> {
  if (request.prepareOnly === true) {
    // the budget runs from here: building is all a prepare does
    parentPort!.postMessage({ id: request.id, started: true } satisfies LintReply);
  }
  let runner = runners.get(request.hash);
  const fresh = runner === undefined;
  if (runner === undefined) {
    if (request.ruleset === undefined) return { id: request.id, failed: "the rules' thread was sent a ruleset it does not hold" };
    runner = new RuleRunner(request.ruleset, progress);
    if (runners.size >= keptRulesets) runners.delete(runners.keys().next().value!);
    runners.set(request.hash, runner);
  }
  if (request.prepareOnly === true) return { id: request.id, findings: [], ruleNames: runner.ruleNames };
  Atomics.store(progress, 0, 0);
  parentPort!.postMessage({ id: request.id, started: true, ...(fresh ? { ruleNames: runner.ruleNames } : {}) } satisfies LintReply);
  return { id: request.id, findings: await runner.run(request.value, request.absolute) };
}

// one document at a time: the budget of each is its own
let queue = Promise.resolve();
parentPort!.on("message", (request: LintRequest) => {
  queue = queue.then(async () => {
    const reply = await lint(request).catch((err: unknown) => failure(request.id, err));
    parentPort!.postMessage(reply);
  });
});
