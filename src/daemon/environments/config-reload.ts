/**
 * gatesync.yaml reloaded while the daemon runs: on change (the file is polled, which also sees a
 * Kubernetes ConfigMap's symlink swap) or on SIGHUP. A config that does not load is refused
 * with its located errors — logged and shown in /status — and the last good one stays in force.
 * A good one is put in force for the next run; a change to the source, the state, the server or
 * the telemetry needs the daemon rebuilt, which `onRestart` does (`gatesync run` stops it —
 * its run in flight finishing — and starts anew, its tracing restarted with the new settings:
 * the OpenTelemetry SDK is not reconfigured under a run whose spans it holds).
 */
import { unwatchFile, watchFile } from "node:fs";
import { formatDiagnostic } from "../../errors.js";
import { loadConfig } from "../../config/config.js";
import type { GatesyncConfig } from "../../config/config.js";
import { GatesyncError, ValidationFailed } from "../../errors.js";
import type { Diagnostic } from "../../errors.js";
import type { Logger } from "../../logger.js";
import type { Reconciler } from "../loop/reconciler.js";
import { withRulesets } from "../../rules/prepare-rules.js";

export type ReloadResult = "unchanged" | "reloaded" | "refused" | "restarted" | "restart-needed";

export interface ConfigStatus {
  readonly file: string;
  readonly hash: string;
  /** The last reload that was refused, while no later one succeeded. */
  readonly error?: { readonly at: string; readonly diagnostics: readonly Diagnostic[] };
}

export interface ConfigReloaderOptions {
  readonly file: string;
  readonly reconciler: Pick<Reconciler, "configInForce" | "reconfigure">;
  readonly logger: Logger;
  readonly hashOf: (config: GatesyncConfig) => Promise<string>;
  /** Rebuilds the daemon with a config whose source, state or server changed. */
  readonly onRestart?: (config: GatesyncConfig) => Promise<void>;
  /** Refuses a config that loads but cannot be served with the daemon's variables (throws a located GatesyncError). */
  readonly check?: (config: GatesyncConfig) => void;
  /** How often the file is looked at (ms). */
  readonly pollMs?: number;
}

/** The parts of a config a running daemon cannot change in place. */
const rebuildSections = (c: GatesyncConfig): string => JSON.stringify([c.source, c.state, c.server, c.telemetry ?? null]);

function diagnosticsOf(err: unknown, file: string): Diagnostic[] {
  if (err instanceof ValidationFailed) return [...err.diagnostics];
  if (err instanceof GatesyncError) return [{ file, ...err.toDiagnostic() }];
  throw err;
}

export class ConfigReloader {
  private error: ConfigStatus["error"];
  private queue: Promise<unknown> = Promise.resolve();
  private watching = false;

  constructor(private readonly opts: ConfigReloaderOptions) {}

  get status(): ConfigStatus {
    return { file: this.opts.file, hash: this.opts.reconciler.configInForce.hash, ...(this.error === undefined ? {} : { error: this.error }) };
  }

  /** Reloads now (one reload at a time). */
  reload(reason: string): Promise<ReloadResult> {
    const next = this.queue.then(async () => this.reloadOnce(reason));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async reloadOnce(reason: string): Promise<ReloadResult> {
    const log = this.opts.logger.child({ component: "config", file: this.opts.file, reason });
    let config: GatesyncConfig;
    try {
      // with its rulesets bundled: one that does not load refuses the config like a bad key
      config = await withRulesets(await loadConfig(this.opts.file));
      this.opts.check?.(config);
    } catch (err) {
      const diagnostics = diagnosticsOf(err, this.opts.file);
      this.error = { at: new Date().toISOString(), diagnostics };
      log.error({ errors: diagnostics.map((d) => formatDiagnostic(d)) }, "gatesync.yaml refused: the last good config stays in force");
      return "refused";
    }
    const current = this.opts.reconciler.configInForce;
    const hash = await this.opts.hashOf(config);
    this.error = undefined;
    if (hash === current.hash) return "unchanged";
    if (rebuildSections(config) !== rebuildSections(current.config)) {
      if (this.opts.onRestart === undefined) {
        log.warn("gatesync.yaml changed its source, state, server or telemetry: restart gatesync to use them; the rest is not reloaded");
        return "restart-needed";
      }
      log.info("gatesync.yaml changed its source, state, server or telemetry: restarting the daemon");
      await this.opts.onRestart(config);
      return "restarted";
    }
    this.opts.reconciler.reconfigure(config, hash);
    log.info({ hash }, "gatesync.yaml reloaded");
    return "reloaded";
  }

  /** Reloads whenever the file changes. */
  watch(): void {
    this.watching = true;
    watchFile(this.opts.file, { interval: this.opts.pollMs ?? 1_000, persistent: false }, (now, before) => {
      if (now.mtimeMs !== before.mtimeMs || now.size !== before.size || now.ino !== before.ino) void this.reload("file change");
    });
  }

  /** Stops watching (a reload in progress may be the one rebuilding the daemon: it is not waited for). */
  stop(): void {
    if (this.watching) unwatchFile(this.opts.file);
    this.watching = false;
  }
}
