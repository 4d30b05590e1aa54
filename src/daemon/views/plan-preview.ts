/**
 * What the next run would do: the plan of the newest fetched source, with the config in force,
 * against the state as it is now; computed when a page asks and kept until the source, the
 * config or the state changes.
 */
import { ValidationFailed } from "../../errors.js";
import type { Diagnostic } from "../../errors.js";
import type { PlanRun } from "../../run/run-plan.js";
import type { StateSnapshot } from "../../record/state.js";
import type { SourceSnapshot } from "../../source/source.js";

export type Preview =
  | { readonly kind: "none" }
  | { readonly kind: "plan"; readonly run: PlanRun }
  | { readonly kind: "invalid"; readonly error: string; readonly diagnostics: readonly Diagnostic[] }
  | { readonly kind: "error"; readonly error: string };

export interface PlanPreviewDeps {
  readonly snapshot: () => SourceSnapshot | undefined;
  /** Identifies the config in force (the daemon reloads gatesync.yaml): a new one plans anew. */
  readonly configHash: () => string;
  /** The state as the pages read it (a shared, cached snapshot: cached-state.ts). */
  readonly state: { read(): Promise<StateSnapshot> };
  readonly plan: (snapshot: SourceSnapshot) => Promise<PlanRun>;
}

export class PlanPreview {
  private cached: { key: string; value: Promise<Preview> } | undefined;

  constructor(private readonly deps: PlanPreviewDeps) {}

  async get(): Promise<Preview> {
    const snapshot = this.deps.snapshot();
    if (snapshot === undefined) return { kind: "none" };
    // the commit's files stay until the preview is made, whatever the runs fetch meanwhile
    const release = snapshot.hold?.();
    try {
      const { lineage, serial } = await this.deps.state.read();
      const key = `${snapshot.revision}\u0000${this.deps.configHash()}\u0000${lineage}\u0000${serial}`;
      if (this.cached?.key !== key) this.cached = { key, value: this.compute(snapshot) };
      return await this.cached.value;
    } finally {
      release?.();
    }
  }

  private async compute(snapshot: SourceSnapshot): Promise<Preview> {
    try {
      return { kind: "plan", run: await this.deps.plan(snapshot) };
    } catch (err) {
      if (err instanceof ValidationFailed) return { kind: "invalid", error: err.message, diagnostics: err.diagnostics };
      return { kind: "error", error: (err as Error).message };
    }
  }
}
