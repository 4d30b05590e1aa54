/**
 * Issue 30's proof: the exact requests gatesync sends for the examples — recorded on the wire by
 * a proxy between gatesync and the sandbox — validate against the production gateway's published
 * schemas (the copies in test/fixtures/shared/reference/published): each operation 1 body against
 * the OpenAPI schema merged with the `x-gw-api-gateway` schema, each operation 7 body against
 * the organisation-key session; every LLM call carries `Bearer <key>`; and the copies of the
 * published schemas gatesync and its sandbox carry are the published ones.
 */
import { readFile, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { request } from "undici";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { missingSessionMembers, publishedCopies } from "../../scripts/check-published.js";
import type { Harness } from "../helpers/apply.js";
import { harness } from "../helpers/apply.js";
import { mergedValidator, sessionValidator } from "../helpers/published-schemas.js";
import { testCredentials } from "../helpers/sandbox.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

interface Recorded {
  readonly method: string;
  readonly path: string;
  readonly authorization: string | undefined;
  readonly body: string;
}

/** An HTTP proxy to `target` that records every request it forwards. */
async function recordingProxy(target: string): Promise<{ url: string; recorded: Recorded[]; stop(): Promise<void> }> {
  const recorded: Recorded[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      recorded.push({ method: req.method ?? "", path: req.url ?? "", authorization: req.headers.authorization, body: body.toString("utf8") });
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !["host", "connection", "content-length"].includes(k))) as Record<
        string,
        string
      >;
      request(`${target}${req.url ?? ""}`, { method: (req.method ?? "GET") as "GET", headers, body: body.length === 0 ? null : body })
        .then(async (answer) => {
          const text = await answer.body.text();
          res.writeHead(answer.statusCode, { "content-type": String(answer.headers["content-type"] ?? "application/json") });
          res.end(text);
        })
        .catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, recorded, stop: () => new Promise((resolve) => server.close(() => resolve())) };
}

afterAll(removeTempRepos);
let h: Harness | undefined;
let proxies: Array<{ stop(): Promise<void> }> = [];
afterEach(async () => {
  for (const p of proxies) await p.stop();
  proxies = [];
  await h?.stop();
  h = undefined;
});

describe("what gatesync sends for the examples", () => {
  it("validates against the published schemas, request by request", async () => {
    h = await harness({ batch: false });
    const [gateway, llm] = [await recordingProxy(h.sandbox.urls.gateway), await recordingProxy(h.sandbox.urls.llm)];
    proxies = [gateway, llm];
    const file = path.join(h.dir, "gatesync.yaml");
    const text = await readFile(file, "utf8");
    await writeFile(
      file,
      text
        .replace(`    url: ${h.sandbox.urls.gateway}\n`, `    url: ${gateway.url}\n`)
        .replace(`llm: { url: ${h.sandbox.urls.llm},`, `llm: { url: ${llm.url},`),
    );
    const { summary } = await h.apply();
    expect(summary.failed).toEqual([]);

    const apis = gateway.recorded.filter((r) => r.method === "PATCH" && r.path.startsWith("/gw/apis/oas/"));
    const keys = gateway.recorded.filter((r) => r.method === "POST" && r.path.startsWith("/gw/org/keys/"));
    expect([...new Set(apis.map((r) => r.path.split("?")[0]))].sort()).toEqual([
      "/gw/apis/oas/orders-api",
      "/gw/apis/oas/petstore-v1",
      "/gw/apis/oas/uspto-datasets",
    ]);
    expect([...new Set(keys.map((r) => r.path.split("?")[0]))].sort()).toEqual(["/gw/org/keys/acme", "/gw/org/keys/globex"]);
    for (const r of apis) {
      const body = parse(r.body) as Record<string, unknown>;
      const validate = mergedValidator(String(body.openapi));
      expect(validate(body), `${r.path}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
    const session = sessionValidator();
    for (const r of keys) {
      const body = JSON.parse(r.body) as Record<string, unknown>;
      expect(session(body), `${r.path}: ${JSON.stringify(session.errors)}`).toBe(true);
      expect(body.org_id).toBe(r.path.split("?")[0]!.split("/").pop());
    }
    expect(llm.recorded.length).toBeGreaterThan(0);
    for (const r of llm.recorded) expect(r.authorization).toBe(`Bearer ${testCredentials.llmKey}`);
  });

  it("the published-session validator used above refuses what production refuses (it is no blanket pass)", () => {
    const session = sessionValidator();
    expect(session({ oauth_keys: { a: 1 } })).toBe(false);
    expect(session({ post_expiry_action: "forget" })).toBe(false);
    expect(session({ access_rights: { a: { allowed_urls: null, versions: null, json_rpc_methods: [] } }, tags: null, apply_policies: null })).toBe(true);
    const merged = mergedValidator("3.0.3");
    const doc = { openapi: "3.0.3", info: { title: "t", version: "1" }, paths: {} };
    expect(merged({ ...doc, "x-gw-api-gateway": { info: { id: "a", state: { active: false } } } })).toBe(false);
    expect(
      merged({
        ...doc,
        "x-gw-api-gateway": { info: { id: "a", name: "A", state: { active: false } }, upstream: { url: "http://u" }, server: { listenPath: { value: "/a/" } } },
      }),
    ).toBe(true);
    expect(
      mergedValidator("3.1.0")({
        ...doc,
        openapi: "3.1.0",
        "x-gw-api-gateway": { info: { name: "A", state: {} }, upstream: {}, server: { listenPath: { value: "/" } } },
      }),
    ).toBe(false);
  });
});

describe("the copies of the published schemas", () => {
  it("that gatesync (schemas/published) and its sandbox (src/sandbox/published) carry are the published ones", async () => {
    const copies = await publishedCopies();
    expect(copies.length).toBeGreaterThanOrEqual(2);
    for (const c of copies) expect(c.same, `${c.copy} differs from ${c.published}: run scripts/check-published.ts --write`).toBe(true);
  });

  it("leave no member of the published session out of gatesync's OrgKey schema", async () => {
    expect(await missingSessionMembers()).toEqual([]);
  });
});
