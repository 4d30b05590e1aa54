import { cp, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, spawnCli } from "../helpers/cli.js";
import { projectRoot, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

describe("gatesync --version", () => {
  it("prints the package's version and exits 0", async () => {
    const pkg = JSON.parse(await readFile(path.join(projectRoot, "package.json"), "utf8")) as { version: string };
    const r = await runCli(["--version"]);
    expect(r).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: "" });
  });
});

describe("gatesync validate", () => {
  it("exits 1 with a clear error, not an internal one, when the directory is missing or a file", async () => {
    const dir = await tempRepo({ "a.yaml": "x: 1\n" });
    const missing = await runCli(["validate", path.join(dir, "no-such-dir")]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`error[FILE_READ] the resource directory ${path.join(dir, "no-such-dir")} does not exist`);
    const file = await runCli(["validate", path.join(dir, "a.yaml")]);
    expect(file.code).toBe(1);
    expect(file.stderr).toMatch(/error\[FILE_READ\] .*a\.yaml is a file, not a directory of resource files/);
    const plan = await runCli(["plan", "--config", path.join(projectRoot, "examples/gatesync.yaml"), "--dir", path.join(dir, "no-such-dir")]);
    expect(plan.code).toBe(1);
    expect(plan.stderr).toContain("error[FILE_READ] the resource directory");
  });

  it("exits 0 on the examples, as a real process", async () => {
    const r = await spawnCli(["validate", "examples/config"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^valid: 17 resources in \d+ files/m);
  });

  it("exits 1 and lists each error with file:line:column when invalid", async () => {
    const dir = await tempRepo();
    await cp(path.join(projectRoot, "examples/config"), dir, { recursive: true });
    const file = path.join(dir, "portal/webhooks.yaml");
    await writeFile(file, (await readFile(file, "utf8")).replace("Timeout: 10", "Timeout: ten"));
    const r = await spawnCli(["validate", dir]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("error[SCHEMA_VIOLATION] portal/webhooks.yaml:10:12 PortalWebhook/access-approvals spec.Timeout: must be integer, not string");
    expect(r.stdout).toMatch(/invalid: 1 error\(s\)/);
  });

  it("writes JSON for machines", async () => {
    const dir = await tempRepo({ "k.yaml": "apiVersion: gatesync.dev/v1\nkind: OrgKey\nmetadata: { name: k }\nspec: { keyId: k, rate: x }\n" });
    const r = await runCli(["validate", dir, "--format", "json"]);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as { valid: boolean; errors: number; diagnostics: Array<Record<string, unknown>> };
    expect(report).toMatchObject({ valid: false, errors: 1, warnings: 0, resources: 0, files: 1 });
    expect(report.diagnostics[0]).toMatchObject({ code: "SCHEMA_VIOLATION", file: "k.yaml", line: 4, path: "spec.rate", resource: "OrgKey/k" });
  });

  it("uses the config's settings: app-type providers and the secrets directory", async () => {
    const r = await runCli(["validate", "--config", path.join(projectRoot, "examples/gatesync.yaml")], {});
    expect(r.code).toBe(0);
    // the ${file:} secret resolves inside examples/secrets, the ${env:} ones are named in one notice
    expect(r.stdout).not.toContain("acme-hmac.txt");
    expect(r.stdout).toContain("info[SECRET_UNRESOLVED] 3 secret reference(s) cannot be resolved here (${env:CHAT_WEBHOOK_TOKEN}, ");
  });

  it("reports a broken config with its position and exits 1", async () => {
    const dir = await tempRepo({
      "gatesync.yaml": "apiVersion: gatesync.dev/v1\nkind: GatesyncConfig\nsource: { directory: . }\ntargets:\n  gateway: { url: ftp://x, credentialEnv: K }\n",
    });
    const r = await runCli(["validate", "--config", path.join(dir, "gatesync.yaml")]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('gatesync.yaml:5:19 targets.gateway.url: "ftp://x": must be an http(s) URL');
  });

  it("exits 1 with a clear message for a missing directory or bad option", async () => {
    const missing = await runCli(["validate", "/nonexistent/dir"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/nonexistent/);
    const bad = await runCli(["validate", "--format", "xml", "."]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/Allowed choices are text, json/);
  });
});
