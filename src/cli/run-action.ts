import type { GatesyncConfig } from "../config/config.js";
import { startDaemon } from "../daemon/daemon.js";
import type { Daemon } from "../daemon/daemon.js";
import { parseListen } from "../daemon/server.js";
import { createLogger } from "../logger.js";
import type { CliIo } from "./cli-io.js";
import { untilStopSignal } from "./interrupt.js";
import { configOrDefault } from "./cli-io.js";
import { UsageError } from "../errors.js";

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
  const start = (cfg: GatesyncConfig): Promise<Daemon> =>
    startDaemon({
      config: cfg,
      env: io.env,
      logger,
      ...(opts.listen === undefined ? {} : { listen: opts.listen }),
      serve: opts.once !== true,
      watchConfig: opts.once !== true,
      // a reloaded config whose source, state or server changed: the daemon is rebuilt
      onRestart: async (next) => {
        const previous = daemon.configInForce();
        await daemon.stop();
        daemon = await start(next).catch(async (err: unknown) => {
          logger.error({ err: (err as Error).message }, "the reloaded gatesync.yaml could not start: the last good config is back in force");
          return start(previous);
        });
      },
    });
  let daemon = await start(config);
  if (opts.once === true) {
    // with environments: once each has run, the worst of their results decides
    const report = await daemon.firstRun;
    await daemon.stop();
    logger.flush();
    process.exitCode = report.result === "applied" || report.result === "noop" ? 0 : 1;
    return;
  }
  const hangup = (): void => void daemon.reload("SIGHUP");
  process.on("SIGHUP", hangup);
  await untilStopSignal();
  process.off("SIGHUP", hangup);
  logger.info("stopping: no new calls; waiting for calls in flight");
  await daemon.stop();
  logger.flush();
  process.exitCode = 0;
}
