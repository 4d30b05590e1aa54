/**
 * Issue 30, point 6: production sets no limit on a management body, and real OpenAPI documents
 * run to 5–10 MB. The sandbox's limit is configurable and by default admits such a document,
 * sent directly (operation 1) and inside a batch (operation 4 through the loopback API).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { call, gw, testCredentials, testSandbox } from "../helpers/sandbox.js";

let sb: SandboxHandle | undefined;
afterEach(async () => {
  await sb?.stop();
  sb = undefined;
});

/** A valid OpenAPI document of about `mb` megabytes: many operations, long descriptions. */
function largeDocument(mb: number): string {
  const description = "A long description of this operation, as large public API descriptions have. ".repeat(25);
  const count = Math.ceil((mb * 1.1 * 1024 * 1024) / (description.length + 120));
  const paths = Object.fromEntries(
    Array.from({ length: count }, (_, i) => [`/items${i}`, { get: { operationId: `item${i}`, description, responses: { "200": { description: "ok" } } } }]),
  );
  return JSON.stringify({ openapi: "3.0.3", info: { title: "Large", version: "1" }, servers: [{ url: "http://large.internal" }], paths });
}

describe("the management body limit", () => {
  it("admits a 12 MB OpenAPI document by default, directly and inside a batch", async () => {
    sb = await testSandbox();
    const doc = largeDocument(12);
    expect(doc.length).toBeGreaterThan(12 * 1024 * 1024);
    expect((await call(`${sb.urls.gateway}/gw/apis/oas/petstore-v1`, { method: "PATCH", headers: gw, body: doc })).status).toBe(200);
    const batch = {
      requests: [
        {
          method: "PATCH",
          relative_url: "apis/oas/uspto-datasets",
          headers: { authorization: "sandbox-loopback-key", "x-gw-authorization": testCredentials.gatewayKey },
          body: doc,
        },
      ],
    };
    const answer = await call(`${sb.urls.base}/gw-batch/gw/batch/`, { method: "POST", body: batch });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject([{ relative_url: "apis/oas/uspto-datasets", code: 200 }]);
    expect(sb.inspect.store.apis.get("uspto-datasets")!.document).toMatchObject({ info: { title: "Large" } });
  }, 120_000);

  it("is configurable: beyond it, 413 in the gateway's error format", async () => {
    sb = await testSandbox({ maxBodyBytes: 1024 * 1024 });
    const answer = await call(`${sb.urls.gateway}/gw/apis/oas/petstore-v1`, { method: "PATCH", headers: gw, body: largeDocument(2) });
    expect(answer).toMatchObject({ status: 413, body: { status: "error" } });
  });
});
