/**
 * `gatesync import` on written sources (README.md: where each fact of the formats comes from):
 * a sync-tool dump with its index (either spelling) and without, hostile names, a 10,000-deep
 * file, an oversized file, duplicate ids, the operator's manifests with a missing ConfigMap key,
 * byte-identical output, a second --merge that changes nothing, and SOPS output the `age` CLI
 * and gatesync's reader decrypt. No secret value is printed or written in clear.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, readdir, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createDecipheriv } from "node:crypto";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { ageIdentity } from "../helpers/sops-file.js";

const oas = (id: string, name: string): object => ({
  oas: {
    openapi: "3.0.3",
    info: { title: name, version: "1.0.0" },
    paths: {},
    "x-tyk-api-gateway": {
      info: { id, name, state: { active: true } },
      upstream: { url: "http://up.internal" },
      server: { listenPath: { value: `/${id}/`, strip: true } },
    },
  },
  categories: ["c"],
  user_owners: [],
});

async function dump(index: object | undefined, files: Record<string, unknown>, indexName = ".tyk.json"): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "gatesync-dump-"));
  if (index !== undefined) await writeFile(path.join(dir, indexName), JSON.stringify(index));
  for (const [f, v] of Object.entries(files)) await writeFile(path.join(dir, f), typeof v === "string" ? v : JSON.stringify(v));
  return dir;
}

async function tree(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (e.isFile()) out[path.relative(dir, path.join(e.parentPath, e.name))] = await readFile(path.join(e.parentPath, e.name), "utf8");
  }
  return out;
}

const out = async (): Promise<string> => path.join(await mkdtemp(path.join(tmpdir(), "gatesync-import-")), "repo");

describe("gatesync import from a sync-tool dump", () => {
  it("imports OAS files with the index's overrides (both spellings of the index), reports classic APIs and policies, and writes the same bytes twice", async () => {
    for (const indexName of [".tyk.json", ".gw.json"]) {
      const d = await dump(
        {
          files: [
            { file: "oas-a1.json", api_id: "a1", oas: { override_listen_path: "/over/", override_target: "http://other.internal" } },
            { file: "api-old.json" },
          ],
          policies: [{ file: "policy-p.json" }],
          assets: [],
        },
        { "oas-a1.json": oas("ignored-id", "Alpha"), "api-old.json": { api_definition: { api_id: "old" } } },
        indexName,
      );
      const [o1, o2] = [await out(), await out()];
      const r = await runCli(["import", o1, "--sync-dump", d]);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toContain("as ApiDefinition/alpha (by its id)");
      expect(r.stdout).toMatch(/classic API definition "old".*\n.*\/api\/apis\/migrate" .*"mode":"dryRun"/);
      expect(r.stdout).toContain("a security policy: outside gatesync's kinds");
      const files = await tree(o1);
      const doc = JSON.parse(files["config/api-definitions/alpha.openapi.json"]!) as Record<string, Record<string, Record<string, unknown>>>;
      expect(doc["x-gw-api-gateway"]!.info).toMatchObject({ id: "a1" });
      expect(doc["x-gw-api-gateway"]!.server).toMatchObject({ listenPath: { value: "/over/", strip: true } });
      expect(files["config/api-definitions/alpha.yaml"]).toContain("apiId: a1");
      await runCli(["import", o2, "--sync-dump", d]);
      expect(await tree(o2)).toEqual(files);
      const v = await runCli(["validate", path.join(o1, "config")]);
      expect(v.code, v.stdout).toBe(0);
    }
  });

  it("drops a document gatesync's validator refuses, reported with the finding located in the file it would have written", async () => {
    const bad = oas("b1", "Broken") as { oas: { "x-tyk-api-gateway": { upstream: { url: unknown } } } };
    bad.oas["x-tyk-api-gateway"].upstream.url = 42;
    const d = await dump({ files: [{ file: "oas-b1.json" }, { file: "oas-g1.json" }] }, { "oas-b1.json": bad, "oas-g1.json": oas("g1", "Good") });
    const o = await out();
    const r = await runCli(["import", o, "--sync-dump", d]);
    expect(r.stdout).toMatch(/oas-b1.json.*: not valid as ApiDefinition: [A-Z_]+ api-definitions\/broken.openapi.json:\d+:\d+: /);
    const files = Object.keys(await tree(o)).filter((f) => f.startsWith("config/"));
    expect(files.sort()).toEqual(["config/api-definitions/good.openapi.json", "config/api-definitions/good.yaml"]);
    // what the import reported is what validate says of the same document written out
    const v = await runCli(["validate", path.join(o, "config")]);
    expect(v.code, v.stdout).toBe(0);
  });

  it("imports a dump whose index is lost, by the files' names", async () => {
    const d = await dump(undefined, { "oas-b2.json": oas("b2", "Beta") });
    const r = await runCli(["import", await out(), "--sync-dump", d]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("no index");
    expect(r.stdout).toContain("as ApiDefinition/beta");
  });

  it("refuses hostile input, each a located error, writing nothing outside the target", async () => {
    const outside = await mkdtemp(path.join(tmpdir(), "gatesync-outside-"));
    await writeFile(path.join(outside, "secret.json"), JSON.stringify(oas("x", "X")));
    const deep = "[".repeat(10_000) + "]".repeat(10_000);
    const d = await dump(
      {
        files: [
          { file: "../outside.json" },
          { file: "/etc/passwd" },
          { file: "link.json" },
          { file: "deep.json" },
          { file: "big.json" },
          { file: "oas-c.json" },
          { file: "oas-c2.json" },
        ],
      },
      { "deep.json": deep, "big.json": "x".repeat(40_000), "oas-c.json": oas("c", "C"), "oas-c2.json": oas("c", "C again") },
    );
    await symlink(path.join(outside, "secret.json"), path.join(d, "link.json"));
    const o = await out();
    const r = await runCli(["import", o, "--sync-dump", d, "--max-file-bytes", "30000"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('/files/0: ../outside.json: file name "../outside.json" leads outside the source');
    expect(r.stdout).toContain('/files/1: /etc/passwd: file name "/etc/passwd" is not a relative name');
    expect(r.stdout).toContain('link.json" is a link to outside the source');
    expect(r.stdout).toContain("JSON is nested more than 128 deep");
    expect(r.stdout).toMatch(/big.json: file is 40000 bytes, more than the 30000/);
    expect(r.stdout).toContain("duplicate id: api:c is also at");
    expect(Object.keys(await tree(o)).filter((f) => f.startsWith("config/"))).toEqual([
      "config/api-definitions/c.openapi.json",
      "config/api-definitions/c.yaml",
    ]);
    expect((await readdir(path.dirname(o))).sort()).toEqual(["repo"]);
  });
});

describe("gatesync import from the operator's manifests and saved answers", () => {
  it("reads the document from the ConfigMap key; a missing key is a located error", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "gatesync-operator-"));
    const doc = JSON.stringify((oas("op1", "Operated") as { oas: object }).oas);
    await writeFile(
      path.join(dir, "manifests.yaml"),
      `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: cm, namespace: default }\ndata:\n  oas.json: '${doc}'\n---\napiVersion: tyk.tyk.io/v1alpha1\nkind: TykOasApiDefinition\nmetadata: { name: operated }\nspec:\n  tykOAS:\n    configmapRef: { name: cm, namespace: default, keyName: oas.json }\n---\napiVersion: tyk.tyk.io/v1alpha1\nkind: TykOasApiDefinition\nmetadata: { name: broken }\nspec:\n  tykOAS:\n    configmapRef: { name: cm, keyName: missing.json }\n---\napiVersion: tyk.tyk.io/v1alpha1\nkind: SecurityPolicy\nmetadata: { name: gold }\n`,
    );
    const r = await runCli(["import", await out(), "--operator", path.join(dir, "manifests.yaml")]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/document 2 \(line \d+\) as ApiDefinition\/operated/);
    expect(r.stdout).toMatch(/document 3 \(line \d+\): broken: ConfigMap default\/cm has no key "missing.json"/);
    expect(r.stdout).toContain("gold: a security policy");
  });

  it("a saved answer of a foreign shape is a located error; secrets become references, in .env.example by name only", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "gatesync-answers-"));
    await writeFile(path.join(dir, "products.json"), JSON.stringify({ not: "a list" }));
    await writeFile(path.join(dir, "portal-webhooks.json"), "[leaked-token-value]");
    await writeFile(
      path.join(dir, "org-key-acme.json"),
      JSON.stringify({
        org_id: "acme",
        rate: 1,
        per: 1,
        hmac_enabled: true,
        hmac_string: "very-secret-hmac",
        basic_auth_data: { password: "pw-secret", hash_type: "" },
      }),
    );
    const o = await out();
    const r = await runCli(["import", o, "--answers", dir]);
    expect(r.stdout).toMatch(/products.json: not the answer the portal's products \(GET \/products\) gives: expected a JSON list/);
    const files = await tree(o);
    const all = Object.values(files).join("\n") + r.stdout;
    expect(all).not.toContain("very-secret-hmac");
    expect(all).not.toContain("pw-secret");
    expect(all).not.toContain("leaked-token-value");
    expect(r.stdout).toMatch(/portal-webhooks.json: not JSON/);
    expect(files["config/org-keys/acme.yaml"]).toContain("hmac_string: ${env:ORG_KEY_ACME_HMAC_STRING}");
    expect(files[".env.example"]).toContain("ORG_KEY_ACME_BASIC_AUTH_DATA_PASSWORD=\n");
  });

  it("products of the list answer take the API provider from --product-provider or the portal's only one; else one located error whose hint, followed, imports them", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "gatesync-answers-"));
    // GET /products (Product-index: no ProviderID); a product's read answer (GET /products/{id}) carries its own
    const products = [
      { ID: 1, Name: "gold", DisplayName: "Gold", APIDetails: [{ APIID: "a1" }], Catalogues: [1] },
      { ID: 2, Name: "silver", DisplayName: "Silver", Catalogues: [1] },
      { ID: 3, Name: "bronze", DisplayName: "Bronze", ProviderID: 7, Catalogues: [1] },
    ];
    await writeFile(path.join(dir, "products.json"), JSON.stringify(products));
    const none = await runCli(["import", await out(), "--answers", dir]);
    expect(none.code).toBe(1);
    expect(none.stdout).toMatch(
      /\n {2}error \S+\/products.json: 2 product\(s\) \(\/0, \/1\) carry no ProviderID \(the list answer has none\): no --product-provider is given and there is no providers.json\n/,
    );
    expect(none.stdout).toContain("hint: pass --product-provider ID (the portal's API providers: GET /providers), or save that answer as providers.json");
    expect(none.stdout).toContain("as ApiProduct/bronze");
    expect(none.stdout).not.toContain("as ApiProduct/gold");

    // the hint followed: the portal's one provider saved as providers.json (Provider-index)
    await writeFile(path.join(dir, "providers.json"), JSON.stringify([{ ID: 4, Name: "main", Type: "tyk-pro", Status: "Synced" }]));
    const o = await out();
    const one = await runCli(["import", o, "--answers", dir]);
    expect(one.code, one.stdout).toBe(0);
    const files = await tree(o);
    expect(files["config/api-products/gold.yaml"]).toContain("ProviderID: 4");
    expect(files["config/api-products/bronze.yaml"]).toContain("ProviderID: 7");

    await writeFile(path.join(dir, "providers.json"), JSON.stringify([{ ID: 4 }, { ID: 5 }]));
    const two = await runCli(["import", await out(), "--answers", dir]);
    expect(two.stdout).toContain("2 product(s) (/0, /1) carry no ProviderID (the list answer has none): providers.json lists 2 API providers (4, 5)");
    // the other way the hint gives
    const o2 = await out();
    const flag = await runCli(["import", o2, "--answers", dir, "--product-provider", "5"]);
    expect(flag.code, flag.stdout).toBe(0);
    expect((await tree(o2))["config/api-products/silver.yaml"]).toContain("ProviderID: 5");
  });

  it("with --encrypt-to, one SOPS file per environment that the age CLI and gatesync's reader decrypt; --merge twice changes nothing", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "gatesync-answers-"));
    await writeFile(
      path.join(dir, "org-key-acme.json"),
      JSON.stringify({ org_id: "acme", rate: 1, per: 1, hmac_enabled: true, hmac_string: "very-secret-hmac" }),
    );
    const id = ageIdentity();
    const o = await out();
    const r = await runCli(["import", o, "--answers", dir, "--encrypt-to", id.recipient, "--environment", "production"]);
    expect(r.code, r.stdout).toBe(0);
    const files = await tree(o);
    const sops = files["secrets/production/imported.enc.yaml"]!;
    expect(sops).not.toContain("very-secret-hmac");
    expect(files["config/org-keys/acme.yaml"]).toContain("${sops:production/imported.enc.yaml#ORG_KEY_ACME_HMAC_STRING}");
    // the age CLI unwraps the data key; the value decrypts with it (AES-256-GCM, its key path as additional data)
    const armored = /enc: \|\n((?: {16}.*\n)+)/.exec(sops)![1]!.replace(/^ {16}/gm, "");
    const keyFile = path.join(dir, "key.txt");
    await writeFile(keyFile, `${id.secret}\n`);
    const dataKey = execFileSync("age", ["-d", "-i", keyFile], { input: armored });
    const m = /ORG_KEY_ACME_HMAC_STRING: ENC\[AES256_GCM,data:([^,]+),iv:([^,]+),tag:([^,]+),type:str\]/.exec(sops)!;
    const d = createDecipheriv("aes-256-gcm", dataKey, Buffer.from(m[2]!, "base64"));
    d.setAAD(Buffer.from("ORG_KEY_ACME_HMAC_STRING:"));
    d.setAuthTag(Buffer.from(m[3]!, "base64"));
    expect(Buffer.concat([d.update(Buffer.from(m[1]!, "base64")), d.final()]).toString()).toBe("very-secret-hmac");
    // gatesync's own reader: validate resolves the reference through the SOPS file (MAC checked)
    const v = await runCli(["validate", "--config", path.join(o, "gatesync.yaml")], { SOPS_AGE_KEY: id.secret });
    expect(v.stdout + v.stderr).not.toMatch(/SOPS_|error/);
    expect(v.code).toBe(0);

    // the same import again, encrypted: the SOPS file decrypts (the user's identity) to the same values for the same recipient — kept, byte for byte
    const encrypted = ["import", o, "--merge", "--answers", dir, "--encrypt-to", id.recipient, "--environment", "production"];
    const again = await runCli(encrypted, { SOPS_AGE_KEY: id.secret });
    expect(again.code, again.stdout).toBe(0);
    expect(again.stdout).toMatch(/files: 0 written, \d+ unchanged/);
    expect((await tree(o))["secrets/production/imported.enc.yaml"]).toBe(sops);
    // without an identity the values cannot be compared: written again, and said
    const blind = await runCli(encrypted, { SOPS_AGE_KEY: undefined, SOPS_AGE_KEY_FILE: path.join(dir, "no-such-key.txt") });
    expect(blind.stdout).toMatch(
      /files: 1 written, \d+ unchanged\nnote: secrets\/production\/imported.enc.yaml written again: its values cannot be decrypted here/,
    );
    // a changed value, or another recipient: written again
    await writeFile(path.join(dir, "org-key-acme.json"), JSON.stringify({ org_id: "acme", rate: 1, per: 1, hmac_enabled: true, hmac_string: "rotated-hmac" }));
    const rotated = await runCli(encrypted, { SOPS_AGE_KEY: id.secret });
    expect(rotated.stdout).toMatch(/files: 1 written, \d+ unchanged\n(?!note)/);
    const other = ageIdentity();
    const more = await runCli([...encrypted, "--encrypt-to", other.recipient], { SOPS_AGE_KEY: id.secret });
    expect(more.stdout).toMatch(/files: 1 written/);
    expect((await tree(o))["secrets/production/imported.enc.yaml"]).toContain(other.recipient);

    await runCli(["import", o, "--merge", "--answers", dir]);
    const third = await runCli(["import", o, "--merge", "--answers", dir]);
    expect(third.stdout).toMatch(/files: 0 written, \d+ unchanged/);
  });
});
