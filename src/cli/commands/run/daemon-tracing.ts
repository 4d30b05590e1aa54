/**
 * The tracing of `gatesync run`: started with the daemon, from the `telemetry:` section of its
 * gatesync.yaml (the OTEL_* variables winning: telemetry/tracing-settings.ts), and started anew
 * when a reload changes that section. A reload that changes it rebuilds the daemon
 * (config-reload.ts): the old SDK is shut down (its spans flushed, within the flush budget)
 * only once the daemon stopped, so no run is left with half its spans in one SDK and half in
 * another.
 */
import type { GatesyncConfig } from "../../../config/config.js";
import { packageVersion } from "../../../package-root.js";
import { startTracing } from "../../../telemetry/tracing.js";
import type { CliIo } from "../../common/cli-io.js";

export interface DaemonTracing {
  /** Between the daemon's stop and its start with `config`: the SDK restarted when the config's telemetry differs. */
  follow(config: GatesyncConfig): Promise<void>;
  /** Flushes (bounded) and stops the SDK. */
  stop(): Promise<void>;
}

const settingsOf = (config: GatesyncConfig): string => JSON.stringify(config.telemetry ?? null);

export async function startDaemonTracing(io: CliIo, config: GatesyncConfig): Promise<DaemonTracing> {
  const start = async (c: GatesyncConfig): ReturnType<typeof startTracing> =>
    startTracing(io.env, packageVersion(), (m) => io.stderr(`warning: ${m}\n`), c.telemetry?.traces);
  let tracing = await start(config);
  let inForce = settingsOf(config);
  return {
    async follow(next) {
      if (settingsOf(next) === inForce) return;
      await tracing.shutdown();
      tracing = await start(next);
      inForce = settingsOf(next);
    },
    stop: async () => tracing.shutdown(),
  };
}
