/**
 * The launcher answers `--help` and `--version` from the build's record of them
 * (bin/gatesync.js, dist/bundle/answers.json) without loading gatesync: the same text the
 * sources print, for every command, in a pipe and in any terminal at least as wide as the help;
 * a narrower terminal gets help wrapped to it by the bundle; any other question runs the bundle. Real processes, a real terminal (`script`'s pseudo-terminal).
 */
import { execFile } from "node:child_process";
import { cp, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { commandPaths } from "../../scripts/bundle/build-answers.js";
import { buildProgram, helpColumns } from "../../src/cli.js";
import { compiledIsFresh, runCli } from "../helpers/cli.js";
import { projectRoot, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

const run = promisify(execFile);
const launcher = path.join(projectRoot, "bin/gatesync.js");
const env = { PATH: process.env.PATH ?? "" };

interface Answers {
  readonly width: number;
  readonly answers: Record<string, string>;
}
const recorded = async (): Promise<Answers> => JSON.parse(await readFile(path.join(projectRoot, "dist/bundle/answers.json"), "utf8")) as Answers;

/** What `command` prints in a pseudo-terminal `columns` wide (`script` runs it there; its line ends are the terminal's). */
async function inTerminal(columns: number, command: string): Promise<string> {
  const { stdout } = await run("script", ["-qec", `stty cols ${columns}; ${command}`, "/dev/null"], { env, encoding: "utf8" });
  return stdout.replaceAll("\r\n", "\n");
}

describe.skipIf(!compiledIsFresh)("the launcher's answers from the build", { timeout: 120_000 }, () => {
  it("are every command's --help and the --version, as the sources print them, and what the launcher prints for each", async () => {
    const { width, answers } = await recorded();
    expect(width).toBe(helpColumns);
    const expected = [...commandPaths(buildProgram()).map((p) => [...p, "--help"].join(" ")), "--version"].sort();
    expect(Object.keys(answers).sort()).toEqual(expected);
    for (const [asked, text] of Object.entries(answers)) {
      const sources = await runCli(asked.split(" "));
      expect({ asked, code: sources.code, text: sources.stdout }).toEqual({ asked, code: 0, text });
      const printed = await run(process.execPath, [launcher, ...asked.split(" ")], { env, encoding: "utf8" });
      expect({ asked, text: printed.stdout, stderr: printed.stderr }).toEqual({ asked, text, stderr: "" });
    }
    // `-h` and `-V` are the same questions
    expect((await run(process.execPath, [launcher, "state", "list", "-h"], { env })).stdout).toBe(answers["state list --help"]);
    expect((await run(process.execPath, [launcher, "-V"], { env })).stdout).toBe(answers["--version"]);
  });

  it("are printed without loading gatesync; what they do not hold runs the bundle", async () => {
    const { answers } = await recorded();
    const dir = await tempRepo({});
    await cp(path.join(projectRoot, "bin"), path.join(dir, "bin"), { recursive: true });
    await mkdir(path.join(dir, "dist/bundle"), { recursive: true });
    const copied = path.join(dir, "bin/gatesync.js");
    // no bundle beside it: what is printed came from the record alone
    await cp(path.join(projectRoot, "dist/bundle/answers.json"), path.join(dir, "dist/bundle/answers.json"));
    expect((await run(process.execPath, [copied, "--help"], { env })).stdout).toBe(answers["--help"]);
    expect((await run(process.execPath, [copied, "plan", "-h"], { env })).stdout).toBe(answers["plan --help"]);
    // anything else is the bundle's, which is not there
    const other = await run(process.execPath, [copied, "validate"], { env }).catch((err: { code: number; stderr: string }) => err);
    expect("code" in other && other.code).toBe(1);
    expect(other.stderr).toContain("dist/bundle/cli.cjs");
    // a record that is not one (torn, or of another shape) is not read: the bundle answers, and it is not there
    for (const broken of ['{"width": 80, "answers": {"--help": ', "{}", '{"width": 80, "answers": {"--help": 7}}']) {
      await writeFile(path.join(dir, "dist/bundle/answers.json"), broken);
      const fallen = await run(process.execPath, [copied, "--help"], { env }).catch((err: { code: number; stderr: string }) => err);
      expect("code" in fallen && fallen.code).toBe(1);
      expect(fallen.stderr).toContain("dist/bundle/cli.cjs");
    }
    // a question the record does not hold (`help`, commander's command) is the bundle's: the same help
    const bare = await run(process.execPath, [path.join(projectRoot, "bin/gatesync.js"), "help"], { env });
    expect(bare.stdout).toBe(answers["--help"]);
  });

  it("hold in a terminal at least as wide as the help or of no width; a narrower one gets help wrapped to its width", async () => {
    const { answers } = await recorded();
    expect(await inTerminal(120, `node ${launcher} --help`)).toBe(answers["--help"]);
    const narrow = await inTerminal(70, `node ${launcher} --help`);
    expect(narrow).not.toBe(answers["--help"]);
    expect(narrow).toContain("Usage: gatesync [options] [command]");
    expect(Math.max(...narrow.split("\n").map((l) => l.length))).toBeLessThanOrEqual(70);
    // a terminal that reports no width (0 columns) gets the help of a pipe, recorded or the bundle's own (`help`)
    expect(await inTerminal(0, `node ${launcher} --help`)).toBe(answers["--help"]);
    expect(await inTerminal(0, `node ${launcher} help`)).toBe(answers["--help"]);
  });
});
