/**
 * Governance rules (docs/rules.md) at 10,000 resources: cold `gatesync validate` with
 * `spectral:oas` recommended on every API's own OpenAPI document plus five custom rules on every
 * resource, beside the same command without rules, interleaved — the compiled CLI, spawned cold.
 * Both runs check every file: the rules' errors (spectral:oas finds some in the generated
 * documents) fail the run only once all are checked.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { cli, measureProcess, processFigures } from "./cold.js";
import type { ProcessFigures, ProcessSample } from "./cold.js";
import type { Generated } from "./generate.js";

export interface RulesFigures {
  readonly without: ProcessFigures;
  readonly with: ProcessFigures;
  /** Findings the rules reported in the last run with them (they ran). */
  readonly findings: number;
}

export const openapiRuleset = "extends: [[spectral:oas, recommended]]\n";

/** Five rules of the kinds docs/rules.md shows, on every resource. */
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
  let findings = 0;
  for (let i = 0; i < n; i++) {
    without.push(await measureProcess([cli, "validate", "-c", configs.without], env));
    // spectral:oas recommended finds errors in the generated documents (exit 1): every file is checked all the same
    const run = await measureProcess([cli, "validate", "-c", configs.withRules, "--format", "json"], env, [0, 1]);
    findings = (JSON.parse(run.stdout) as { diagnostics: Array<{ code: string }> }).diagnostics.filter((d) => d.code === "RULESET_VIOLATION").length;
    if (findings === 0) throw new Error("the rulesets reported nothing: they did not run");
    withRules.push(run);
  }
  return { without: processFigures(without), with: processFigures(withRules), findings };
}
