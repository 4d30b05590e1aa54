/**
 * action.yml run as the GitHub runner runs a composite action: each step's `run` in
 * `bash --noprofile --norc -eo pipefail`, its `env` and `${{ }}` expressions filled from the
 * inputs (defaults where not given) and the event, GITHUB_ACTION_PATH the action's directory,
 * outputs through GITHUB_OUTPUT, a step without `if: always()` skipped after a failure. Against a
 * real daemon's state and GitHub's comment API on loopback.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { mergeRequestClone, runnerBase, stateToken, teamRepositoryForFile } from "../helpers/ci-runner.js";
import { fakeCommentApi } from "../helpers/comment-api.js";
import { bashOutcome } from "../helpers/ci-runner.js";
import { projectRoot, tempRepo } from "../helpers/temp-repo.js";

interface Step {
  name: string;
  id?: string;
  if?: string;
  shell: string;
  env?: Record<string, string>;
  run: string;
}
interface Action {
  inputs: Record<string, { default?: string; required?: boolean }>;
  runs: { using: string; steps: Step[] };
}
const action = parse(readFileSync(path.join(projectRoot, "action.yml"), "utf8")) as Action;

const team = teamRepositoryForFile();

/** Runs the action's steps in `dir`; the steps' outcomes, the outputs and what they printed. */
async function runAction(dir: string, given: Record<string, string>, env: Record<string, string>) {
  const inputs = Object.fromEntries(Object.entries(action.inputs).map(([k, v]) => [k, given[k] ?? v.default ?? ""]));
  for (const [k, v] of Object.entries(action.inputs)) if (v.required === true) expect(given[k], k).toBeDefined();
  const outputFile = path.join(await tempRepo(), "github-output");
  const outputs: Record<string, Record<string, string>> = {};
  const value = (expression: string): string => {
    const e = expression.trim();
    if (e.startsWith("inputs.")) return inputs[e.slice(7)]!;
    if (e === "github.event.pull_request.number") return "7";
    if (e === "contains(github.event.pull_request.labels.*.name, 'breaking-change-approved')") return "false";
    const step = /^steps\.(\w+)\.outputs\.(\w+)$/.exec(e);
    if (step !== null) return outputs[step[1]!]?.[step[2]!] ?? "";
    throw new Error(`an expression the test does not know: ${e}`);
  };
  const fill = (text: string): string => text.replace(/\$\{\{(.*?)\}\}/g, (_, e: string) => value(e));
  let failed = false;
  const ran: Array<{ name: string; code: number | "skipped" }> = [];
  let printed = "";
  for (const step of action.runs.steps) {
    if (failed && step.if !== "always()") {
      ran.push({ name: step.name, code: "skipped" });
      continue;
    }
    expect(step.shell).toBe("bash");
    writeFileSync(outputFile, "");
    const stepEnv = Object.fromEntries(Object.entries(step.env ?? {}).map(([k, v]) => [k, fill(String(v))]));
    const r = await bashOutcome(["--noprofile", "--norc", "-eo", "pipefail", "-c", fill(step.run)], {
      cwd: dir,
      env: { ...runnerBase(team().bin), GITHUB_ACTIONS: "true", GITHUB_ACTION_PATH: projectRoot, GITHUB_OUTPUT: outputFile, ...env, ...stepEnv },
    });
    printed += r.stdout + r.stderr;
    if (step.id !== undefined)
      outputs[step.id] = Object.fromEntries(
        readFileSync(outputFile, "utf8")
          .split("\n")
          .filter((l) => l.includes("="))
          .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
      );
    ran.push({ name: step.name, code: r.status });
    if (r.status !== 0) failed = true;
  }
  return { ran, outputs, printed, failed };
}

describe("the GitHub Action, its steps run as the runner runs them", () => {
  it("posts the plan against the daemon's state as one comment, updated on the next run; invalid files are annotated and said in it", async () => {
    expect(action.runs.using).toBe("composite");
    const api = await fakeCommentApi("github", { "ci-token": "github-actions[bot]" });
    try {
      const forge = { GITHUB_API_URL: api.url, GITHUB_REPOSITORY: "o/r", PLAN_STATE: stateToken, PR_TOKEN: "ci-token" };
      const inputs = { "daemon-url": team().daemon.url, "state-token-env": "PLAN_STATE", "comment-token-env": "PR_TOKEN" };
      const dir = await mergeRequestClone(team().origin, (t) => t.replace("rate: 1000", "rate: 2000"));
      const first = await runAction(dir, inputs, forge);
      expect(first.failed, first.printed).toBe(false);
      expect(first.outputs.plan).toEqual({ exitcode: "2" });
      expect(api.comments).toHaveLength(1);
      expect(api.comments[0]!.body).toMatch(/^<!-- gatesync-plan -->\n/);
      expect(api.comments[0]!.body).toContain("OrgKey/acme");
      expect(api.comments[0]!.body).toContain(`the daemon's state at ${team().daemon.url}/state`);
      expect(api.comments[0]!.body).not.toContain(stateToken);

      // the next push: the files no longer validate — annotated at the line, the same comment says so, the job fails
      const bad = await mergeRequestClone(team().origin, (t) => t.replace("rate: 1000", 'rate: "fast"'));
      const second = await runAction(bad, inputs, forge);
      // validate fails; the plan step records gatesync plan's code (1: no plan) and the comment is still written; the last step fails the job
      expect(second.ran.map((s) => s.code)).toEqual([0, 1, 0, 0, 1]);
      expect(second.outputs.plan).toEqual({ exitcode: "1" });
      expect(second.printed).toMatch(
        /::error file=config\/keys\.yaml,line=\d+,col=\d+,title=gatesync SCHEMA_VIOLATION::OrgKey\/acme spec\.rate: must be number/,
      );
      expect(api.comments).toHaveLength(1);
      expect(api.writes.map((w) => w.method)).toEqual(["POST", "PATCH"]);
      expect(api.comments[0]!.body).toContain("### gatesync plan: this merge request does not validate");
      expect(second.printed).toContain("::error title=gatesync::no plan was made (exit code 1)");
    } finally {
      await api.close();
    }
  }, 120_000);

  it("a wrong state token fails the job with the daemon's refusal in the comment, not a plan from nothing", async () => {
    const api = await fakeCommentApi("github", { "ci-token": "github-actions[bot]" });
    try {
      const dir = await mergeRequestClone(team().origin, (t) => t.replace("rate: 1000", "rate: 3000"));
      const r = await runAction(
        dir,
        { "daemon-url": team().daemon.url },
        { GITHUB_API_URL: api.url, GITHUB_REPOSITORY: "o/r", GATESYNC_STATE_TOKEN: "wrong", GITHUB_TOKEN: "ci-token" },
      );
      expect(r.outputs.plan?.exitcode).not.toMatch(/^[0234]$/);
      expect(api.comments[0]!.body).toContain("the daemon's state could not be used, so no plan was made");
      expect(r.ran.at(-1)!.code).toBe(1);
    } finally {
      await api.close();
    }
  }, 60_000);
});
