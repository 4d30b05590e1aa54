/**
 * `gatesync completion zsh`, as a zsh user meets it: a real interactive zsh on a pseudo-terminal
 * (test/helpers/zsh-tab.zsh), compinit run, the script installed either way docs/user/commands.md
 * says — `source <(gatesync completion zsh)`, or saved as `_gatesync` in a directory of
 * `$fpath` — a command line typed and Tab pressed. What zsh offers is read from its completion
 * system, `gatesync` on the PATH (a launcher of this checkout's CLI), in a repository
 * `gatesync init` made. zsh is installed from Debian's packages by .ci/run; where it is absent
 * the test says so and is skipped.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliArgs, gatesyncCommands, runCli } from "../helpers/cli.js";
import { projectRoot, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

const run = promisify(execFile);
afterAll(removeTempRepos);

let zsh = false;
let repo = "";
let bin = "";
let functions = "";
beforeAll(async () => {
  zsh = (await run("sh", ["-c", "command -v zsh"]).catch(() => undefined)) !== undefined;
  repo = await tempRepo();
  expect((await runCli(["init", repo])).code).toBe(0);
  bin = await tempRepo();
  const launcher = path.join(bin, "gatesync");
  await writeFile(launcher, `#!/bin/sh\nexec ${[process.execPath, ...cliArgs()].map((a) => `'${a}'`).join(" ")} "$@"\n`);
  await chmod(launcher, 0o755);
  // the second way to install it: saved as _gatesync in a directory of $fpath
  functions = path.join(bin, "zsh-functions");
  await mkdir(functions);
  await writeFile(path.join(functions, "_gatesync"), (await runCli(["completion", "zsh"])).stdout);
});

const installs = {
  sourced: "autoload -Uz compinit && compinit -u -D && source <(gatesync completion zsh)",
  fpath: () => `fpath=(${functions} $fpath) && autoload -Uz compinit && compinit -u -D`,
};

/** What zsh offers at a Tab after `line` (the cursor at its end), the script installed as `install` says. */
async function tab(line: string, install: string = installs.sourced, cwd = repo): Promise<string[]> {
  const helper = path.join(projectRoot, "test/helpers/zsh-tab.zsh");
  const r = await run("zsh", ["-f", helper, install, line], { cwd, timeout: 30_000, env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ""}` } });
  return r.stdout.split("\n").filter((l) => l !== "");
}

/** The words `gatesync` gets when, in a real zsh, `line` is typed, Tab pressed, then Enter (test/helpers/zsh-tab-enter.zsh). */
async function tabEnter(line: string, cwd: string): Promise<string[]> {
  const helper = path.join(projectRoot, "test/helpers/zsh-tab-enter.zsh");
  const r = await run("zsh", ["-f", helper, installs.sourced, line], {
    cwd,
    timeout: 30_000,
    env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ""}` },
  });
  return r.stdout.split("\n").filter((l) => l !== "");
}

describe("gatesync completion zsh, in a real zsh", () => {
  it("completes commands, subcommands, options and their choices, sourced after compinit", async (ctx) => {
    if (!zsh) return ctx.skip();
    expect(await tab("gatesync ")).toEqual(gatesyncCommands);
    expect(await tab("gatesync state re")).toEqual(["resolve"]);
    expect(await tab("gatesync plan --format ")).toEqual(["json", "markdown", "text"]);
    expect(await tab("gatesync completion ")).toEqual(["bash", "fish", "zsh"]);
    // an option's value is skipped on the way: `plan` stays the command
    expect(await tab("gatesync plan --out plan.json --det")).toEqual(["--detailed-exitcode"]);
  });

  it("completes --target and state resolve with the repository's resources, and file names where it has nothing to offer", async (ctx) => {
    if (!zsh) return ctx.skip();
    expect(await tab("gatesync apply --exclude Api")).toEqual(["ApiDefinition/petstore", "ApiProduct/storefront"]);
    expect(await tab("gatesync state resolve Org")).toEqual(["OrgKey/acme"]);
    expect(await tab("gatesync plan --config gatesync.y")).toEqual(["gatesync.yaml"]);
  });

  it("works saved as _gatesync in a directory of $fpath (compinit finds it by its #compdef line)", async (ctx) => {
    if (!zsh) return ctx.skip();
    expect(await tab("gatesync pl", installs.fpath())).toEqual(["plan"]);
    expect(await tab("gatesync state resolve Org", installs.fpath())).toEqual(["OrgKey/acme"]);
  });

  it("hands a resource's name to zsh as text: a name holding $(…), globs or quotes runs nothing, and is offered quoted", async (ctx) => {
    if (!zsh) return ctx.skip();
    const hostile = await tempRepo({
      "gatesync.yaml": await readFile(path.join(repo, "gatesync.yaml"), "utf8"),
      "config/k.yaml": 'kind: OrgKey\nmetadata:\n  name: "a$(touch pwned)`touch pwned2`*\'"\nspec: {}\n',
    });
    // offered as zsh inserts it on the command line: every special character quoted
    expect(await tab("gatesync plan --target Org", installs.sourced, hostile)).toEqual(["OrgKey/a\\$\\(touch\\ pwned\\)\\`touch\\ pwned2\\`\\*\\'"]);
    expect(existsSync(path.join(hostile, "pwned"))).toBe(false);
    expect(existsSync(path.join(hostile, "pwned2"))).toBe(false);
  });

  it("Tab then Enter on a name holding $(…), backticks, `;`, globs or quotes runs nothing: gatesync gets the name as it is", async (ctx) => {
    if (!zsh) return ctx.skip();
    const name = "a$(touch pwned)`touch pwned2`;touch pwned3 *'\"";
    const hostile = await tempRepo({
      "gatesync.yaml": await readFile(path.join(repo, "gatesync.yaml"), "utf8"),
      "config/k.yaml": `kind: OrgKey\nmetadata:\n  name: ${JSON.stringify(name)}\nspec: {}\n`,
    });
    expect(await tabEnter("gatesync plan --target Org", hostile)).toEqual(["plan", "--target", `OrgKey/${name}`]);
    for (const f of ["pwned", "pwned2", "pwned3"]) expect(existsSync(path.join(hostile, f)), f).toBe(false);
  });
});
