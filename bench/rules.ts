/**
 * Governance rules (docs/user/rules.md) at 10,000 resources: cold `gatesync validate` with
 * `spectral:oas` recommended on every API's own OpenAPI document plus five custom rules on every
 * resource, beside the same command without rules, interleaved — the compiled CLI, spawned cold.
 * Both runs check every file: the rules' errors (spectral:oas finds some in the generated
 * documents) fail the run only once all are checked.
 */
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { cli, measureProcess, processFigures } from "./cold.js";
import type { ProcessFigures, ProcessSample } from "./cold.js";
import type { Generated } from "./generate.js";

const here = path.dirname(fileURLToPath(import.meta.url));

export interface RulesFigures {
  readonly without: ProcessFigures;
  /** Cold: no findings cache (.gatesync/rules-cache removed before each run). */
  readonly with: ProcessFigures;
  /** Again, the findings cache of the run before in place (a CI job or pre-commit run with nothing changed). */
  readonly warm?: ProcessFigures;
  /** Findings the rules reported in the last run with them (they ran). */
  readonly findings: number;
  /**
   * Spectral alone on the same files, one thread, no gatesync (bench/spectral-floor.ts): as it
   * ships, and with the two per-document costs paid once (gatesync's speed-ups). Older results lack it.
   */
  readonly spectral?: { readonly asShipped: ProcessFigures; readonly speedUps: ProcessFigures };
}

export const openapiRuleset = "extends: [[spectral:oas, recommended]]\n";

/** Five rules of the kinds docs/user/rules.md shows, on every resource. */
export const resourcesRuleset = `rules:
  listen-path-prefix:
    given: "$.spec.query.listenPath"
    severity: warn
    then: { function: pattern, functionOptions: { match: "^/api-" } }
  name-kebab-case:
    given: "$.metadata.name"
    severity: warn
    then: { function: casing, functionOptions: { type: kebab } }
  team-label:
    given: "$.metadata"
    severity: warn
    then: { field: labels.team, function: truthy }
  org-key-rate:
    given: "$.spec.rate"
    severity: warn
    then: { function: schema, functionOptions: { schema: { type: number, maximum: 5000 } } }
  webhook-inside-company:
    given: "$.spec.target_path"
    severity: warn
    then: { function: pattern, functionOptions: { match: "^https://[a-z0-9.-]*example\\\\.com/" } }
`;

/** Two configs reading the repository's resources: one with the rulesets, one without. */
async function writeConfigs(dir: string, g: Generated): Promise<{ withRules: string; without: string }> {
  await mkdir(path.join(dir, "rules"), { recursive: true });
  await writeFile(path.join(dir, "rules", "openapi.yaml"), openapiRuleset);
  await writeFile(path.join(dir, "rules", "resources.yaml"), resourcesRuleset);
  const head = [
    "apiVersion: gatesync.dev/v1",
    "kind: GatesyncConfig",
    `source: { directory: ${JSON.stringify(g.root)} }`,
    "secrets: { env: [BENCH_SECRET] }",
    "targets: {}",
  ];
  const without = path.join(dir, "without.yaml");
  const withRules = path.join(dir, "gatesync.yaml");
  await writeFile(without, `${head.join("\n")}\n`);
  await writeFile(withRules, `${[...head, "rules: { openapi: rules/openapi.yaml, resources: rules/resources.yaml }"].join("\n")}\n`);
  return { withRules, without };
}

export async function rulesFigures(g: Generated, dir: string, n: number, env: Record<string, string>): Promise<RulesFigures> {
  const configs = await writeConfigs(dir, g);
  const without: ProcessSample[] = [];
  const withRules: ProcessSample[] = [];
  const warm: ProcessSample[] = [];
  let findings = 0;
  const args = [cli, "validate", "-c", configs.withRules, "--format", "json"];
  for (let i = 0; i < n; i++) {
    // gatesync's own OpenAPI checks refuse some generated documents (a path parameter the corpus
    // leaves undeclared) and spectral:oas recommended finds errors in them (exit 1 both): every file is checked all the same
    without.push(await measureProcess([cli, "validate", "-c", configs.without], env, [0, 1]));
    await rm(path.join(dir, ".gatesync"), { recursive: true, force: true });
    const run = await measureProcess(args, env, [0, 1]);
    findings = (JSON.parse(run.stdout) as { diagnostics: Array<{ code: string }> }).diagnostics.filter((d) => d.code === "RULESET_VIOLATION").length;
    if (findings === 0) throw new Error("the rulesets reported nothing: they did not run");
    withRules.push(run);
    const again = await measureProcess(args, env, [0, 1]);
    if (again.stdout !== run.stdout) throw new Error("the findings cache changed the findings");
    warm.push(again);
  }
  const floor = path.join(here, "spectral-floor.ts");
  const asShipped: ProcessSample[] = [];
  const speedUps: ProcessSample[] = [];
  // once or twice each: a floor takes tens of seconds, and its spread is small beside the gap it shows
  for (let i = 0; i < Math.min(n, 2); i++) {
    const rulesets = [path.join(dir, "rules", "openapi.yaml"), path.join(dir, "rules", "resources.yaml")];
    asShipped.push(await measureProcess(["--import", "tsx", floor, g.root, ...rulesets], env));
    speedUps.push(await measureProcess(["--import", "tsx", floor, g.root, ...rulesets, "--speed-ups"], env));
  }
  return {
    without: processFigures(without),
    with: processFigures(withRules),
    warm: processFigures(warm),
    findings,
    spectral: { asShipped: processFigures(asShipped), speedUps: processFigures(speedUps) },
  };
}
