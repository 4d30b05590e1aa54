/**
 * `npm start`: the main job on its embedded default. Starts a sandbox in this process with the
 * example fixtures and runs gatesync on examples/config with examples/gatesync.yaml, its
 * targets pointed at the sandbox and its state in a throw-away directory (the sandbox starts
 * empty every time).
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import { loadConfig } from "../config/config.js";
import type { GatesyncConfig } from "../config/config.js";
import { findSecretRefs, walkStrings } from "../load/secret-refs.js";
import { renderSummary } from "../apply/summary.js";
import { startDaemon } from "../daemon/daemon.js";
import type { Daemon } from "../daemon/daemon.js";
import type { RunReport } from "../daemon/reconciler.js";
import { createLogger } from "../logger.js";
import type { Plan } from "../plan/plan.js";
import { renderPlan } from "../plan/render.js";
import { painter } from "../style.js";
import { loadFixtures } from "../sandbox/fixtures.js";
import { startSandbox } from "../sandbox/sandbox.js";
import type { SandboxHandle } from "../sandbox/sandbox.js";
import type { CliIo } from "./plan-command.js";
import { formatDiagnostic, renderValidation } from "./report.js";
import { validateDirectory } from "./validate-command.js";

export const examplesDir = fileURLToPath(new URL("../../examples/", import.meta.url));

const demoValue = (): string => `demo-${randomBytes(12).toString("hex")}`;

/** The example config with its targets pointed at the sandbox and its state at `statePath`. */
function demoConfig(config: GatesyncConfig, sandbox: SandboxHandle, statePath: string): GatesyncConfig {
  const t = config.targets;
  return {
    ...config,
    source: { type: "directory", directory: config.source.type === "directory" ? config.source.directory : examplesDir, watch: true },
    state: { backend: "sqlite", path: statePath },
    targets: {
      ...(t.gateway === undefined ? {} : { gateway: { ...t.gateway, url: sandbox.urls.gateway } }),
      ...(t.portal === undefined ? {} : { portal: { ...t.portal, url: sandbox.urls.portal } }),
      ...(t.dashboard === undefined ? {} : { dashboard: { ...t.dashboard, url: sandbox.urls.dashboard } }),
      ...(t.llm === undefined ? {} : { llm: { ...t.llm, url: sandbox.urls.llm } }),
    },
  };
}

export function addDemoCommand(program: Command, io: CliIo): void {
  program
    .command("demo")
    .description("run the daemon on examples/ against an in-process sandbox (what `npm start` runs)")
    .option("--once", "stop after the first run")
    .option("--listen <host:port>", "address of the status server", "127.0.0.1:9464")
    .action(async (opts: { once?: boolean; listen: string }) => {
      const example = await loadConfig(`${examplesDir}gatesync.yaml`);
      // Sandbox-only credentials, handed over through the variables the config names.
      const env: Record<string, string | undefined> = { ...io.env };
      const credential = (name: string | undefined): string => (name === undefined ? demoValue() : (env[name] ??= demoValue()));
      const sandbox = await startSandbox({
        fixtures: await loadFixtures(`${examplesDir}sandbox-fixtures.yaml`),
        credentials: {
          gatewayKey: credential(example.targets.gateway?.credentialEnv),
          portalKey: credential(example.targets.portal?.credentialEnv),
          dashboardToken: credential(example.targets.dashboard?.tokenEnv),
          llmKey: credential(example.targets.llm?.credentialEnv),
        },
      });
      if (example.targets.gateway?.batch !== undefined) env[example.targets.gateway.batch.keyEnv] ??= "sandbox-loopback-key";
      const workDir = await mkdtemp(path.join(tmpdir(), "gatesync-demo-"));
      const config = demoConfig(example, sandbox, path.join(workDir, "state.db"));
      const color = io.isTty && io.env.NO_COLOR === undefined;
      const paint = painter(color);
      const logger = createLogger({ level: io.env.GATESYNC_LOG_LEVEL ?? "warn", pretty: io.isTty });
      let daemon: Daemon | undefined;
      try {
        io.stdout(`== sandbox gateway, portal, dashboard and LLM service at ${sandbox.urls.base} (objects: ${sandbox.urls.inspect}/objects)\n\n`);
        const source = config.source.type === "directory" ? config.source.directory : examplesDir;
        const checked = await validateDirectory(source, config, env);
        io.stdout(`== gatesync validate ${path.relative(process.cwd(), source) || "."}\n`);
        io.stdout(renderValidation({ valid: checked.valid, files: checked.files, resources: checked.resources.length, diagnostics: checked.diagnostics }, "text", color));
        // The examples' secrets live in variables this machine does not have: demo values.
        for (const r of checked.resources) walkStrings(r.spec, (s) => findSecretRefs(s).forEach((ref) => ref.provider === "env" && (env[ref.name] ??= demoValue())));

        let first: ((ok: boolean) => void) | undefined;
        const firstRun = new Promise<boolean>((resolve) => (first = resolve));
        const onRun = (report: RunReport, plan: Plan | undefined): void => {
          const head = `\n== run (${report.reason}) at ${report.startedAt}: ${report.result}`;
          if (plan !== undefined && report.summary !== undefined) {
            io.stdout(`${head}\n-- plan\n${renderPlan(plan, "text", { color })}-- apply\n${renderSummary(report.summary, paint)}`);
          } else {
            io.stdout(`${head}${report.error === undefined ? "" : `: ${report.error}`}\n`);
            for (const d of report.diagnostics ?? []) io.stdout(`${formatDiagnostic(d, paint)}\n`);
          }
          first?.(report.result === "applied");
          first = undefined;
        };
        daemon = await startDaemon({ config, env, logger, listen: opts.listen, onRun }).catch(async (err: unknown) => {
          if ((err as NodeJS.ErrnoException).code !== "EADDRINUSE") throw err;
          return startDaemon({ config, env, logger, listen: "127.0.0.1:0", onRun });
        });
        const ok = await firstRun;
        io.stdout(`\n== status: ${daemon.url}/status   metrics: ${daemon.url}/metrics   health: ${daemon.url}/healthz\n`);
        if (!ok) process.exitCode = 1;
        if (opts.once !== true) {
          io.stdout("   the daemon keeps running: edit a file under examples/config and it syncs; Ctrl-C to stop\n");
          await new Promise<void>((resolve) => {
            process.once("SIGINT", resolve);
            process.once("SIGTERM", resolve);
          });
        }
      } finally {
        await daemon?.stop();
        await sandbox.stop();
        await rm(workDir, { recursive: true, force: true });
        logger.flush();
      }
    });
}
