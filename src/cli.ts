/**
 * The `gatesync` command line. Each command sets process.exitCode (never process.exit) so
 * that logs flush; exit codes are listed in the README.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { Command, InvalidArgumentError, Option } from "commander";
import { renderValidation } from "./cli/report.js";
import type { ReportFormat } from "./cli/report.js";
import { addApplyCommand } from "./cli/apply-command.js";
import { addDemoCommand } from "./cli/demo-command.js";
import { addPlanCommand } from "./cli/plan-command.js";
import { addRunCommand } from "./cli/run-command.js";
import { addSandboxCommand } from "./cli/sandbox-command.js";
import { addStateCommand } from "./cli/state-command.js";
import { validateDirectory } from "./cli/validate-command.js";
import { loadConfig } from "./config/config.js";
import type { GatesyncConfig } from "./config/config.js";
import { GatesyncError, ValidationFailed } from "./errors.js";
import { formatDiagnostic } from "./cli/report.js";
import { scrubText } from "./secrets/redactor.js";

export const ExitCode = { OK: 0, ERROR: 1, CHANGES: 2 } as const;

interface Io {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly isTty: boolean;
}

/** Everything a command prints passes through the redaction layer. */
const defaultIo: Io = {
  stdout: (t) => process.stdout.write(scrubText(t)),
  stderr: (t) => process.stderr.write(scrubText(t)),
  env: process.env,
  isTty: process.stdout.isTTY === true,
};

function formatOption<T extends string>(choices: readonly T[], fallback: T): Option {
  return new Option("--format <format>", `output format: ${choices.join(", ")}`).choices(choices).default(fallback);
}

/** The version in package.json, one directory above this module in src/ and in dist/ alike. */
function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version?: unknown };
  return typeof pkg.version === "string" ? pkg.version : "unknown";
}

async function configFrom(file: string | undefined): Promise<GatesyncConfig | undefined> {
  if (file !== undefined) return loadConfig(file);
  return existsSync("gatesync.yaml") ? loadConfig("gatesync.yaml") : undefined;
}

export function buildProgram(io: Io = defaultIo): Command {
  const program = new Command("gatesync")
    .description("GitOps sync for an API gateway and its developer portal")
    .version(packageVersion(), "-V, --version", "print the version")
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr });

  program
    .command("validate")
    .description("validate a directory of resources (exit 0 valid, 1 invalid)")
    .argument("[dir]", "resource directory (default: the config's source directory)")
    .option("-c, --config <file>", "gatesync.yaml (default: ./gatesync.yaml when present)")
    .addOption(formatOption<ReportFormat>(["text", "json"], "text"))
    .action(async (dir: string | undefined, opts: { config?: string; format: ReportFormat }) => {
      const config = await configFrom(opts.config);
      const target = dir ?? (config?.source.type === "directory" ? config.source.directory : undefined);
      if (target === undefined) throw new InvalidArgumentError("give a directory, or a config whose source is a directory");
      const result = await validateDirectory(path.resolve(target), config, io.env);
      io.stdout(
        renderValidation(
          { valid: result.valid, files: result.files, resources: result.resources.length, diagnostics: result.diagnostics },
          opts.format,
          io.isTty && io.env.NO_COLOR === undefined,
        ),
      );
      process.exitCode = result.valid ? ExitCode.OK : ExitCode.ERROR;
    });

  addPlanCommand(program, io);
  addApplyCommand(program, io);
  addStateCommand(program, io);
  addRunCommand(program, io);
  addSandboxCommand(program, io);
  addDemoCommand(program, io);

  return program;
}

/** Runs the CLI; errors become messages and exit code 1, never stack traces for users. */
export async function main(argv: readonly string[], io: Io = defaultIo): Promise<void> {
  const program = buildProgram(io);
  try {
    await program.parseAsync([...argv]);
  } catch (err) {
    process.exitCode = ExitCode.ERROR;
    if (err instanceof Error && "code" in err && typeof err.code === "string" && err.code.startsWith("commander.")) {
      const code = (err as { exitCode?: number }).exitCode;
      // help and version are not errors
      if (err.code === "commander.helpDisplayed" || err.code === "commander.version" || err.code === "commander.help") process.exitCode = code ?? 0;
      return;
    }
    if (err instanceof ValidationFailed) {
      for (const d of err.diagnostics) io.stderr(`${formatDiagnostic(d)}\n`);
      return;
    }
    if (err instanceof GatesyncError) {
      io.stderr(`${formatDiagnostic(err.toDiagnostic())}\n`);
      return;
    }
    io.stderr(`error[INTERNAL]: ${err instanceof Error ? err.message : String(err)}\n`);
    if (io.env.GATESYNC_DEBUG !== undefined && err instanceof Error) io.stderr(`${err.stack ?? ""}\n`);
  }
}
