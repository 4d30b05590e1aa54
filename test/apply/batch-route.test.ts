/**
 * The batch route's two forms: production registers `{listen_path}/gw/batch/` with its
 * trailing slash; a gateway that answers that form as "not processed" (404 here) gets the
 * form without the slash, once, and batching goes on there with one warning naming the form
 * that answered. When neither form takes the batch, the caller is told to send directly.
 */
import { Writable } from "node:stream";
import pino from "pino";
import { Agent } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { BatchSender, relativeUrl } from "../../src/apply/batch/batch.js";
import { InterfaceClient } from "../../src/apply/http-client.js";
import { InterfaceQueue } from "../../src/apply/pace/queues.js";
import type { Logger } from "../../src/logger.js";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import type { MisbehavingProxy, Rule } from "../helpers/misbehaving-proxy.js";
import { misbehavingProxy } from "../helpers/misbehaving-proxy.js";
import { testCredentials, testSandbox } from "../helpers/sandbox.js";

let sb: SandboxHandle | undefined;
let proxy: MisbehavingProxy | undefined;
const agent = new Agent({ keepAliveTimeout: 1000 });
afterEach(async () => {
  await proxy?.stop();
  await sb?.stop();
  sb = proxy = undefined;
});

function capture(): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: "warn" }, stream), lines };
}

async function sender(rules: Rule[]): Promise<{ batch: BatchSender; lines: Array<Record<string, unknown>> }> {
  sb = await testSandbox();
  proxy = await misbehavingProxy(sb.urls.base, rules);
  const { logger, lines } = capture();
  const client = new InterfaceClient({
    name: "gateway",
    baseUrl: proxy.url,
    auth: { header: "x-gw-authorization", value: testCredentials.gatewayKey },
    dispatcher: agent,
    timeoutMs: 5000,
    maxResponseBytes: 1024 * 1024,
  });
  const queue = new InterfaceQueue("gateway", { concurrency: 2, requestsPerSecond: 1000 }, logger);
  const batch = new BatchSender(
    client,
    queue,
    { listenPath: "/gw-batch/", loopbackKey: "sandbox-loopback-key", adminKey: testCredentials.gatewayKey, maxSize: 50, routeForms: [true, false] },
    logger,
  );
  return { batch, lines };
}

const items = (names: string[]) =>
  names.map((n) => ({ id: `OrgKey/${n}`, method: "POST", relativeUrl: relativeUrl(`/gw/org/keys/${n}`), body: JSON.stringify({ rate: 1 }) }));

describe("the batch route's forms", () => {
  it("tries the slash-less form once when the trailing-slash form is not processed, then batches there with one warning", async () => {
    // a gateway that answers only the form without the slash (the proxy hands that form to the
    // sandbox's route, which has the slash as production's does)
    const { batch, lines } = await sender([
      { method: "POST", path: /\/gw\/batch\/$/, then: { kind: "answer", status: 404, body: '{"error":"Not Found"}' } },
      { method: "POST", path: /\/gw-batch\/gw\/batch$/, then: { kind: "rewrite", path: "/gw-batch/gw/batch/" } },
    ]);
    const first = await batch.send(items(["a", "b"]));
    const second = await batch.send(items(["c"]));
    for (const r of [first, second]) expect(r.kind).toBe("results");
    if (first.kind === "results") expect([...first.outcomes.values()].map((o) => (o.kind === "answered" ? o.status : o.kind))).toEqual([200, 200]);
    expect(sb!.inspect.store.orgKeys.size).toBe(3);
    expect(proxy!.calls.map((c) => c.path)).toEqual(["/gw-batch/gw/batch/", "/gw-batch/gw/batch", "/gw-batch/gw/batch"]);
    expect(batch.routeNote).toMatch(/answered only without its trailing slash \(\/gw-batch\/gw\/batch\)/);
    expect(lines.filter((l) => l.level === 40).map((l) => [l.msg, l.route])).toEqual([
      ["batch route answered only without its trailing slash: batching continues there", "/gw-batch/gw/batch"],
    ]);
  });

  it("says 'unavailable', naming both forms, when neither takes the batch; sends nothing else", async () => {
    const { batch } = await sender([{ method: "POST", path: /\/gw\/batch\/?$/, then: { kind: "answer", status: 403, body: '{"error":"Access denied"}' } }]);
    const result = await batch.send(items(["a"]));
    expect(result).toEqual({ kind: "unavailable", why: "the batch route /gw-batch/gw/batch/ answered 403; the batch route /gw-batch/gw/batch answered 403" });
    expect(await batch.send(items(["b"]))).toMatchObject({ kind: "unavailable" });
    expect(proxy!.calls).toHaveLength(2);
    expect(sb!.inspect.store.orgKeys.size).toBe(0);
  });

  it("never starts a relative_url with a slash", () => {
    expect(relativeUrl("/gw/org/keys/k?reset_quota=1")).toBe("org/keys/k?reset_quota=1");
    expect(relativeUrl("/gw//apis/oas/x")).toBe("apis/oas/x");
  });
});
