/**
 * What `gatesync __complete WORD…` answers (the shell scripts of `gatesync completion` call it):
 * the candidates for the last word, read from the commands as commander declares them — their
 * subcommands, options and choices — and, for the values only the repository knows (`--env`
 * names, `--target`/`--exclude` addresses, a `state resolve` resource), from the repository at hand.
 */
import type { Command, Option } from "commander";
import { kindNames } from "../../../kinds/registry.js";

/** The repository's own words, read on demand: only the one a candidate list needs is read. */
export interface RepositoryWords {
  environments(configFile: string | undefined): Promise<string[]>;
  addresses(configFile: string | undefined): Promise<string[]>;
}

/** Where the words before the cursor leave the command line: its command, the option awaiting a value, the config named. */
interface Position {
  readonly command: Command;
  readonly awaiting: Option | undefined;
  readonly configFile: string | undefined;
}

const findOption = (command: Command, word: string): Option | undefined => command.options.find((o) => o.long === word || o.short === word);
const takesValue = (option: Option): boolean => option.required || option.optional;
const visible = (command: Command): Command[] => command.commands.filter((c) => !(c as unknown as { _hidden?: boolean })._hidden);

/** Walks the words before the cursor down the command tree, skipping each option's value. */
function positionOf(program: Command, before: readonly string[]): Position {
  let command = program;
  let configFile: string | undefined;
  for (let i = 0; i < before.length; i++) {
    const word = before[i]!;
    if (word.startsWith("-")) {
      const option = findOption(command, word);
      if (option === undefined || !takesValue(option)) continue;
      if (i === before.length - 1) return { command, awaiting: option, configFile };
      if (option.long === "--config") configFile = before[i + 1];
      i++;
      continue;
    }
    const sub = visible(command).find((c) => c.name() === word);
    if (sub !== undefined) command = sub;
  }
  return { command, awaiting: undefined, configFile };
}

/** The values an option takes: its declared choices, or what the repository holds; none for a file (the shell completes those). */
async function valuesOf(option: Option, configFile: string | undefined, repository: RepositoryWords): Promise<string[]> {
  if (option.argChoices !== undefined) return option.argChoices;
  if (option.long === "--env") return repository.environments(configFile);
  if (option.long === "--target" || option.long === "--exclude") return repository.addresses(configFile);
  if (option.long === "--kind") return [...kindNames];
  return [];
}

/** Arguments that name a resource (`state resolve [resources...]`, `state adopt <resource>`). */
const namesResources = (command: Command): boolean => command.registeredArguments.some((a) => a.name() === "resources" || a.name() === "resource");

/** Arguments that name an environment (`promote <env>`, `rollback <env>`). */
const namesEnvironment = (command: Command): boolean => command.registeredArguments.some((a) => a.name() === "env");

async function wordsAt(position: Position, current: string, repository: RepositoryWords): Promise<string[]> {
  const { command, awaiting, configFile } = position;
  if (awaiting !== undefined) return valuesOf(awaiting, configFile, repository);
  if (current.startsWith("-")) {
    const options = command.options.filter((o) => !o.hidden).flatMap((o) => (o.long === undefined ? [] : [o.long]));
    return [...options, "--help"];
  }
  const subcommands = visible(command).map((c) => c.name());
  const choices = command.registeredArguments[0]?.argChoices ?? [];
  const resources = namesResources(command) ? await repository.addresses(configFile) : [];
  const environments = namesEnvironment(command) ? await repository.environments(configFile) : [];
  return [...subcommands, ...choices, ...resources, ...environments];
}

// eslint-disable-next-line no-control-regex -- finding them is the point
const hasControl = (w: string): boolean => /[\u0000-\u001f\u007f-\u009f]/.test(w);

/** The candidates for the last of `words` (the words after `gatesync`, the last one being completed, possibly empty). */
export async function completionCandidates(program: Command, words: readonly string[], repository: RepositoryWords): Promise<string[]> {
  const current = words.at(-1) ?? "";
  const all = await wordsAt(positionOf(program, words.slice(0, -1)), current, repository);
  // a word with a control in it (a newline would be two candidates) is no name a command takes
  return [...new Set(all.filter((w) => w.startsWith(current) && !hasControl(w)))].sort();
}
