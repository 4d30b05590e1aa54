/**
 * The round trip against the sandbox over real HTTP: objects made in the sandbox (its fixtures'
 * APIs, OAuth clients and client types; a product, a portal webhook, a dashboard hook, LLM
 * settings and an org key created through the interfaces), their answers saved in the shapes
 * the services' list and read endpoints give (README.md), imported with `gatesync import
 * --merge`, validated clean; the first plan adopts or updates in place and creates nothing, the
 * apply leaves the sandbox's object counts as they were, and a second plan is empty.
 */
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { Harness } from "../helpers/apply.js";
import { harness } from "../helpers/apply.js";
import { runCli } from "../helpers/cli.js";
import { call, dash, gw, llm, portal } from "../helpers/sandbox.js";
import { removeTempRepos } from "../helpers/temp-repo.js";
import { savedAnswers } from "./import-fixtures.js";

afterAll(removeTempRepos);
let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const counts = (h: Harness): Record<string, number> =>
  Object.fromEntries(Object.entries(h.sandbox.inspect.objects() as Record<string, unknown[]>).map(([k, v]) => [k, v.length]));

async function madeInSandbox(h: Harness): Promise<void> {
  const s = h.sandbox.urls;
  const made = [
    await call(`${s.portal}/products`, {
      method: "POST",
      headers: portal,
      body: { Name: "storefront", DisplayName: "Storefront", ProviderID: 1, IsDocumentationOnly: false },
    }),
    await call(`${s.portal}/webhooks`, {
      method: "POST",
      headers: portal,
      body: { Name: "CRM", URL: "https://crm.example.com/hook?token=sandbox-hook-token", Method: "POST", Timeout: 5, Events: ["UserRegistered"] },
    }),
    await call(`${s.llm}/llm-settings`, {
      method: "POST",
      headers: llm,
      body: { data: { type: "llm-settings", attributes: { model_name: "support-large", max_tokens: 512 } } },
    }),
    await call(`${s.dashboard}/api/hooks`, {
      method: "POST",
      headers: dash,
      body: { name: "alerts", method: "POST", target_path: "https://chat.example.com/alerts", header_map: { Authorization: "Bearer sandbox-chat-token" } },
    }),
    await call(`${s.gateway}/gw/org/keys/acme`, {
      method: "POST",
      headers: gw,
      body: { org_id: "acme", rate: 100, per: 60, hmac_enabled: true, hmac_string: "sandbox-hmac-secret-value" },
    }),
  ];
  expect(made.map((m) => m.status).every((st) => st >= 200 && st < 300)).toBe(true);
}

describe("gatesync import: the round trip against the sandbox", () => {
  it("imports what the sandbox holds; the first plan creates nothing, the apply creates nothing, the second plan is empty", async () => {
    h = await harness({ files: {} });
    await madeInSandbox(h);
    const answers = await mkdtemp(path.join(tmpdir(), "gatesync-answers-"));
    const { secrets } = await savedAnswers(h.sandbox.inspect.objects(), answers);
    const before = counts(h);

    const imported = await runCli(
      [
        "import",
        h.dir,
        "--merge",
        "--answers",
        path.join(answers, "answers"),
        "--product-provider",
        "1",
        "--dashboard-export",
        path.join(answers, "exports", "petstore-v1.json"),
        "--dashboard-export",
        path.join(answers, "exports", "orders-api.json"),
      ],
      h.env,
    );
    expect(imported.stderr).toBe("");
    expect(imported.code, imported.stdout).toBe(0);
    for (const value of secrets) expect(imported.stdout).not.toContain(value);
    expect(imported.stdout.split("\n").filter((l) => /^ {2}(skipped|error) /.test(l))).toEqual([]);

    // the variables the resources read, in gatesync.yaml's scope, with the values the services hold
    const names = (await readFile(path.join(h.dir, ".env.example"), "utf8")).split("\n").flatMap((l) => /^([A-Z0-9_]+)=$/.exec(l)?.[1] ?? []);
    expect(names.length).toBeGreaterThanOrEqual(4);
    const cfg = path.join(h.dir, "gatesync.yaml");
    await writeFile(
      cfg,
      (await readFile(cfg, "utf8")).replace("secrets: { fileRoot: ./secrets, env: [", `secrets: { fileRoot: ./secrets, env: [${names.join(", ")}, `),
    );
    const values = JSON.parse(await readFile(path.join(answers, "values.json"), "utf8")) as Record<string, string>;
    for (const n of names) h.env[n] = values[n] ?? "";
    expect(names.every((n) => (values[n] ?? "") !== "")).toBe(true);

    const validated = await runCli(["validate", "--config", cfg], h.env);
    expect(validated.stdout + validated.stderr).not.toMatch(/error/);
    expect(validated.code).toBe(0);

    const first = await h.plan();
    // the org key is annotated as existing at its own id: its upsert is an in-place update, nothing is created
    expect(first.changes.filter((c) => c.action === "create").map((c) => c.id)).toEqual([]);
    expect(first.summary.create).toBe(0);
    const key = first.changes.find((c) => c.id === "OrgKey/acme");
    expect([key?.action, key?.adopt?.serverId, key?.operation?.method, key?.operation?.path]).toEqual(["adopt", "acme", "POST", "/gw/org/keys/acme"]);
    const actions = new Set(first.changes.map((c) => c.action));
    expect(
      [...actions].every((a) => a === "adopt" || a === "update" || a === "no-op"),
      [...actions].join(),
    ).toBe(true);
    expect(
      first.changes
        .filter((c) => c.action === "update")
        .map((c) => c.id)
        .sort(),
    ).toEqual(expect.arrayContaining(["ApiDefinition/orders", "ApiDefinition/swagger-petstore"]));
    expect(
      first.changes
        .filter((c) => c.action === "adopt")
        .map((c) => c.id)
        .sort(),
    ).toEqual(["ApiProduct/storefront", "DashboardWebhook/alerts", "LlmSettings/support-large-3", "OrgKey/acme", "PortalWebhook/crm"]);
    await h.apply();
    expect(counts(h)).toEqual(before);
    const second = await h.plan();
    expect(second.changes.filter((c) => c.action !== "no-op").map((c) => `${c.id} ${c.action}`)).toEqual([]);
  }, 120_000);
});
