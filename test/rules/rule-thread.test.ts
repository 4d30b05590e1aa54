/**
 * The rules' thread keeps the last few rulesets it built (a daemon's commits may edit a ruleset
 * many times); the checking thread sends a ruleset again whenever the rules' thread may no longer
 * hold it — a ruleset used again after others (a commit that reverts an edit) lints as before.
 */
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { RulesetCheck } from "../../src/rules/rule-thread.js";
import { bundleRulesetFile } from "../../src/rules/ruleset-bundle.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

const ruleset = (n: number): string =>
  `rules:\n  named-${n}:\n    message: "rule ${n}: the name is missing"\n    given: $.metadata\n    severity: error\n    then: { field: name, function: truthy }\n`;

describe("the rules' thread", () => {
  it("lints with a ruleset built before five others, as it did the first time", async () => {
    const dir = await tempRepo(Object.fromEntries([0, 1, 2, 3, 4, 5].map((n) => [`rules/r${n}.yaml`, ruleset(n)])));
    const opts = { boundary: dir, allowCustomFunctions: false, configPath: "rules.resources", configFile: "gatesync.yaml" };
    const prepared: Array<Awaited<ReturnType<typeof bundleRulesetFile>>> = [];
    for (let n = 0; n <= 5; n++) prepared.push(await bundleRulesetFile(path.join(dir, `rules/r${n}.yaml`), opts));
    const value = { apiVersion: "gatesync.dev/v1", kind: "OrgKey", metadata: {}, spec: {} };
    const lint = async (n: number): Promise<string[]> =>
      (await new RulesetCheck(prepared[n]!).check(value, { file: "keys.yaml", index: 0 }, path.join(dir, "keys.yaml"), () => ({}))).map((d) => d.message);
    expect(await lint(5)).toEqual(["rule 5: the name is missing"]);
    expect(await lint(0)).toEqual(["rule 0: the name is missing"]);
    expect(await lint(5)).toEqual(["rule 5: the name is missing"]);
  });
});
