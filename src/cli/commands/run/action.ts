import type { GatesyncConfig } from "../../../config/config.js";
import { startDaemon } from "../../../daemon/daemon.js";
import type { Daemon } from "../../../daemon/daemon.js";
import { parseListen } from "../../../daemon/http/server.js";
import { createLogger } from "../../../logger.js";
import type { Logger } from "../../../logger.js";
import type { CliIo } from "../../common/cli-io.js";
import { untilStopSignal } from "../apply/interrupt.js";
import { configOrDefault } from "../../common/cli-io.js";
import { UsageError } from "../../../errors.js";
import { startDaemonTracing } from "./daemon-tracing.js";

export interface RunFlags {
  readonly config: string;
  readonly listen?: string;
  readonly once?: boolean;
  readonly allowMassDeactivation?: boolean;
}

/** `gatesync run`: the daemon, until SIGINT or SIGTERM (or its first run with --once). */
export async function runAction(opts: RunFlags, io: CliIo): Promise<void> {
  if (opts.allowMassDeactivation === true && opts.once !== true) {
    throw new UsageError("--allow-mass-deactivation is for one run (--once)", {
      hint: "for a running daemon, set `deactivationGuard: { allowCommit: <commit> }` in gatesync.yaml: it lifts the guard for that commit only",
    });
  }
  const read = await configOrDefault(opts.config);
  const config = opts.allowMassDeactivation === true ? { ...read, deactivationGuard: { ...read.deactivationGuard, allow: true } } : read;
  // refused before anything starts, with --once too
  parseListen(opts.listen ?? config.server.listen);
  const logger = createLogger({ pretty: io.isTty && io.env.GATESYNC_LOG_FORMAT !== "json" });
  const tracing = await startDaemonTracing(io, config);
  const start = (cfg: GatesyncConfig): Promise<Daemon> =>
    startDaemon({
      config: cfg,
      env: io.env,
      logger,
      ...(opts.listen === undefined ? {} : { listen: opts.listen }),
      serve: opts.once !== true,
      watchConfig: opts.once !== true,
      // a reloaded config whose source, state, server or telemetry changed: the daemon is rebuilt
      onRestart: async (next) => {
        const previous = daemon.configInForce();
        await daemon.stop();
        await tracing.follow(next);
        daemon = await start(next).catch(async (err: unknown) => {
          logger.error({ err: (err as Error).message }, "the reloaded gatesync.yaml could not start: the last good config is back in force");
          await tracing.follow(previous);
          return start(previous);
        });
      },
    });
  let daemon: Daemon;
  try {
    daemon = await start(config);
    process.exitCode = await (opts.once === true ? firstRunExit(daemon) : untilStopped(() => daemon, logger));
  } finally {
    await tracing.stop();
    logger.flush();
  }
}

/** `--once`: the first run (with environments: once each has run, the worst of their results decides), then stop; its exit code. */
async function firstRunExit(daemon: Daemon): Promise<number> {
  const report = await daemon.firstRun;
  await daemon.stop();
  return report.result === "applied" || report.result === "noop" ? 0 : 1;
}

/** The daemon until SIGINT or SIGTERM (SIGHUP reloads gatesync.yaml), then stopped; exit code 0. */
async function untilStopped(daemon: () => Daemon, logger: Logger): Promise<number> {
  const hangup = (): void => void daemon().reload("SIGHUP");
  process.on("SIGHUP", hangup);
  await untilStopSignal();
  process.off("SIGHUP", hangup);
  logger.info("stopping: no new calls; waiting for calls in flight");
  await daemon().stop();
  return 0;
}
