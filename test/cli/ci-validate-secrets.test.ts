/**
 * The merge-request CI job's validate (examples/ci: `gatesync validate config --config
 * gatesync.yaml --format github|gitlab`) runs without the secrets, as it should: it annotates no
 * line for a well-formed reference in scope that it cannot resolve — one notice for the run says
 * so — while what a commit can get wrong about a reference (its scope, its scheme) stays a
 * located error on its line.
 */
import { cp, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { spawnCli } from "../helpers/cli.js";
import { projectRoot, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

/** The environment of a CI job with none of the examples' secrets. */
function withoutSecrets(): NodeJS.ProcessEnv {
  const { CHAT_WEBHOOK_TOKEN: _a, CRM_HOOK_TOKEN: _b, PETSTORE_MOBILE_CLIENT_SECRET: _c, ...env } = process.env;
  return env;
}

/** The examples' repository, copied, as a merge request's checkout. */
async function checkout(): Promise<string> {
  const dir = await tempRepo();
  await cp(path.join(projectRoot, "examples/config"), path.join(dir, "config"), { recursive: true });
  await cp(path.join(projectRoot, "examples/secrets"), path.join(dir, "secrets"), { recursive: true });
  await cp(path.join(projectRoot, "examples/gatesync.yaml"), path.join(dir, "gatesync.yaml"));
  return dir;
}

const ciValidate = (format: string): string[] => ["validate", "config", "--config", "gatesync.yaml", "--format", format];

describe("the CI job's validate without secrets", () => {
  it("annotates no line for the references it cannot resolve, and says so once", async () => {
    const dir = await checkout();
    // the command the examples' workflow runs
    expect(await readFile(path.join(projectRoot, "examples/ci/github-actions-plan.yaml"), "utf8")).toContain(
      "gatesync validate config --config gatesync.yaml --format github",
    );
    const github = await spawnCli(ciValidate("github"), { cwd: dir, env: withoutSecrets() });
    expect(github.code).toBe(0);
    const annotations = github.stdout.split("\n").filter((l) => l.startsWith("::"));
    expect(annotations).toHaveLength(1);
    expect(annotations[0]).toMatch(
      /^::notice title=gatesync SECRET_UNRESOLVED::3 secret reference\(s\) cannot be resolved here \(\$\{env:CHAT_WEBHOOK_TOKEN\}/,
    );
    const gitlab = await spawnCli(ciValidate("gitlab"), { cwd: dir, env: withoutSecrets() });
    const issues = JSON.parse(gitlab.stdout) as Array<{ check_name: string; severity: string }>;
    expect(issues.map((i) => [i.check_name, i.severity])).toEqual([["SECRET_UNRESOLVED", "info"]]);
    // with the secrets set, not even the notice
    const set = await spawnCli(ciValidate("github"), {
      cwd: dir,
      env: {
        ...withoutSecrets(),
        CHAT_WEBHOOK_TOKEN: "chat-token-value-1",
        CRM_HOOK_TOKEN: "crm-token-value-1",
        PETSTORE_MOBILE_CLIENT_SECRET: "petstore-secret-1",
      },
    });
    expect(set.stdout.split("\n").filter((l) => l.startsWith("::"))).toEqual([]);
  });

  it("still annotates, on its line, a reference outside the scope and one of an unknown scheme", async () => {
    const dir = await checkout();
    const keys = path.join(dir, "config/gateway/org-keys.yaml");
    const text = await readFile(keys, "utf8");
    await writeFile(keys, `${text.trimEnd()}\n  meta_data: { note: "\${env:GW_ADMIN_KEY} \${evn:CRM_HOOK_TOKEN}" }\n`);
    const github = await spawnCli(ciValidate("github"), { cwd: dir, env: withoutSecrets() });
    expect(github.code).toBe(1);
    const line = text.trimEnd().split("\n").length + 1;
    const located = github.stdout.split("\n").filter((l) => l.startsWith("::error "));
    expect(located.map((l) => /^::error file=([^,]+),line=(\d+),col=\d+,title=gatesync (\w+)::/.exec(l)?.slice(1))).toEqual([
      ["config/gateway/org-keys.yaml", String(line), "REFERENCE_UNKNOWN"],
      ["config/gateway/org-keys.yaml", String(line), "SECRET_SCOPE"],
    ]);
  });
});
