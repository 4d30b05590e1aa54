/**
 * The last step of the build: what the launcher answers without loading gatesync
 * (bin/gatesync.js) — each command's `--help` and the `--version` — recorded in
 * dist/bundle/answers.json as the bundle itself prints them, each from a process of its own
 * started as users start it, into a pipe (help wraps to `helpColumns` there, as in every terminal
 * at least that wide). An answer that did not exit 0 with nothing on stderr is left out: the
 * launcher then runs the bundle for it.
 */
import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import type { Command } from "commander";
import type * as Cli from "../../src/cli.js";

const run = promisify(execFile);

/** Every command's path below the program (`["state", "list"]` …), the program's own first. */
export function commandPaths(command: Command, above: readonly string[] = []): string[][] {
  return [[...above], ...command.commands.flatMap((c) => commandPaths(c, [...above, c.name()]))];
}

/** What `args` prints, when it prints it on stdout alone and exits 0. */
async function printed(launcher: string, args: readonly string[]): Promise<string | undefined> {
  // nothing of the builder's environment: an answer must not depend on it
  const answer = await run(process.execPath, [launcher, ...args], { env: { PATH: process.env.PATH ?? "" }, encoding: "utf8" }).catch(() => undefined);
  return answer === undefined || answer.stderr !== "" ? undefined : answer.stdout;
}

export async function writeBuildAnswers(root: string, outdir: string): Promise<void> {
  const { buildProgram, helpColumns } = (await import(path.join(root, "dist/cli.js"))) as typeof Cli;
  const launcher = path.join(root, "bin/gatesync.js");
  const asked = [...commandPaths(buildProgram()).map((p) => [...p, "--help"]), ["--version"]];
  const answers: Record<string, string> = {};
  // a few at a time: each is a process of ~100 ms
  for (let i = 0; i < asked.length; i += 4) {
    await Promise.all(
      asked.slice(i, i + 4).map(async (args) => {
        const text = await printed(launcher, args);
        if (text !== undefined) answers[args.join(" ")] = text;
      }),
    );
  }
  const sorted = Object.fromEntries(Object.entries(answers).sort(([a], [b]) => (a < b ? -1 : 1)));
  await writeFile(path.join(outdir, "answers.json"), JSON.stringify({ width: helpColumns, answers: sorted }));
}
