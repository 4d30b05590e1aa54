/**
 * Governance rules (docs/user/rules.md) as users meet them: real Spectral rulesets beside
 * gatesync.yaml, `gatesync validate`, `plan` and `apply` against a sandbox over HTTP.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { Harness } from "../helpers/apply.js";
import { harness } from "../helpers/apply.js";
import { runCli } from "../helpers/cli.js";
import { positionOf, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);
let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

/** Listen paths start with the team's prefix: the example's /petstore/ does not. */
const listenPrefix = (severity: string): string => `rules:
  listen-path-prefix:
    description: Listen paths start with the team's prefix.
    message: "listen path {{value}} must start with /shop/"
    given: "$.spec.query.listenPath"
    severity: ${severity}
    then: { function: pattern, functionOptions: { match: "^/shop/" } }
`;

/** Every API names a contact. */
const contactRule = `rules:
  api-contact:
    given: "$.info"
    severity: error
    message: every API names a contact (info.contact)
    then: { field: contact, function: truthy }
`;

/** The examples' repository with rulesets written beside gatesync.yaml and named in it. */
async function withRules(rulesets: { openapi?: string; resources?: string }, extra = ""): Promise<Harness> {
  const names = Object.keys(rulesets).map((t) => `${t}: rules/${t}.spectral.yaml`);
  const made = await harness({ configExtra: `rules: { ${names.join(", ")} }\n${extra}` });
  await mkdir(path.join(made.dir, "rules"), { recursive: true });
  for (const [target, text] of Object.entries(rulesets)) await writeFile(path.join(made.dir, "rules", `${target}.spectral.yaml`), text);
  return made;
}

const silent = { GATESYNC_LOG_LEVEL: "silent" };

describe("governance rules", { timeout: 120_000 }, () => {
  it("an error rule fails validate, plan and apply at the file and line of the member, with no call sent", async () => {
    h = await withRules({ resources: listenPrefix("error"), openapi: contactRule });
    const cfg = path.join(h.dir, "gatesync.yaml");
    const resource = await readFile(path.join(h.dir, "config/apis/petstore.yaml"), "utf8");
    const definition = await readFile(path.join(h.dir, "config/openapi/petstore.yaml"), "utf8");
    const at = positionOf(resource, "/petstore/");
    const info = positionOf(definition, "version: 1.0.0");

    const validate = await runCli(["validate", "--config", cfg], h.env);
    expect(validate.code).toBe(1);
    expect(validate.stdout).toContain(
      `error[RULESET_VIOLATION listen-path-prefix] apis/petstore.yaml:${at.line}:${at.column} ApiDefinition/petstore spec.query.listenPath: listen path /petstore/ must start with /shop/`,
    );
    // an OpenAPI finding is located in the definitionFile, under the resource that names it
    expect(validate.stdout).toContain(
      `error[RULESET_VIOLATION api-contact] openapi/petstore.yaml:${info.line}:${info.column} ApiDefinition/petstore info: every API names a contact (info.contact)`,
    );

    const plan = await runCli(["plan", "--config", cfg], h.env);
    expect(plan.code).toBe(1);
    expect(plan.stderr).toContain(
      `apis/petstore.yaml:${at.line}:${at.column} ApiDefinition/petstore spec.query.listenPath: listen path /petstore/ must start with /shop/`,
    );

    const apply = await runCli(["apply", "--config", cfg, "--auto-approve", "--allow-empty-state"], { ...h.env, ...silent });
    expect(apply.code).toBe(1);
    expect(apply.stderr).toContain("error[RULESET_VIOLATION listen-path-prefix]");
    expect(h.sandbox.inspect.calls().log).toEqual([]);
    expect((await h.state.read()).resources.size).toBe(0);
  });

  it("a warn rule passes validate and apply, its finding shown", async () => {
    h = await withRules({ resources: listenPrefix("warn") });
    const cfg = path.join(h.dir, "gatesync.yaml");
    const at = positionOf(await readFile(path.join(h.dir, "config/apis/petstore.yaml"), "utf8"), "/petstore/");
    const validate = await runCli(["validate", "--config", cfg], h.env);
    expect(validate.code).toBe(0);
    expect(validate.stdout).toContain(`warning[RULESET_VIOLATION listen-path-prefix] apis/petstore.yaml:${at.line}:${at.column}`);
    const json = JSON.parse((await runCli(["validate", "--config", cfg, "--format", "json"], h.env)).stdout) as {
      valid: boolean;
      diagnostics: Array<Record<string, unknown>>;
    };
    expect(json.valid).toBe(true);
    expect(json.diagnostics).toContainEqual(
      expect.objectContaining({
        severity: "warning",
        code: "RULESET_VIOLATION",
        rule: "listen-path-prefix",
        file: "apis/petstore.yaml",
        ...at,
        resource: "ApiDefinition/petstore",
        path: "spec.query.listenPath",
      }),
    );
    const apply = await runCli(["apply", "--config", cfg, "--auto-approve", "--allow-empty-state"], { ...h.env, ...silent });
    expect(apply.code, apply.stderr).toBe(0);
    expect(apply.stderr).toContain(`warning[RULESET_VIOLATION listen-path-prefix] apis/petstore.yaml:${at.line}:${at.column}`);
    expect(h.sandbox.inspect.calls().log.length).toBeGreaterThan(0);
  });

  it("GitHub annotations, GitLab Code Quality and the merge-request comment carry the rules' findings", async () => {
    h = await withRules({ resources: listenPrefix("warn") });
    const cfg = path.join(h.dir, "gatesync.yaml");
    const at = positionOf(await readFile(path.join(h.dir, "config/apis/petstore.yaml"), "utf8"), "/petstore/");
    // files are named from the repository's root (src/source/repository-path.ts): this temporary
    // directory is no git work tree and lies outside the working directory, so from the resource directory
    const github = await runCli(["validate", "--config", cfg, "--format", "github"], h.env);
    expect(github.stdout).toContain(
      `::warning file=apis/petstore.yaml,line=${at.line},col=${at.column},title=gatesync RULESET_VIOLATION/listen-path-prefix::ApiDefinition/petstore spec.query.listenPath: listen path /petstore/ must start with /shop/`,
    );
    const gitlab = JSON.parse((await runCli(["validate", "--config", cfg, "--format", "gitlab"], h.env)).stdout) as Array<Record<string, unknown>>;
    expect(gitlab).toContainEqual(
      expect.objectContaining({
        check_name: "RULESET_VIOLATION/listen-path-prefix",
        severity: "minor",
        location: { path: "apis/petstore.yaml", lines: { begin: at.line } },
      }),
    );
    const markdown = await runCli(["plan", "--config", cfg, "--format", "markdown"], h.env);
    expect(markdown.code).toBe(0);
    expect(markdown.stdout).toContain("### gatesync plan");
    expect(markdown.stdout).toContain("#### Rules: 0 errors, 2 other findings");
    expect(markdown.stdout).toContain(
      `| ⚠️ warn | \`listen-path-prefix\` | \`apis/petstore.yaml:${at.line}:${at.column} ApiDefinition/petstore spec.query.listenPath\` | listen path /petstore/ must start with /shop/ |`,
    );
  });

  it("a merge request that breaks an error rule gets a comment saying why nothing was planned", async () => {
    h = await withRules({ resources: listenPrefix("error") });
    const markdown = await runCli(["plan", "--config", path.join(h.dir, "gatesync.yaml"), "--format", "markdown"], h.env);
    expect(markdown.code).toBe(1);
    expect(markdown.stdout).toContain("**Not planned: 2 errors in the repository.**");
    expect(markdown.stdout).toContain("#### Rules: 2 errors, 0 other findings");
    expect(markdown.stdout).toContain("| ❌ error | `listen-path-prefix` |");
  });

  it("an inline OpenAPI document's findings are located in the resource's file", async () => {
    h = await withRules({ openapi: contactRule });
    const orders = await readFile(path.join(h.dir, "config/apis/orders.yaml"), "utf8");
    const info = positionOf(orders, "title:");
    const json = JSON.parse((await runCli(["validate", "--config", path.join(h.dir, "gatesync.yaml"), "--format", "json"], h.env)).stdout) as {
      diagnostics: Array<Record<string, unknown>>;
    };
    expect(json.diagnostics).toContainEqual(
      expect.objectContaining({
        rule: "api-contact",
        file: "apis/orders.yaml",
        line: info.line,
        resource: "ApiDefinition/orders",
        path: "spec.definition.info",
      }),
    );
  });

  it("spectral:oas on a document that refers to another file: a warning that it is not followed, not an error", async () => {
    h = await withRules({ openapi: "extends: [[spectral:oas, recommended]]\n" });
    const file = path.join(h.dir, "config/openapi/petstore.yaml");
    const text = (await readFile(file, "utf8")).replace('$ref: "#/components/schemas/Error"', '$ref: "./shared.yaml#/Error"');
    await writeFile(file, text);
    const r = await runCli(["validate", "--config", path.join(h.dir, "gatesync.yaml")], h.env);
    expect(r.code).toBe(0);
    const at = positionOf(text, '"./shared.yaml#/Error"');
    expect(r.stdout).toContain(`warning[RULESET_VIOLATION invalid-ref] openapi/petstore.yaml:${at.line}:${at.column} ApiDefinition/petstore`);
    expect(r.stdout).toContain("not checked by the rules: the reference leads to another file");
  }, 90_000);

  it("overrides by file turn a rule off for some documents", async () => {
    h = await withRules({
      resources: `${listenPrefix("error")}overrides:\n  - files: ["../config/apis/petstore.yaml"]\n    rules: { listen-path-prefix: "off" }\n`,
    });
    const validate = await runCli(["validate", "--config", path.join(h.dir, "gatesync.yaml")], h.env);
    expect(validate.stdout).not.toContain("apis/petstore.yaml:14");
    expect(validate.stdout).toContain("error[RULESET_VIOLATION listen-path-prefix] apis/uspto.yaml");
  });
});

describe("rulesets that cannot be used", { timeout: 120_000 }, () => {
  it("a ruleset with a syntax error is a CONFIG_INVALID at its line, before any call", async () => {
    const broken = "rules:\n  x:\n    given: [\n";
    h = await withRules({ resources: broken });
    const r = await runCli(["apply", "--config", path.join(h.dir, "gatesync.yaml"), "--auto-approve", "--allow-empty-state"], { ...h.env, ...silent });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/error\[CONFIG_INVALID\] .*rules\/resources\.spectral\.yaml:\d+:\d+: ruleset: /);
    expect(h.sandbox.inspect.calls().log).toEqual([]);
  });

  it("an unknown function, a missing extends and a remote extends are located CONFIG_INVALIDs naming the problem", async () => {
    h = await withRules({ resources: "rules:\n  x:\n    given: $.spec\n    then: { function: noSuchFunction }\n" });
    const cfg = path.join(h.dir, "gatesync.yaml");
    const config = await readFile(cfg, "utf8");
    const unknown = await runCli(["validate", "--config", cfg], h.env);
    expect(unknown.code).toBe(1);
    // at the function's line in the ruleset
    expect(unknown.stderr).toMatch(
      /error\[CONFIG_INVALID\] \S*rules\/resources\.spectral\.yaml:4:\d+ rules\.x\.then\.function: ruleset: Function is not defined: `noSuchFunction` is neither a core function/,
    );
    await writeFile(path.join(h.dir, "rules/resources.spectral.yaml"), "extends: [./missing.yaml]\n");
    const missing = await runCli(["validate", "--config", cfg], h.env);
    // at the key that names the ruleset in gatesync.yaml
    expect(missing.stderr).toMatch(
      new RegExp(
        `error\\[CONFIG_INVALID\\] \\S*gatesync\\.yaml:${positionOf(config, "rules/resources.spectral.yaml").line}:\\d+ rules\\.resources: ruleset \\S*resources\\.spectral\\.yaml: .*missing\\.yaml`,
      ),
    );
    await writeFile(path.join(h.dir, "rules/resources.spectral.yaml"), "extends: [https://example.com/ruleset.yaml]\n");
    const remote = await runCli(["validate", "--config", cfg], h.env);
    expect(remote.stderr).toContain("`https://example.com/ruleset.yaml` is remote: rulesets are read from the repository only, nothing is fetched");
  });

  it("a custom function is refused unless rules.allowCustomFunctions, and then runs", async () => {
    const ruleset = "functions: [noTodo]\nrules:\n  no-todo:\n    given: $.metadata.name\n    severity: error\n    then: { function: noTodo }\n";
    const fn = "export default (input) => (String(input).includes('pet') ? [{ message: 'names say what, not pet' }] : []);\n";
    h = await withRules({ resources: ruleset });
    await mkdir(path.join(h.dir, "rules/functions"), { recursive: true });
    await writeFile(path.join(h.dir, "rules/functions/noTodo.js"), fn);
    const cfg = path.join(h.dir, "gatesync.yaml");
    const refused = await runCli(["validate", "--config", cfg], h.env);
    expect(refused.stderr).toContain(
      "custom function `rules/functions/noTodo.js` is JavaScript from the repository: it is not loaded unless gatesync.yaml sets `rules.allowCustomFunctions: true`",
    );
    await writeFile(cfg, (await readFile(cfg, "utf8")).replace("rules: {", "rules: { allowCustomFunctions: true,"));
    const allowed = await runCli(["validate", "--config", cfg], h.env);
    expect(allowed.stdout).toContain("error[RULESET_VIOLATION no-todo] apis/petstore.yaml:7:9 ApiDefinition/petstore metadata.name: names say what, not pet");
  });

  it("a ruleset outside the repository, or missing, is refused at its key in gatesync.yaml", async () => {
    h = await harness({ configExtra: "rules: { openapi: ../elsewhere.yaml, resources: rules/none.yaml }\n" });
    const cfg = path.join(h.dir, "gatesync.yaml");
    const text = await readFile(cfg, "utf8");
    const r = await runCli(["validate", "--config", cfg], h.env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `gatesync.yaml:${positionOf(text, "../elsewhere.yaml").line}:${positionOf(text, "../elsewhere.yaml").column} rules.openapi: the ruleset`,
    );
    expect(r.stderr).toContain("lies outside");
    expect(r.stderr).toContain(`rules.resources: no ruleset file at ${path.join("rules", "none.yaml")}`);
  });
});

describe("gatesync init", { timeout: 120_000 }, () => {
  it("scaffolds the example rulesets, off until named in gatesync.yaml, and they load when named", async () => {
    const dir = await tempRepo();
    const init = await runCli(["init", dir]);
    expect(init.code).toBe(0);
    const config = await readFile(path.join(dir, "gatesync.yaml"), "utf8");
    expect(config).toContain("# rules:");
    expect(config).toContain("#   openapi: rules/openapi.spectral.yaml");
    await writeFile(
      path.join(dir, "gatesync.yaml"),
      config.replace(
        "# rules:\n#   openapi: rules/openapi.spectral.yaml\n#   resources: rules/resources.spectral.yaml",
        "rules:\n  openapi: rules/openapi.spectral.yaml\n  resources: rules/resources.spectral.yaml",
      ),
    );
    const r = await runCli(["validate", "--config", path.join(dir, "gatesync.yaml"), path.join(dir, "config")]);
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/RULESET_VIOLATION/);
  });
});
