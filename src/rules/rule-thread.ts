/**
 * Rules run off the checking thread, each document within a budget. Spectral runs on a thread
 * of its own (rule-worker.ts), one per checking thread, started on first use: a rule that does
 * not return within the document's budget — or within what is left of the run's — has that
 * thread ended (its next document starts a new one) and is a located RULE_TIMEOUT, an error:
 * the commit is refused, the last good one stays in force, and the next run is not held up.
 * The checking thread keeps the findings of the documents it saw (by content) and locates
 * findings with its syntax trees; the rules' thread gets the parsed value only.
 */
import type { Worker } from "node:worker_threads";
import { ErrorCode } from "../errors.js";
import type { Diagnostic } from "../errors.js";
import { formatPath } from "../text/field-path.js";
import { startWorker } from "../worker-module.js";
import type { FindingsMemo } from "./findings-cache.js";
import { findingsOf } from "./rule-findings.js";
import type { Locate, Place, RawFinding, RulesetCode, RulesBudget } from "./rule-runner.js";
import type { DefinitionError, LintReply, LintRequest } from "./rule-worker.js";

/**
 * Rulesets a rules' thread keeps built (the oldest let go first): a daemon's commits may edit a
 * ruleset many times. It is told this number, and this thread counts the same way (`hold`), so
 * that a ruleset is sent again exactly when the rules' thread has let it go.
 */
const keptRulesets = 4;

type Outcome = { readonly findings: readonly RawFinding[] } | { readonly timedOut: { readonly rule: string | undefined } };

interface Pending {
  readonly resolve: (outcome: Outcome) => void;
  readonly reject: (err: Error) => void;
  readonly budgetMs: number;
  readonly hash: string;
  timer?: NodeJS.Timeout;
}

/** The rules' thread of this thread, started on first use and again after it was ended. */
class RuleThread {
  private worker: Worker | undefined;
  private progress = new Int32Array(new SharedArrayBuffer(4));
  /** Rulesets the current worker holds, and their rules by progress index. */
  private held = new Set<string>();
  private readonly ruleNames = new Map<string, readonly string[]>();
  private pending: { readonly id: number; readonly entry: Pending } | undefined;
  private nextId = 0;
  /** One document at a time: a document's budget starts when its lint does. */
  private tail: Promise<unknown> = Promise.resolve();

  lint(ruleset: RulesetCode, value: unknown, absolute: string, budgetMs: number, prepareOnly = false): Promise<Outcome> {
    const run = this.tail.then(() => this.lintNow(ruleset, { value, absolute, prepareOnly }, budgetMs));
    this.tail = run.catch(() => undefined);
    return run;
  }

  private lintNow(ruleset: RulesetCode, what: { value: unknown; absolute: string; prepareOnly: boolean }, budgetMs: number): Promise<Outcome> {
    const worker = this.worker ?? this.start();
    const id = ++this.nextId;
    const request: LintRequest = {
      id,
      hash: ruleset.hash,
      value: what.value,
      absolute: what.absolute,
      ...(what.prepareOnly ? { prepareOnly: true } : {}),
      ...(this.held.has(ruleset.hash) ? {} : { ruleset }),
    };
    this.hold(ruleset.hash);
    return new Promise<Outcome>((resolve, reject) => {
      this.pending = { id, entry: { resolve, reject, budgetMs, hash: ruleset.hash } };
      worker.ref();
      worker.postMessage(request);
    });
  }

  /** Counts a ruleset sent as the rules' thread keeps it: the oldest of more than `keptRulesets` let go (rule-worker.ts). */
  private hold(hash: string): void {
    if (this.held.has(hash)) return;
    if (this.held.size >= keptRulesets) this.held.delete(this.held.values().next().value!);
    this.held.add(hash);
  }

  private start(): Worker {
    this.progress = new Int32Array(new SharedArrayBuffer(4));
    const worker = startWorker(import.meta.url, "rule-worker", { workerData: { progress: this.progress.buffer, keptRulesets } });
    worker.unref();
    worker.on("message", (reply: LintReply) => this.onReply(reply));
    // only the current thread's end fails its document (one ended past its budget was settled then)
    worker.on("error", (err) => {
      if (this.worker === worker) this.settle((p) => p.reject(err));
    });
    worker.on("exit", (code) => {
      if (this.worker !== worker) return;
      this.forget();
      this.settle((p) => p.reject(new Error(`the rules' thread stopped (exit code ${code})`)));
    });
    this.worker = worker;
    return worker;
  }

  private onReply(reply: LintReply): void {
    const current = this.pending;
    if (current === undefined || current.id !== reply.id) return;
    const p = current.entry;
    if ("started" in reply) {
      if (reply.ruleNames !== undefined) this.ruleNames.set(p.hash, reply.ruleNames);
      p.timer = setTimeout(() => this.timedOut(), p.budgetMs);
      return;
    }
    if ("failed" in reply) {
      this.held.delete(p.hash);
      this.settle((q) => q.reject(definitionError(reply.failed, reply.errors)));
      return;
    }
    if (reply.ruleNames !== undefined) this.ruleNames.set(p.hash, reply.ruleNames);
    this.settle((q) => q.resolve({ findings: reply.findings }));
  }

  /** Past the budget: the rule then running is named, the thread ended (the next document starts another). */
  private timedOut(): void {
    const p = this.pending?.entry;
    if (p === undefined) return;
    const index = Atomics.load(this.progress, 0);
    const rule = index === 0 ? undefined : this.ruleNames.get(p.hash)?.[index - 1];
    const worker = this.worker;
    this.forget();
    this.settle((q) => q.resolve({ timedOut: { rule } }));
    void worker?.terminate();
  }

  private forget(): void {
    this.worker = undefined;
    this.held = new Set();
  }

  private settle(how: (p: Pending) => void): void {
    const current = this.pending;
    if (current === undefined) return;
    this.pending = undefined;
    clearTimeout(current.entry.timer);
    this.worker?.unref();
    how(current.entry);
  }
}

/** What the rules' thread said of a ruleset it could not build, as Spectral threw it (one error with a path per problem). */
function definitionError(message: string, errors: readonly DefinitionError[] | undefined): Error {
  const err = new Error(message);
  if (errors !== undefined)
    Object.assign(err, { errors: errors.map((e) => Object.assign(new Error(e.message), e.path === undefined ? {} : { path: e.path })) });
  return err;
}

let thread: RuleThread | undefined;
const ruleThread = (): RuleThread => (thread ??= new RuleThread());

/**
 * Builds the ruleset on this thread's rules' thread — where its documents are then linted, so
 * Spectral is loaded and the ruleset built once — and throws what Spectral says of a bad one.
 * Building is bounded by a document's budget too (a custom function's module runs as it loads).
 */
export async function prepareRuleset(ruleset: RulesetCode): Promise<void> {
  const outcome = await ruleThread().lint(ruleset, undefined, ruleset.source, defaultBudget.documentMs, true);
  if ("timedOut" in outcome) throw new Error(`the ruleset was not built within ${seconds(defaultBudget.documentMs)}`);
}

/** Per document and per run when the config says nothing (docs/user/rules.md). */
export const defaultBudget = { documentMs: 10_000, runMs: 300_000 } as const;

const seconds = (ms: number): string => (ms < 1_000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`);

/** The finding for a document whose rules did not finish: an error, at the document. */
function timeoutFinding(
  at: { place: Place; locate: Locate },
  ruleset: RulesetCode,
  why: { rule: string | undefined } | "run",
  budget: RulesBudget,
  budgetMs: number,
): Diagnostic {
  const { place, locate } = at;
  const what = why === "run" ? "the rules" : why.rule === undefined ? "the rules' given paths" : `the rule ${why.rule}`;
  return {
    severity: "error",
    code: ErrorCode.RULE_TIMEOUT,
    ...(why !== "run" && why.rule !== undefined ? { rule: why.rule } : {}),
    file: place.file,
    ...(place.resource === undefined ? {} : { resource: place.resource }),
    ...(place.base === undefined || place.base.length === 0 ? {} : { path: formatPath(place.base) }),
    // the document (or the attached document inside it) that was not checked to the end
    ...locate(place.file, place.index, place.base ?? []),
    message:
      why === "run"
        ? `not checked by the rules of ${ruleset.source}: the run's budget for rules (${seconds(budget.runMs)}) was spent before this document`
        : `${what} did not finish within ${seconds(budgetMs)} on this document and ${why.rule === undefined ? "were" : "was"} stopped`,
    hint:
      why !== "run" && why.rule !== undefined
        ? `a pattern that backtracks (nested repetition such as (a+)+) can run for ever on one value: simplify the rule, or raise rules.documentTimeout in gatesync.yaml — the operator's: a daemon takes it from its own file, never from the repository's (docs/user/rules.md)`
        : "simplify the rules, or raise rules.documentTimeout and rules.runTimeout in gatesync.yaml — the operator's: a daemon takes them from its own file, never from the repository's (docs/user/rules.md)",
  };
}

/** This thread's findings of documents it saw, by ruleset and content (bounded: a daemon's thread keeps one repository's). */
const seen = new Map<string, readonly Diagnostic[]>();

/**
 * A ruleset as a file's checks use it: the findings cache's entry first (`memo`, keyed by the
 * file's content), then this thread's, the rules' thread only for a document neither holds.
 * A document that timed out is kept by neither: it is linted again next time.
 */
export class RulesetCheck {
  constructor(
    readonly ruleset: RulesetCode,
    private readonly budget: RulesBudget = { ...defaultBudget, deadline: Date.now() + defaultBudget.runMs },
  ) {}

  async check(value: unknown, place: Place, absolute: string, locate: Locate, contentKey?: string, memo?: FindingsMemo): Promise<readonly Diagnostic[]> {
    const slot = `${this.ruleset.hash.slice(0, 16)}|${place.index}|${JSON.stringify(place.base ?? [])}`;
    const cached = memo?.get(slot);
    if (cached !== undefined) return cached;
    const key = contentKey === undefined ? undefined : `${this.ruleset.hash}\0${place.file}\0${place.index}\0${(place.base ?? []).join("\0")}\0${contentKey}`;
    const kept = key === undefined ? undefined : seen.get(key);
    if (kept !== undefined) return kept;
    const left = this.budget.deadline - Date.now();
    if (left <= 0) return [timeoutFinding({ place, locate }, this.ruleset, "run", this.budget, 0)];
    const budgetMs = Math.min(this.budget.documentMs, left);
    const outcome = await ruleThread().lint(this.ruleset, value, absolute, budgetMs);
    if ("timedOut" in outcome) return [timeoutFinding({ place, locate }, this.ruleset, outcome.timedOut, this.budget, budgetMs)];
    const found = findingsOf(outcome.findings, value, place, locate);
    memo?.set(slot, found);
    if (key !== undefined) {
      if (seen.size >= 50_000) seen.delete(seen.keys().next().value!);
      seen.set(key, found);
    }
    return found;
  }
}
