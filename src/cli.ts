/**
 * The `gatesync` command line. Each command sets process.exitCode (never process.exit) so
 * that logs flush; exit codes are listed in docs/user/commands.md.
 */
import { Command, InvalidArgumentError } from "commander";
import { addApplyCommand } from "./cli/commands/apply/command.js";
import { addCompletionCommand, answerCompletion, completeCommand } from "./cli/commands/completion/command.js";
import { addDemoCommand } from "./cli/commands/demo/command.js";
import { addInitCommand } from "./cli/commands/init/command.js";
import { addImportCommand } from "./cli/commands/import/command.js";
import { addPlanCommand } from "./cli/commands/plan/command.js";
import { addRunCommand } from "./cli/commands/run/command.js";
import { addSandboxCommand } from "./cli/commands/sandbox/command.js";
import { addStateCommand } from "./cli/commands/state/command.js";
import { addHistoryCommand } from "./cli/commands/history/command.js";
import { addPromoteCommand } from "./cli/commands/promote/command.js";
import { addRollbackCommand } from "./cli/commands/rollback/command.js";
import { addFreezeCommand } from "./cli/commands/freeze/command.js";
import { addUnfreezeCommand } from "./cli/commands/unfreeze/command.js";
import { addOwnershipCommand } from "./cli/commands/ownership/command.js";
import type { CliIo } from "./cli/common/cli-io.js";
import { addValidateCommand } from "./cli/commands/validate/command.js";
import { GatesyncError, ValidationFailed } from "./errors.js";
import { packageVersion } from "./package-root.js";
import { formatDiagnostic } from "./errors.js";
import { scrubText } from "./secrets/redaction.js";
import { terminalText } from "./text/bounded-text.js";
import { tracingOn, withSpan } from "./telemetry/spans.js";
import { startTracing } from "./telemetry/tracing.js";
import { fileTraces } from "./cli/common/telemetry-file.js";

export const ExitCode = { OK: 0, ERROR: 1, CHANGES: 2 } as const;

/** Resolves at once unless `stream`'s queue is full, else when it drains (or can no longer be written). */
export async function drained(stream: NodeJS.WriteStream): Promise<void> {
  if (!stream.writableNeedDrain || stream.destroyed) return;
  await new Promise<void>((resolve) => {
    const done = (): void => {
      stream.off("drain", done).off("close", done).off("error", done);
      resolve();
    };
    stream.on("drain", done).on("close", done).on("error", done);
  });
}

/**
 * Everything a command prints passes through the redaction layer, and reaches the terminal with
 * no control but gatesync's own colours (the printers strip outside text themselves: this is
 * the last gate, for a printer that forgets).
 */
const defaultIo: CliIo = {
  stdout: (t) => process.stdout.write(terminalText(scrubText(t))),
  drained: async () => drained(process.stdout),
  stderr: (t) => process.stderr.write(terminalText(scrubText(t))),
  reveal: (t) => process.stdout.write(t),
  env: process.env,
  isTty: process.stdout.isTTY === true,
};

/**
 * Help wraps to this many columns, or to a narrower terminal's: every wider terminal and every
 * pipe gets the same text, which the launcher answers `--help` with from the build's record of it
 * (bin/gatesync.js, scripts/bundle/build-answers.ts) without loading gatesync.
 */
export const helpColumns = 80;
// a terminal that reports no width (0 columns: some containers' and CI's) is taken as a pipe
const helpWidth = (stream: NodeJS.WriteStream) => (): number => (stream.isTTY && stream.columns > 0 ? Math.min(stream.columns, helpColumns) : helpColumns);

export function buildProgram(io: CliIo = defaultIo): Command {
  const program = new Command("gatesync")
    .description("GitOps sync for an API gateway and its developer portal")
    .version(packageVersion(), "-V, --version", "print the version")
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr, getOutHelpWidth: helpWidth(process.stdout), getErrHelpWidth: helpWidth(process.stderr) });

  addValidateCommand(program, io);
  addPlanCommand(program, io);
  addApplyCommand(program, io);
  addStateCommand(program, io);
  addHistoryCommand(program, io);
  addPromoteCommand(program, io);
  addRollbackCommand(program, io);
  addFreezeCommand(program, io);
  addUnfreezeCommand(program, io);
  addOwnershipCommand(program, io);
  addRunCommand(program, io);
  addSandboxCommand(program, io);
  addDemoCommand(program, io);
  addInitCommand(program, io);
  addImportCommand(program, io);
  addCompletionCommand(program, io);

  return program;
}

/**
 * `gatesync state list | head`: the reader closes the pipe early. Writes then fail with EPIPE,
 * which would crash with a stack; the output nobody reads is dropped instead, as Unix tools do.
 */
const guarded = new WeakSet<NodeJS.WriteStream>();
export function quietOnClosedPipe(stream: NodeJS.WriteStream): void {
  if (guarded.has(stream)) return;
  guarded.add(stream);
  stream.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE" || err.code === "ERR_STREAM_DESTROYED") {
      stream.destroy();
      return;
    }
    throw err;
  });
}

/** The subcommand `argv` runs (`apply`, `plan` …), when it names one. */
function commandOf(program: Command, argv: readonly string[]): string | undefined {
  const names = new Set(program.commands.map((c) => c.name()));
  return argv.slice(2).find((a) => names.has(a));
}

/** What an invalid repository cost: the count, and that nothing was done — said, not left to be guessed. */
const refused: Readonly<Record<string, string>> = { apply: "nothing applied", plan: "no plan made", state: "the state is unchanged" };
function refusalLine(err: ValidationFailed, command: string | undefined): string {
  const errors = err.diagnostics.filter((d) => d.severity === "error").length;
  const warnings = err.diagnostics.length - errors;
  const outcome = command === undefined ? undefined : refused[command];
  return `invalid: ${errors} error(s), ${warnings} warning(s)${outcome === undefined ? "" : `: ${outcome}`}`;
}

/** Runs the CLI; errors become messages and exit code 1, never stack traces for users. */
export async function main(argv: readonly string[], io: CliIo = defaultIo): Promise<void> {
  if (io === defaultIo) quietOnClosedPipe(process.stdout);
  const program = buildProgram(io);
  if (argv[2] === completeCommand) {
    await answerCompletion(program, argv.slice(3), io);
    return;
  }
  const command = commandOf(program, argv);
  // the daemon's tracing is its own (cli/daemon-tracing.ts): its settings follow a reload
  const tracing = traced.has(command ?? "")
    ? await startTracing(io.env, packageVersion(), (m) => io.stderr(`warning: ${m}\n`), await fileTraces(argv, io.env))
    : undefined;
  try {
    const work = async (): Promise<unknown> => program.parseAsync([...argv]);
    await (tracing === undefined ? work() : inCommandSpan(command ?? "", argv, io.env, work));
  } catch (err) {
    reportFailure(err, program, argv, io);
  } finally {
    await tracing?.shutdown();
  }
}

/** The commands a trace covers as one root span (`gatesync.plan` …): the daemon's runs have their own. */
const traced = new Set(["validate", "plan", "apply", "state"]);

/** The command in its root span: joins a CI job's TRACEPARENT, says the environment and how it ended. */
async function inCommandSpan(command: string, argv: readonly string[], env: CliIo["env"], work: () => Promise<unknown>): Promise<void> {
  if (!tracingOn()) {
    await work();
    return;
  }
  const envFlag = argv.indexOf("--env");
  const attributes = { "gatesync.command": command, "gatesync.environment": envFlag === -1 ? undefined : argv[envFlag + 1] };
  const parent = env.TRACEPARENT === undefined ? {} : { traceparent: env.TRACEPARENT };
  // the root: the validation, the plan and the apply note the revision and their counts on it (noteOnRun)
  await withSpan(`gatesync.${command}`, { attributes, ...parent, root: true }, async (span) => {
    await work();
    const code = Number(process.exitCode ?? 0);
    span.set({ "gatesync.exit_code": code, "gatesync.outcome": code === 0 ? "ok" : code === 2 ? "changes" : code === 3 ? "blocked" : "failed" });
  });
}

/** A failed command: its message (never a stack for users) and exit code 1. */
function reportFailure(err: unknown, program: Command, argv: readonly string[], io: CliIo): void {
  process.exitCode = ExitCode.ERROR;
  if (err instanceof InvalidArgumentError) {
    // thrown by a command's own code (not by commander's parsing, which printed it already)
    io.stderr(`error[USAGE] ${err.message}\n`);
    return;
  }
  if (err instanceof Error && "code" in err && typeof err.code === "string" && err.code.startsWith("commander.")) {
    const code = (err as { exitCode?: number }).exitCode;
    // help and version are not errors
    if (err.code === "commander.helpDisplayed" || err.code === "commander.version" || err.code === "commander.help") process.exitCode = code ?? 0;
    return;
  }
  if (err instanceof ValidationFailed) {
    for (const d of err.diagnostics) io.stderr(`${formatDiagnostic(d)}\n`);
    io.stderr(`${refusalLine(err, commandOf(program, argv))}\n`);
    return;
  }
  if (err instanceof GatesyncError) {
    io.stderr(`${formatDiagnostic(err.toDiagnostic())}\n`);
    return;
  }
  io.stderr(`error[INTERNAL]: ${err instanceof Error ? err.message : String(err)}\n`);
  if (io.env.GATESYNC_DEBUG !== undefined && err instanceof Error) io.stderr(`${err.stack ?? ""}\n`);
}
