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
import { loadConfig } from "../../../config/config.js";
import type { GatesyncConfig } from "../../../config/config.js";
import { interfaceNames } from "../../../contract/interfaces.js";
import { findSecretRefs, walkStrings } from "../../../secrets/references.js";
import { renderSummary } from "../../../apply/summary.js";
import { startDaemon } from "../../../daemon/daemon.js";
import type { Daemon } from "../../../daemon/daemon.js";
import type { RunReport } from "../../../run/run-report.js";
import { UsageError } from "../../../errors.js";
import { packageRoot } from "../../../package-root.js";
import { createLogger } from "../../../logger.js";
import type { Plan } from "../../../plan/plan.js";
import { renderPlan } from "../../../plan/render/render.js";
import { painter } from "../../../text/style.js";
import { loadFixtures } from "../../../sandbox/fixtures.js";
import { startSandbox } from "../../../sandbox/sandbox.js";
import type { SandboxHandle } from "../../../sandbox/sandbox.js";
import type { CliIo } from "../../common/cli-io.js";
import { untilStopSignal } from "../apply/interrupt.js";
import { formatDiagnostic } from "../../../errors.js";
import { renderValidation } from "../../common/report.js";
import { validateDirectory } from "../validate/action.js";

export const examplesDir = path.join(packageRoot, "examples");

const demoValue = (): string => `demo-${randomBytes(12).toString("hex")}`;

/** The example config with its targets pointed at the sandbox and its state at `statePath`. */
function demoConfig(config: GatesyncConfig, sandbox: SandboxHandle, statePath: string): GatesyncConfig {
  const t = config.targets;
  return {
    ...config,
    source: { type: "directory", directory: config.source.type === "directory" ? config.source.directory : examplesDir, watch: true },
    state: { backend: "sqlite", path: statePath },
    // the sandbox answers every interface (each at its own address)
    targets: Object.fromEntries(
      interfaceNames().flatMap((iface) => {
        const target = t[iface];
        return target === undefined ? [] : [[iface, { ...target, url: sandbox.urls[iface] }]];
      }),
    ),
  };
}

/** What `--serve` prints: the sandbox's addresses and the variables that reach it. */
function exploreText(sandbox: SandboxHandle, example: GatesyncConfig): string {
  const t = example.targets;
  const vars = [
    [t.gateway?.credentialEnv, sandbox.credentials.gatewayKey],
    [t.portal?.credentialEnv, sandbox.credentials.portalKey],
    [t.dashboard?.credentialEnv, sandbox.credentials.dashboardToken],
    [t.llm?.credentialEnv, sandbox.credentials.llmKey],
  ].filter((v): v is [string, string] => v[0] !== undefined);
  return [
    `\n== the daemon stopped; the sandbox stays up for exploring at ${sandbox.urls.base}`,
    `   objects: ${sandbox.urls.inspect}/objects   calls: ${sandbox.urls.inspect}/calls`,
    `   gateway ${sandbox.urls.gateway}/gw/   portal ${sandbox.urls.portal}   dashboard ${sandbox.urls.dashboard}/api/hooks   llm ${sandbox.urls.llm}`,
    "   its sandbox-only credentials:",
    ...vars.map(([name, value]) => `     export ${name}=${value}`),
    "   Ctrl-C to stop\n",
  ].join("\n");
}

export interface DemoFlags {
  readonly once?: boolean;
  readonly serve?: boolean;
  readonly listen: string;
}

/** `gatesync demo`. */
export async function demoAction(opts: DemoFlags, io: CliIo): Promise<void> {
  if (opts.once === true && opts.serve === true)
    throw new UsageError("--once and --serve exclude each other", "--once stops everything after the first run; --serve keeps the sandbox up");
  const example = await loadConfig(path.join(examplesDir, "gatesync.yaml"));
  // Sandbox-only credentials, handed over through the variables the config names.
  const env: Record<string, string | undefined> = { ...io.env };
  const credential = (name: string | undefined): string => (name === undefined ? demoValue() : (env[name] ??= demoValue()));
  const sandbox = await startSandbox({
    fixtures: await loadFixtures(path.join(examplesDir, "sandbox-fixtures.yaml")),
    credentials: {
      gatewayKey: credential(example.targets.gateway?.credentialEnv),
      portalKey: credential(example.targets.portal?.credentialEnv),
      dashboardToken: credential(example.targets.dashboard?.credentialEnv),
      llmKey: credential(example.targets.llm?.credentialEnv),
    },
  });
  if (example.targets.gateway?.batch !== undefined) env[example.targets.gateway.batch.keyEnv] ??= "sandbox-loopback-key";
  // the triggers' secret and token too: the demo supplies what it needs, and warns of nothing it supplies
  for (const name of [example.server.webhookSecretEnv, example.server.syncTokenEnv]) if (name !== undefined) env[name] ??= demoValue();
  const workDir = await mkdtemp(path.join(tmpdir(), "gatesync-demo-"));
  const logger = createLogger({ level: io.env.GATESYNC_LOG_LEVEL ?? "warn", pretty: io.isTty });
  try {
    io.stdout(`== sandbox gateway, portal, dashboard and LLM service at ${sandbox.urls.base} (objects: ${sandbox.urls.inspect}/objects)\n\n`);
    const config = demoConfig(example, sandbox, path.join(workDir, "state.db"));
    const keepDaemon = opts.once !== true && opts.serve !== true;
    const daemon = await runDemoDaemon({ config, env, logger, io, listen: opts.listen, serve: keepDaemon });
    try {
      if (!daemon.ok) process.exitCode = 1;
      if (keepDaemon) {
        // the page a person opens; /status is its JSON, for scripts
        const url = daemon.daemon.url;
        const signalled = untilStopSignal();
        io.stdout(`\n== status page: ${url}/   (JSON: ${url}/status   metrics: ${url}/metrics   health: ${url}/healthz)\n`);
        io.stdout("   the daemon keeps running: edit a file under examples/config and it syncs; Ctrl-C to stop\n");
        await signalled;
      }
    } finally {
      await daemon.daemon.stop();
    }
    if (opts.serve === true) {
      // the one unscrubbed output: sandbox-only credentials this command generated, shown on purpose
      const signalled = untilStopSignal();
      (io.reveal ?? io.stdout)(exploreText(sandbox, example));
      await signalled;
    }
  } finally {
    await sandbox.stop();
    await rm(workDir, { recursive: true, force: true });
    logger.flush();
  }
}

interface DemoRun {
  readonly config: GatesyncConfig;
  readonly env: Record<string, string | undefined>;
  readonly logger: ReturnType<typeof createLogger>;
  readonly io: CliIo;
  readonly listen: string;
  /** Serve the status server (only when the daemon keeps running: no address of a stopped server is printed). */
  readonly serve: boolean;
}

/** Validates the examples, starts the daemon and waits for its first run, printing both. */
async function runDemoDaemon(run: DemoRun): Promise<{ daemon: Daemon; ok: boolean }> {
  const { config, env, logger, io } = run;
  const color = io.isTty && io.env.NO_COLOR === undefined;
  const paint = painter(color);
  const source = config.source.type === "directory" ? config.source.directory : examplesDir;
  // The examples' secrets live in variables this machine does not have: demo values, given
  // before the validation that is shown, so that it does not warn about what the demo supplies.
  const supplied: string[] = [];
  for (const r of (await validateDirectory(source, config, env)).resources) {
    walkStrings(r.spec.read(), (s) =>
      findSecretRefs(s).forEach((ref) => ref.provider === "env" && env[ref.name] === undefined && supplied.push(ref.name) && (env[ref.name] = demoValue())),
    );
  }
  const checked = await validateDirectory(source, config, env);
  io.stdout(
    `== gatesync validate ${path.relative(process.cwd(), source) || "."}${supplied.length === 0 ? "" : ` (demo values for ${supplied.sort().join(", ")})`}\n`,
  );
  io.stdout(
    renderValidation({ valid: checked.valid, files: checked.files, resources: checked.resources.length, diagnostics: checked.diagnostics }, "text", color),
  );

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
  // the default port taken (another demo running): any free port
  const inUse = (err: unknown): boolean => [err, (err as Error).cause].some((e) => (e as NodeJS.ErrnoException | undefined)?.code === "EADDRINUSE");
  // the demo's config is the example's with the sandbox put in: not reloaded from the file
  const daemon = await startDaemon({ config, env, logger, listen: run.listen, serve: run.serve, onRun, watchConfig: false }).catch(async (err: unknown) => {
    if (!inUse(err)) throw err;
    return startDaemon({ config, env, logger, listen: "127.0.0.1:0", serve: run.serve, onRun, watchConfig: false });
  });
  return { daemon, ok: await firstRun };
}
