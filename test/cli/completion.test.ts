/**
 * `gatesync completion bash|zsh|fish`, as a shell meets it: the bash script sourced in a real
 * bash, its function called with COMP_WORDS/COMP_CWORD as bash sets them at a Tab, `gatesync`
 * on the PATH (a launcher of this checkout's CLI), in a repository `gatesync init` made. The fish
 * script is checked by fish's own parser (`fish --no-execute`) and completes through `complete -C`;
 * the zsh script completes in a real zsh at a Tab (completion-zsh.test.ts). Both shells are
 * installed from Debian's packages by .ci/run; where they are absent the check says so and is skipped.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliArgs, gatesyncCommands, runCli, spawnCli } from "../helpers/cli.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

const run = promisify(execFile);
afterAll(removeTempRepos);

let repo = "";
let bin = "";
beforeAll(async () => {
  repo = await tempRepo();
  expect((await runCli(["init", repo])).code).toBe(0);
  bin = await tempRepo();
  const launcher = path.join(bin, "gatesync");
  await writeFile(launcher, `#!/bin/sh\nexec ${[process.execPath, ...cliArgs()].map((a) => `'${a}'`).join(" ")} "$@"\n`);
  await chmod(launcher, 0o755);
});

/** The bash script sourced in a real bash; `_gatesync_complete` called as bash calls it at a Tab after `line` (the cursor at its end). */
async function tab(line: string, cwd = repo): Promise<{ candidates: string[]; complete: string; stderr: string }> {
  const words = line.split(" ");
  const script = [
    "source <(gatesync completion bash)",
    "complete -p gatesync",
    `COMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")})`,
    `COMP_CWORD=${words.length - 1}`,
    "_gatesync_complete",
    'printf "%s\\n" "${COMPREPLY[@]}"',
  ].join("\n");
  const r = await run("bash", ["-c", script], { cwd, env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ""}` } });
  const [complete = "", ...candidates] = r.stdout.split("\n").filter((l) => l !== "");
  return { candidates, complete, stderr: r.stderr };
}

describe("gatesync completion bash, in a real bash", () => {
  it("registers itself for gatesync, with file names when it has nothing to offer", async () => {
    expect((await tab("gatesync ")).complete).toBe("complete -o default -F _gatesync_complete gatesync");
  });

  it("completes commands, subcommands, options and their choices", async () => {
    expect((await tab("gatesync ")).candidates).toEqual(gatesyncCommands);
    expect((await tab("gatesync st")).candidates).toEqual(["state"]);
    expect((await tab("gatesync state re")).candidates).toEqual(["resolve"]);
    expect((await tab("gatesync plan --fo")).candidates).toEqual(["--format"]);
    expect((await tab("gatesync plan --format ")).candidates).toEqual(["json", "markdown", "text"]);
    expect((await tab("gatesync validate --format g")).candidates).toEqual(["github", "gitlab"]);
    expect((await tab("gatesync apply --kind Or")).candidates).toEqual(["OrgKey"]);
    expect((await tab("gatesync completion ")).candidates).toEqual(["bash", "fish", "zsh"]);
    // an option's value is skipped on the way: `plan` stays the command
    expect((await tab("gatesync plan --out plan.json --det")).candidates).toEqual(["--detailed-exitcode"]);
  });

  it("completes --target and state resolve with the repository's resources, and --env with its environments", async () => {
    expect((await tab("gatesync plan --target ")).candidates).toEqual([
      "ApiDefinition/petstore",
      "ApiProduct/storefront",
      "ClientType/web-apps",
      "DashboardWebhook/alerts-to-chat",
      "LlmSettings/support-assistant",
      "OAuthClient/petstore-mobile",
      "OrgKey/acme",
      "PortalWebhook/user-lifecycle",
    ]);
    expect((await tab("gatesync apply --exclude Api")).candidates).toEqual(["ApiDefinition/petstore", "ApiProduct/storefront"]);
    expect((await tab("gatesync state resolve Org")).candidates).toEqual(["OrgKey/acme"]);
    expect((await tab("gatesync plan --env ")).candidates).toEqual([]); // no environments: none to name
    const config = await readFile(path.join(repo, "gatesync.yaml"), "utf8");
    const envs = "environments:\n  staging: { orphans: report }\n  production: { orphans: report }\n";
    await writeFile(path.join(repo, "envs.yaml"), `${config}${envs}`);
    // -c names the config the values come from
    expect((await tab("gatesync plan -c envs.yaml --env ")).candidates).toEqual(["production", "staging"]);
    expect((await tab("gatesync plan --config envs.yaml --env st")).candidates).toEqual(["staging"]);
    expect((await tab("gatesync promote -c envs.yaml ")).candidates).toEqual(["production", "staging"]);
    expect((await tab("gatesync rollback -c envs.yaml pro")).candidates).toEqual(["production"]);
  });

  it("offers nothing, and says nothing, where there is no repository or it is broken", async () => {
    const empty = await tempRepo();
    const none = await tab("gatesync plan --target ", empty);
    expect(none).toMatchObject({ candidates: [], stderr: "" });
    const broken = await tempRepo({ "gatesync.yaml": "source: [unclosed\n" });
    expect(await tab("gatesync state resolve ", broken)).toMatchObject({ candidates: [], stderr: "" });
    // called directly, too: exit 0 and no output on either stream
    const direct = await spawnCli(["__complete", "plan", "--env", ""], { cwd: broken });
    expect(direct).toEqual({ code: 0, stdout: "", stderr: "" });
  });

  it("hands a resource's name to bash quoted: Tab then Enter on a name holding $(…), backticks, `;`, globs or quotes runs nothing", async () => {
    const name = "a$(touch pwned)`touch pwned2`;touch pwned3 *'\"";
    const hostile = await tempRepo({
      "gatesync.yaml": await readFile(path.join(repo, "gatesync.yaml"), "utf8"),
      "config/k.yaml": `kind: OrgKey\nmetadata:\n  name: ${JSON.stringify(name)}\nspec: {}\n`,
      "config/n.yaml": 'kind: OrgKey\nmetadata:\n  name: "b\\ntouch pwned4"\nspec: {}\n',
    });
    const r = await tab("gatesync plan --target Org", hostile);
    expect(r.candidates).toHaveLength(1); // the name with a newline is no candidate
    // what bash does with one candidate at a Tab: the word replaced by it; then Enter runs the line
    const line = `gatesync plan --target ${r.candidates[0]!} `;
    const ran = await run("bash", ["-c", `gatesync() { printf '%s\\n' "$@"; }\neval ${JSON.stringify(line).replace(/\$/g, "\\$").replace(/`/g, "\\`")}`], {
      cwd: hostile,
    });
    expect(ran.stdout.split("\n").filter((l) => l !== "")).toEqual(["plan", "--target", `OrgKey/${name}`]);
    for (const f of ["pwned", "pwned2", "pwned3", "pwned4"]) expect(existsSync(path.join(hostile, f)), f).toBe(false);
  });
});

/** A shell's own parser over its script, when the shell is installed. */
async function parses(shell: string, args: string[]): Promise<{ skipped: string } | { code: number; stderr: string }> {
  const which = await run("sh", ["-c", `command -v ${shell}`]).catch(() => undefined);
  if (which === undefined) return { skipped: `${shell} is not installed (.ci/run installs it from Debian's packages): its script's syntax check is skipped` };
  const script = (await runCli(["completion", shell])).stdout;
  const file = path.join(await tempRepo(), `gatesync.${shell}`);
  await writeFile(file, script);
  try {
    await run(shell, [...args, file]);
    return { code: 0, stderr: "" };
  } catch (err) {
    const e = err as { code?: number; stderr?: string };
    return { code: e.code ?? -1, stderr: e.stderr ?? "" };
  }
}

describe("gatesync completion fish", () => {
  for (const [shell, args] of [["fish", ["--no-execute"]]] as const) {
    it(`the ${shell} script parses in ${shell}`, async (ctx) => {
      const r = await parses(shell, [...args]);
      if ("skipped" in r) {
        console.warn(r.skipped);
        ctx.skip();
        return;
      }
      expect(r).toEqual({ code: 0, stderr: "" });
    });
  }

  it("the fish script completes in fish (complete -C, as at a Tab), file names where it has nothing to offer", async (ctx) => {
    if ((await run("sh", ["-c", "command -v fish"]).catch(() => undefined)) === undefined) {
      console.warn("fish is not installed (.ci/run installs it from Debian's packages): its completion check is skipped");
      ctx.skip();
      return;
    }
    const asks = ["gatesync plan --format ", "gatesync state resolve Org", "gatesync pl", "gatesync plan --config gatesync.y"];
    const script = ["gatesync completion fish | source", ...asks.flatMap((a) => [`complete -C '${a}'`, "echo =="])].join("\n");
    const r = await run("fish", ["-c", script], { cwd: repo, env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ""}` } });
    expect(r.stderr).toBe("");
    expect(r.stdout.split("==\n").map((block) => block.split("\n").filter((l) => l !== ""))).toEqual([
      ["json", "markdown", "text"],
      ["OrgKey/acme"],
      ["plan"],
      ["gatesync.yaml"],
      [],
    ]);
  });

  it("hands a resource's name to fish as one candidate: Tab then Enter on a name holding $(…), backticks, `;`, globs or quotes runs nothing", async (ctx) => {
    if ((await run("sh", ["-c", "command -v fish"]).catch(() => undefined)) === undefined) {
      console.warn("fish is not installed (.ci/run installs it from Debian's packages): its completion check is skipped");
      ctx.skip();
      return;
    }
    const name = "a$(touch pwned)`touch pwned2`;touch pwned3 *'\"";
    const hostile = await tempRepo({
      "gatesync.yaml": await readFile(path.join(repo, "gatesync.yaml"), "utf8"),
      "config/k.yaml": `kind: OrgKey\nmetadata:\n  name: ${JSON.stringify(name)}\nspec: {}\n`,
    });
    // what fish does with one candidate at a Tab: the token replaced by it, escaped as `string escape`
    // escapes (fish's insertion); then Enter runs the line, here `gatesync` a function printing its arguments
    const script = [
      "gatesync completion fish | source",
      "set -l candidates (complete -C 'gatesync plan --target Org')",
      "printf 'candidate:%s\\n' $candidates",
      "function gatesync; printf 'arg:%s\\n' $argv; end",
      'eval "gatesync plan --target "(string escape -- $candidates[1])',
    ].join("\n");
    const r = await run("fish", ["-c", script], { cwd: hostile, env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ""}` } });
    const lines = r.stdout.split("\n").filter((l) => l !== "");
    expect(lines.filter((l) => l.startsWith("candidate:"))).toEqual([`candidate:OrgKey/${name}`]);
    expect(lines.filter((l) => l.startsWith("arg:"))).toEqual(["arg:plan", "arg:--target", `arg:OrgKey/${name}`]);
    for (const f of ["pwned", "pwned2", "pwned3"]) expect(existsSync(path.join(hostile, f)), f).toBe(false);
  });
});
