import { execFileSync } from "node:child_process";
import { mkdir, readFile, readdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { runCli, spawnCli } from "../helpers/cli.js";
import { ageIdentity, sopsYaml } from "../helpers/sops-file.js";
import { projectRoot, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

/** Whether a path filter of GitHub Actions (`paths:`) or GitLab CI (`changes:`) takes `file`: `**` any characters, `*` any but `/`. */
const globTakes = (glob: string, file: string): boolean => {
  const parts = glob
    .split(/(\*\*\/|\*\*|\*)/)
    .map((p) => (p === "**/" ? "(?:.*/)?" : p === "**" ? ".*" : p === "*" ? "[^/]*" : p.replace(/[.+?^${}()|[\]\\]/g, "\\$&")));
  return new RegExp(`^${parts.join("")}$`).test(file);
};

const kinds = ["ApiDefinition", "OAuthClient", "OrgKey", "ClientType", "ApiProduct", "PortalWebhook", "DashboardWebhook", "LlmSettings"];

describe("gatesync init", () => {
  it("scaffolds a repository that validates as generated, one example per kind with the editor modeline", async () => {
    const dir = await tempRepo();
    const r = await runCli(["init", dir]);
    expect(r.code, r.stderr).toBe(0);
    const config = await readFile(path.join(dir, "gatesync.yaml"), "utf8");
    expect(config.split("\n")[0]).toMatch(/^# yaml-language-server: \$schema=\S+gatesync-config\.schema\.json$/);
    expect(config).toContain("credentialEnv: GW_ADMIN_KEY");
    expect(config).toMatch(/secrets:[\s\S]*env: \[\]/);
    const files = (await readdir(path.join(dir, "config"))).sort();
    expect(files).toHaveLength(8);
    const seen: string[] = [];
    for (const f of files) {
      const text = await readFile(path.join(dir, "config", f), "utf8");
      const schema = /^# yaml-language-server: \$schema=(\S+)\n/.exec(text)?.[1];
      expect(schema, f).toBeDefined();
      // the modeline resolves to this package's published schema
      expect(path.resolve(path.join(dir, "config"), schema ?? "")).toBe(path.join(projectRoot, "schemas/resource.schema.json"));
      seen.push(/^kind: (\w+)$/m.exec(text)?.[1] ?? "");
    }
    expect(seen.sort()).toEqual([...kinds].sort());
    expect(await readFile(path.join(dir, ".github/workflows/gatesync-plan.yaml"), "utf8")).toBe(
      await readFile(path.join(projectRoot, "examples/ci/github-actions-plan.yaml"), "utf8"),
    );

    const validated = await spawnCli(["validate"], { cwd: dir, env: { NO_COLOR: "1" } });
    expect(validated.stderr).toBe("");
    expect(validated.stdout).toContain("valid: 8 resources in 8 files");
    expect(validated.code).toBe(0);
  }, 60_000);

  it("keeps secret files, the local state and node_modules out of a `git add -A`", async () => {
    const dir = await tempRepo();
    expect((await runCli(["init", dir])).code).toBe(0);
    execFileSync("git", ["init", "-q"], { cwd: dir });
    await mkdir(path.join(dir, "node_modules/left-pad"), { recursive: true });
    await writeFile(path.join(dir, "node_modules/left-pad/index.js"), "module.exports = 1;\n");
    await writeFile(path.join(dir, "secrets/acme-hmac.txt"), "a-real-secret\n");
    await mkdir(path.join(dir, ".gatesync"), { recursive: true });
    await writeFile(path.join(dir, ".gatesync/state.db"), "state");
    await writeFile(path.join(dir, ".env"), "GW_ADMIN_KEY=k\n");
    execFileSync("git", ["add", "-A"], { cwd: dir });
    const staged = execFileSync("git", ["diff", "--cached", "--name-only"], { cwd: dir, encoding: "utf8" }).trim().split("\n");
    expect(staged).toContain("secrets/.gitkeep");
    expect(staged).toContain("gatesync.yaml");
    expect(staged.filter((f) => f.startsWith("node_modules/") || f.startsWith(".gatesync/") || f === ".env" || f === "secrets/acme-hmac.txt")).toEqual([]);
  });

  it("commits the SOPS-encrypted files below secrets/ (any depth) with a `git add -A`, and no plaintext file beside them", async () => {
    const dir = await tempRepo();
    expect((await runCli(["init", dir])).code).toBe(0);
    execFileSync("git", ["init", "-q"], { cwd: dir });
    const { recipient } = ageIdentity();
    await mkdir(path.join(dir, "secrets/staging/eu"), { recursive: true });
    const encrypted = ["secrets/app.enc.yaml", "secrets/staging/app.enc.yaml", "secrets/staging/eu/oauth.enc.json", "secrets/staging/db.enc.yml"];
    for (const f of encrypted) await writeFile(path.join(dir, f), sopsYaml({ hmac: "an-encrypted-value" }, recipient));
    const plaintext = ["secrets/acme-hmac.txt", "secrets/staging/app.yaml", "secrets/staging/eu/token", "secrets/staging/app.enc.yaml.bak"];
    for (const f of plaintext) await writeFile(path.join(dir, f), "a-real-secret\n");
    execFileSync("git", ["add", "-A"], { cwd: dir });
    const staged = execFileSync("git", ["diff", "--cached", "--name-only"], { cwd: dir, encoding: "utf8" }).trim().split("\n");
    expect(staged.filter((f) => f.startsWith("secrets/")).sort()).toEqual([...encrypted, "secrets/.gitkeep"].sort());
  });

  it("writes CI jobs that run for a merge request changing only a SOPS file, as for every other path a plan reads", async () => {
    const dir = await tempRepo();
    expect((await runCli(["init", dir])).code).toBe(0);
    const github = parseYaml(await readFile(path.join(dir, ".github/workflows/gatesync-plan.yaml"), "utf8")) as { on: { pull_request: { paths: string[] } } };
    const gitlab = parseYaml(await readFile(path.join(projectRoot, "examples/ci/gitlab-ci-plan.yaml"), "utf8")) as Record<
      string,
      { rules?: Array<{ changes?: string[] }> }
    >;
    const gitlabChanges = Object.values(gitlab).flatMap((job) => job.rules?.flatMap((r) => r.changes ?? []) ?? []);
    // what a plan of the scaffold reads: resources, settings, overlays, rulesets, SOPS files
    const read = [
      "secrets/staging/app.enc.yaml",
      "secrets/app.enc.json",
      "config/org-key.yaml",
      "gatesync.yaml",
      "overlays/staging.yaml",
      "rules/openapi.spectral.yaml",
    ];
    for (const [name, globs] of [
      ["github", github.on.pull_request.paths],
      ["gitlab", gitlabChanges],
    ] as const) {
      for (const f of read)
        expect(
          globs.some((g) => globTakes(g, f)),
          `${name}: ${f}`,
        ).toBe(true);
      expect(
        globs.some((g) => globTakes(g, "README.md")),
        `${name}: README.md`,
      ).toBe(false);
    }
  });

  it("with gatesync installed from a path (`npm install file:…`), points the modelines into node_modules, inside the repository", async () => {
    const dir = await tempRepo();
    await mkdir(path.join(dir, "node_modules"), { recursive: true });
    // what `npm install file:../gatesync` makes: a link to the package's directory elsewhere
    await symlink(projectRoot, path.join(dir, "node_modules/gatesync"), "dir");
    const r = await spawnCli(["init", "."], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    const text = await readFile(path.join(dir, "config/org-key.yaml"), "utf8");
    expect(text.split("\n")[0]).toBe("# yaml-language-server: $schema=../node_modules/gatesync/schemas/resource.schema.json");
    expect((await readFile(path.join(dir, "gatesync.yaml"), "utf8")).split("\n")[0]).toBe(
      "# yaml-language-server: $schema=node_modules/gatesync/schemas/gatesync-config.schema.json",
    );
  });

  it("refuses to overwrite existing files, naming them, unless --force", async () => {
    const dir = await tempRepo({ "gatesync.yaml": "# mine\n", "config/org-key.yaml": "# mine too\n" });
    const r = await runCli(["init", dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error\[USAGE\] init would overwrite .*gatesync\.yaml, .*config\/org-key\.yaml: move them away or pass --force/);
    expect(await readFile(path.join(dir, "gatesync.yaml"), "utf8")).toBe("# mine\n");
    expect(await readdir(path.join(dir, "config"))).toEqual(["org-key.yaml"]);

    const forced = await runCli(["init", dir, "--force"]);
    expect(forced.code, forced.stderr).toBe(0);
    expect(await readFile(path.join(dir, "gatesync.yaml"), "utf8")).toContain("kind: GatesyncConfig");
  });
});
