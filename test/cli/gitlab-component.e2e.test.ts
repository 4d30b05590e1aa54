/**
 * templates/plan.yml (the GitLab CI/CD component) run as a runner runs the job it adds: its
 * `$[[ inputs.* ]]` filled from the include's inputs (the spec's defaults where not given), its
 * variables and the merge request's predefined ones in the environment, its script lines in one
 * bash session with `set -eo pipefail`. Against a real daemon's state and GitLab's notes API on loopback.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import { describe, expect, it } from "vitest";
import { mergeRequestClone, runnerBase, stateToken, teamRepositoryForFile } from "../helpers/ci-runner.js";
import { fakeCommentApi } from "../helpers/comment-api.js";
import { bashOutcome } from "../helpers/ci-runner.js";
import { projectRoot } from "../helpers/temp-repo.js";

interface Spec {
  spec: { inputs: Record<string, { default?: string }> };
}
interface Job {
  rules: Array<{ if: string }>;
  variables: Record<string, string>;
  script: string[];
  artifacts: { reports: { codequality: string } };
}
const text = readFileSync(path.join(projectRoot, "templates/plan.yml"), "utf8");
const [header, body] = parseAllDocuments(text).map((d) => d.toJS() as unknown);
const spec = (header as Spec).spec;

/** The job the include adds, its inputs interpolated as GitLab does before the pipeline runs. */
function included(given: Record<string, string>): Job {
  for (const k of Object.keys(given)) expect(spec.inputs, `no input ${k}`).toHaveProperty(k);
  const inputs = Object.fromEntries(Object.entries(spec.inputs).map(([k, v]) => [k, given[k] ?? v.default]));
  const second = text.slice(text.indexOf("\n---\n") + 5);
  const filled = second.replace(/\$\[\[\s*inputs\.([\w-]+)\s*\]\]/g, (_, k: string) => {
    const v = inputs[k];
    if (v === undefined) throw new Error(`input ${k} has no value and no default`);
    return v;
  });
  return (Object.values(parseAllDocuments(filled)[0]!.toJS() as Record<string, Job>)[0] ?? body) as Job;
}

const team = teamRepositoryForFile();

function runJob(job: Job, dir: string, env: Record<string, string>) {
  const script = ["set -eo pipefail", ...job.script].join("\n");
  return bashOutcome(["--noprofile", "--norc", "-c", script], { cwd: dir, env: { ...runnerBase(team().bin), ...job.variables, ...env } });
}

describe("the GitLab CI/CD component, its job run as the runner runs it", () => {
  it("keeps one note with the plan against the daemon's state; invalid files go to the Code Quality report and the note", async () => {
    const api = await fakeCommentApi("gitlab", { "project-token": "project_42_bot" });
    try {
      const job = included({ "daemon-url": team().daemon.url, "state-token-variable": "PLAN_STATE", "comment-token-variable": "NOTES_TOKEN" });
      for (const line of job.script) expect(typeof line, JSON.stringify(line)).toBe("string");
      expect(job.rules[0]!.if).toBe('$CI_PIPELINE_SOURCE == "merge_request_event"');
      const ci = {
        CI_API_V4_URL: api.url,
        CI_PROJECT_ID: "42",
        CI_MERGE_REQUEST_IID: "7",
        CI_MERGE_REQUEST_LABELS: "",
        PLAN_STATE: stateToken,
        NOTES_TOKEN: "project-token",
      };
      const dir = await mergeRequestClone(team().origin, (t) => t.replace("rate: 1000", "rate: 2000"));
      const first = await runJob(job, dir, ci);
      expect(first.status, first.stdout + first.stderr).toBe(0);
      expect(api.comments).toHaveLength(1);
      expect(api.comments[0]!.body).toMatch(/^<!-- gatesync-plan -->\n/);
      expect(api.comments[0]!.body).toContain("OrgKey/acme");
      expect(api.comments[0]!.body).toContain(`the daemon's state at ${team().daemon.url}/state`);
      expect(JSON.parse(readFileSync(path.join(dir, job.artifacts.reports.codequality), "utf8"))).toEqual([]);

      const bad = await mergeRequestClone(team().origin, (t) => t.replace("rate: 1000", 'rate: "fast"'));
      const second = await runJob(job, bad, ci);
      expect(second.status).toBe(1);
      const report = JSON.parse(readFileSync(path.join(bad, "gl-code-quality.json"), "utf8")) as Array<{
        location: { path: string; lines: { begin: number } };
      }>;
      expect(report.map((r) => r.location.path)).toContain("config/keys.yaml");
      expect(api.comments).toHaveLength(1);
      expect(api.writes.map((w) => w.method)).toEqual(["POST", "PUT"]);
      expect(api.comments[0]!.body).toContain("### gatesync plan: this merge request does not validate");
      expect(existsSync(path.join(bad, "plan.json"))).toBe(false);
    } finally {
      await api.close();
    }
  }, 120_000);
});
