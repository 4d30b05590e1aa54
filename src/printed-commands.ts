/**
 * The commands gatesync prints for a person to run (plan hints, the apply summary, the status
 * page's "waiting for a person"): each is followed as printed, so it carries what points it at
 * the same place — `--env NAME` with environments, `-c FILE` when gatesync.yaml is not the one in
 * the working directory, `--dir DIR` when the resources were read from a checkout. Without them a
 * command would act on another environment's state, fail to find the config, or accept the
 * config source's spec instead of the checkout's.
 */
import path from "node:path";
import type { Command } from "commander";
import { buildProgram } from "./cli.js";

/**
 * The flags a printed command needs: the environment, the config file unless it is
 * ./gatesync.yaml, and the checkout a command was given with `--dir` (as typed).
 */
export interface Invocation {
  readonly env?: string;
  readonly config?: string;
  readonly dir?: string;
}

/**
 * The CLI's own command tree (cli.ts's buildProgram), built once on first use and never run:
 * which options a printed command takes is read from commander's definitions, so a printed
 * command can carry only what the command accepts. The entry point is imported, not a folder:
 * its declarations load no action (test/cli/startup-modules.test.ts).
 */
let tree: Command | undefined;
const silent = { stdout: () => undefined, drained: () => Promise.resolve(), stderr: () => undefined, reveal: () => undefined, env: {}, isTty: false };

/** The (sub)command a printed command names: `gatesync state resolve X --accept` → `state resolve`. */
function commandNamed(command: string): Command | undefined {
  tree ??= buildProgram(silent);
  let found: Command | undefined;
  for (const word of command.split(" ").slice(1)) {
    const sub = (found ?? tree).commands.find((c) => c.name() === word);
    if (sub === undefined) break;
    found = sub;
  }
  return found;
}

const takes = (command: Command, flag: string): boolean => command.options.some((o) => o.long === flag || o.short === flag);

/** A word as a POSIX shell reads it: quoted unless it is plain (a file name from a repository in a printed command). */
export function shellWord(word: string): string {
  return /^[\w./@:+=-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * The invocation of a config (an environment's effective config names its environment): the
 * config file relative to `cwd` when it lies below it, else absolute; none when it is
 * `cwd`/gatesync.yaml, the default every command reads.
 */
export function invocationOf(config: { readonly file?: string | undefined; readonly environment?: string | undefined }, cwd = process.cwd()): Invocation {
  const relative = config.file === undefined ? undefined : path.relative(cwd, config.file);
  const below = relative !== undefined && relative !== "" && !relative.startsWith("..") && !path.isAbsolute(relative);
  const file = relative === undefined || relative === "gatesync.yaml" ? undefined : below ? relative.split(path.sep).join("/") : config.file;
  return { ...(config.environment === undefined ? {} : { env: config.environment }), ...(file === undefined ? {} : { config: file }) };
}

/** The invocation of a command run on `config`, with the `--dir` it was given. */
export function invocationWith(config: Parameters<typeof invocationOf>[0], dir: string | undefined): Invocation {
  return { ...invocationOf(config), ...(dir === undefined ? {} : { dir }) };
}

/**
 * A command as printed for a person to run, from its words (each quoted as a shell reads it): the
 * one way a hint spells a command, so following it runs exactly what it says.
 */
export function printedCommand(...words: readonly string[]): string {
  return ["gatesync", ...words].map(shellWord).join(" ");
}

/** One command with the flags it lacks appended, of those its definition takes (a command that takes none is left as it is). */
export function commandFor(command: string, inv: Invocation): string {
  const named = commandNamed(command);
  if (named === undefined) return command;
  let out = command;
  if (inv.config !== undefined && takes(named, "-c") && !/ (?:-c|--config)[ =]/.test(command)) out += ` -c ${shellWord(inv.config)}`;
  if (inv.env !== undefined && takes(named, "--env") && !/ --env[ =]/.test(command)) out += ` --env ${inv.env}`;
  // `state resolve` reads the resources (and so takes --dir) only with --accept
  const readsResources = takes(named, "--dir") && (named.name() !== "resolve" || / --accept(?= |$)/.test(command));
  if (inv.dir !== undefined && readsResources && !/ --dir[ =]/.test(command)) out += ` --dir ${shellWord(inv.dir)}`;
  return out;
}

/** A text (a hint) with every command it quotes in backticks completed by commandFor. */
export function withInvocation(text: string, inv: Invocation): string {
  if (inv.env === undefined && inv.config === undefined && inv.dir === undefined) return text;
  return text.replaceAll(/`(gatesync [^`]+)`/g, (_m, command: string) => `\`${commandFor(command, inv)}\``);
}
