/**
 * The rules' time budgets and custom functions are the operator's (settings-owners.ts): a
 * commit's gatesync.yaml may name its rulesets, never lift the budgets that bound them.
 */
import path from "node:path";
import { writeFile } from "node:fs/promises";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { withTeamSettings } from "../../src/daemon/environments/repository-settings.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

const header =
  "apiVersion: gatesync.dev/v1\nkind: GatesyncConfig\nsource: { directory: config }\ntargets: { gateway: { url: http://127.0.0.1:1, credentialEnv: GW_KEY } }\n";

describe("the team's rules with the operator's say", () => {
  it("keeps the operator's budgets and custom-function switch, whatever the commit writes", async () => {
    const dir = await tempRepo({ "config/.keep": "", "rules/r.yaml": "rules: {}\n" });
    await writeFile(path.join(dir, "operator.yaml"), `${header}rules: { resources: rules/r.yaml, documentTimeout: 2s }\n`);
    await writeFile(
      path.join(dir, "team.yaml"),
      `${header}rules: { resources: rules/r.yaml, documentTimeout: 24h, runTimeout: 48h, allowCustomFunctions: true }\n`,
    );
    const operator = await loadConfig(path.join(dir, "operator.yaml"));
    const team = await loadConfig(path.join(dir, "team.yaml"));
    const merged = withTeamSettings(operator, { from: { file: path.join(dir, "team.yaml"), config: team }, hash: "h", ignored: [] });
    expect(merged.rules).toEqual({ resources: path.join(dir, "rules/r.yaml"), allowCustomFunctions: false, documentTimeoutMs: 2000 });
  });
});
