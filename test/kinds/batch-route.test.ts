/**
 * Which listen paths and ids claim the batch route: every spelling the gateway's router would
 * take for the route's own path or one beneath it, and nothing else (a sibling that only shares
 * the route's first characters is another API's business).
 */
import { describe, expect, it } from "vitest";
import { batchRouteClaims, mayChangeBatchRoute, withinBatchRoute } from "../../src/kinds/batch-route.js";

const route = { listenPath: "/gw-batch/", setting: "targets.gateway.batch" };

describe("the batch route's listen paths", () => {
  it.each(["/gw-batch/", "/gw-batch", "gw-batch", " /gw-batch/ ", "//gw-batch//", "/gw-%62atch/", "/gw-batch/gw/", "/gw-batch/gw/batch/", "/gw-batch/apis"])(
    "%j is the route's or beneath it",
    (lp) => expect(withinBatchRoute(lp, route)).toBe(true),
  );

  it.each(["/", "", "/gw-batchy/", "/gw/", "/other/gw-batch/", "/GW-BATCH/"])("%j is not", (lp) => expect(withinBatchRoute(lp, route)).toBe(false));

  it("finds the claim in the query flag, in the extension, and by id once the id is configured", () => {
    const spec = {
      apiId: "gw-loopback",
      query: { listenPath: "/gw-batch/x" },
      definition: { "x-gw-api-gateway": { server: { listenPath: { value: "/gw-batch/" } } } },
    };
    expect(batchRouteClaims(spec, route).map((c) => c.path.join("."))).toEqual([
      "spec.query.listenPath",
      "spec.definition.x-gw-api-gateway.server.listenPath.value",
    ]);
    expect(batchRouteClaims(spec, { ...route, apiId: "gw-loopback" }).map((c) => c.path.join("."))[0]).toBe("spec.apiId");
  });

  it("claims the route for a listen path or an id given by a secret reference: what it resolves to is the commit's choice", () => {
    const claims = batchRouteClaims({ apiId: "${env:API}", query: { listenPath: "${file:lp.txt}" } }, route);
    expect(claims.map((c) => c.path.join("."))).toEqual(["spec.apiId", "spec.query.listenPath"]);
    expect(batchRouteClaims({ apiId: "orders-api", query: { listenPath: "/orders/" } }, route)).toEqual([]);
  });

  it("takes a spec giving no listen path as one that may change the route only while the loopback API's id is unknown", () => {
    const spec = { apiId: "petstore-v1", definition: { openapi: "3.1.0" } };
    expect(mayChangeBatchRoute(spec, route)).toBe(true);
    expect(mayChangeBatchRoute(spec, { ...route, apiId: "gw-loopback" })).toBe(false);
    expect(mayChangeBatchRoute({ ...spec, query: { listenPath: "/pets/" } }, route)).toBe(false);
  });
});
