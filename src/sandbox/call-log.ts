/** The sandbox's call log: every request, its operation, status and fault, with counts. */
import type { InterfaceName } from "../contract/operations.js";
import type { Handled } from "./context.js";

export interface CallRecord {
  readonly seq: number;
  /** When the answer went out (or the connection was reset). */
  readonly at: string;
  /** When the request arrived, in ms since the epoch (fractional). */
  readonly startedAt: number;
  readonly interface: InterfaceName | "traffic" | "inspect";
  readonly operation: Handled["operation"];
  readonly method: string;
  readonly path: string;
  /** 0: the connection was reset (no answer). */
  readonly status: number;
  /** A batch sub-request (sent by the sandbox itself). */
  readonly internal: boolean;
  /** The fault injected, if any. */
  readonly fault?: string;
  /** Processed, but the answer was dropped (connection reset after processing). */
  readonly lostResponse?: boolean;
}

export interface CallSummary {
  readonly counts: Record<string, { total: number; byStatus: Record<string, number> }>;
  readonly log: readonly CallRecord[];
}

export class CallLog {
  private log: CallRecord[] = [];
  private counts: CallSummary["counts"] = {};
  private seq = 0;

  /** `size`: calls kept (the log is trimmed in steps, so recording stays O(1) per call). */
  constructor(private readonly size: number) {}

  record(entry: Omit<CallRecord, "seq" | "at">): void {
    const full: CallRecord = { seq: ++this.seq, at: new Date().toISOString(), ...entry };
    this.log.push(full);
    if (this.log.length >= 2 * this.size) this.log = this.log.slice(-this.size);
    const c = (this.counts[entry.operation] ??= { total: 0, byStatus: {} });
    c.total++;
    c.byStatus[String(entry.status)] = (c.byStatus[String(entry.status)] ?? 0) + 1;
  }

  summary(): CallSummary {
    return structuredClone({ counts: this.counts, log: this.log.slice(-this.size) });
  }

  reset(): void {
    this.log = [];
    this.counts = {};
  }
}
