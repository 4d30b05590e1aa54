/**
 * The merge-request job has the daemon's trust model (issue 55): a merge request's checkout is
 * data. Its gatesync.yaml may set `rules.allowCustomFunctions` (with a ruleset whose JavaScript
 * would write a marker file) or `telemetry:` (an endpoint it chooses: here a loopback OTLP
 * receiver); the job — a real `gatesync` process with CI=true, as the job `gatesync init`
 * writes runs it — runs no code and sends nothing. The same files off CI, on a developer's
 * machine, do both: the proof that the test can fail.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnCli } from "../helpers/cli.js";
import { committedRepo } from "../helpers/git-repo.js";
import { startReceiver } from "../helpers/otlp-receiver.js";
import type { Receiver } from "../helpers/otlp-receiver.js";
import { doc } from "../helpers/plan.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver("ok");
});
afterAll(async () => {
  await receiver?.stop();
  await removeTempRepos();
});

/** A merge request's checkout: a ruleset with a custom function that writes `marker`, and telemetry sent to the receiver. */
async function mergeRequest(marker: string): Promise<string> {
  const settings = `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
targets: { gateway: { url: "http://127.0.0.1:1", credentialEnv: GW_KEY } }
state: { backend: sqlite, path: .gatesync/state.db }
rules: { resources: rules/resources.yaml, allowCustomFunctions: true, documentTimeout: 24h }
telemetry: { traces: { endpoint: ${JSON.stringify(receiver.url)} } }
`;
  // a rule calling the custom function, and a plain one that finds something in the resource
  const ruleset =
    "functions: [mark]\nrules:\n  marked:\n    given: $.metadata.name\n    severity: warn\n    then: { function: mark }\n" +
    "  no-acme-name:\n    given: $.metadata.name\n    severity: warn\n    message: names no customer\n    then: { function: pattern, functionOptions: { notMatch: acme } }\n";
  // what a hostile function does with the job's environment at hand
  const fn = `const fs = process.getBuiltinModule("node:fs");\nexport default () => { fs.writeFileSync(${JSON.stringify(marker)}, JSON.stringify(process.env)); return []; };\n`;
  const { dir } = await committedRepo({
    "gatesync.yaml": settings,
    "rules/resources.yaml": ruleset,
    "rules/functions/mark.js": fn,
    "config/keys.yaml": doc("OrgKey", "acme", "keyId: org-acme\nrate: 5"),
  });
  return dir;
}

const job = { CI: "true", GATESYNC_STATE_TOKEN: "read-only-state-token", OTEL_EXPORTER_OTLP_ENDPOINT: "", OTEL_TRACES_EXPORTER: "" };

describe("a merge request's job", () => {
  it("runs none of the merge request's ruleset JavaScript in validate or plan, with CI=true: its rule is skipped with a note, the rest runs", async () => {
    const dir = await mergeRequest("marker-ci");
    const marker = path.join(dir, "marker-ci");
    const note =
      "the rule `marked` calls a custom function: a merge-request job loads no JavaScript from the merge request, so it is skipped here; the daemon runs it after the merge";
    const validate = await spawnCli(["validate", "--config", "gatesync.yaml"], { cwd: dir, env: job });
    const said = validate.stdout + validate.stderr;
    expect(validate.code, said).toBe(0);
    expect(said).toContain(note);
    expect(said).toMatch(/rules\/resources\.yaml:4:\d+/);
    expect(said).toContain("names no customer");
    expect(said).not.toContain("CONFIG_INVALID");
    expect(existsSync(marker)).toBe(false);
    const plan = await spawnCli(["plan", "--config", "gatesync.yaml", "--dir", "config", "--allow-empty-state"], { cwd: dir, env: job });
    const planned = plan.stdout + plan.stderr;
    expect(plan.code, planned).toBe(0);
    expect(planned).toContain(note);
    expect(planned).toContain("names no customer");
    expect(planned).toMatch(/OrgKey\/acme/);
    expect(existsSync(marker)).toBe(false);
    expect(JSON.stringify(receiver.bodies)).not.toContain("gatesync");
    expect(receiver.bodies).toEqual([]);
  }, 60_000);

  it("runs it off CI, where the file is the developer's own (the same files: the test can fail)", async () => {
    const dir = await mergeRequest("marker-local");
    const local = await spawnCli(["validate", "--config", "gatesync.yaml"], { cwd: dir, env: { CI: "", GATESYNC_STATE_TOKEN: "", GATESYNC_STATE_URL: "" } });
    expect(local.code, local.stderr).toBe(0);
    expect(existsSync(path.join(dir, "marker-local"))).toBe(true);
    // the file's telemetry is taken off CI: the developer's own collector receives the command's spans
    expect(receiver.spans().map((s) => s.name)).toContain("gatesync.validate");
  }, 60_000);
});
