/**
 * Every path the daemon serves is a row of its route table (src/daemon/http/route-table.ts):
 * no other code of src/daemon/ reads a request's URL to choose what to answer. The request's URL
 * is read once, by the server handing it to the table's `resolveRoute` (http/dispatch.ts); a
 * handler gets the row's parameters, the path it matched and the query. That the table is what
 * a daemon answers, row for row and credential for credential, is test/daemon/route-table.e2e.test.ts.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { handWrittenFiles, projectRoot } from "./source-files.js";

/** `req.url`, `request.url`, `r.req.url` (a comment's mention aside). */
const readsRequestUrl = /^(?!\s*(?:\*|\/\/)).*\b(?:req|request)\.url\b/m;

describe("the daemon's routes are its route table's rows", () => {
  it("finds a read of a request's URL", () => {
    expect(readsRequestUrl.test("  const u = new URL(req.url ?? '/', base);")).toBe(true);
    expect(readsRequestUrl.test("  r.req.url = below;")).toBe(true);
    expect(readsRequestUrl.test(" * the req.url of a page")).toBe(false);
    expect(readsRequestUrl.test("  const u = snapshot.url;")).toBe(false);
  });

  it("reads a request's URL only where the server hands it to the table (http/server.ts)", () => {
    const files = handWrittenFiles(["src"]).filter((f) => f.startsWith("src/daemon/"));
    const reading = files.filter((f) => readsRequestUrl.test(readFileSync(path.join(projectRoot, f), "utf8")));
    expect(reading).toEqual(["src/daemon/http/server.ts"]);
    expect(readFileSync(path.join(projectRoot, "src/daemon/http/server.ts"), "utf8")).toMatch(/resolveRoute\(routes, req\.url/);
  });
});
