/**
 * `gatesync completion bash|zsh|fish` prints a completion script; the script calls back the
 * hidden `gatesync __complete WORD…` (answered in cli.ts before commander parses anything: its
 * words are a command line's, options included).
 */
import { Argument } from "commander";
import type { Command } from "commander";
import type { CliIo } from "../../common/cli-io.js";
import { examplesText } from "../../common/help-examples.js";

/** The word `gatesync __complete` is called with. */
export const completeCommand = "__complete";

export function addCompletionCommand(program: Command, io: CliIo): void {
  program
    .command("completion")
    .description("print the shell completion script: commands, options, --env names, --target addresses and kinds of the repository at hand")
    .addArgument(new Argument("<shell>", "bash, zsh or fish").choices(["bash", "zsh", "fish"]))
    .addHelpText("after", examplesText("completion"))
    .action(async (shell: "bash" | "zsh" | "fish") => {
      const { completionScripts } = await import("./scripts.js");
      io.stdout(completionScripts[shell]);
    });
}

/** Answers `gatesync __complete WORD…`: one candidate a line; nothing, never an error, when anything fails. */
export async function answerCompletion(program: Command, words: readonly string[], io: CliIo): Promise<void> {
  try {
    const { completionCandidates } = await import("./words.js");
    const { repositoryWords } = await import("./repository-words.js");
    const candidates = await completionCandidates(program, words, repositoryWords);
    io.stdout(candidates.map((c) => `${c}\n`).join(""));
  } catch {
    // a Tab prints nothing rather than an error in the middle of a command line
  }
}
