/**
 * Traffic routing finds the API whose listen path holds a request's path (the longest one) from
 * an index of the APIs by listen path, rebuilt when the APIs change: the same answer as looking
 * at every API, which it replaced (a request cost as many steps as there are APIs: quadratic
 * over a 100,000-resource apply through batch calls).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SandboxStore } from "../../src/sandbox/store.js";
import type { StoredApi } from "../../src/sandbox/store.js";
import { matchApi } from "../../src/sandbox/interfaces/traffic.js";

/** What every request did before: every API looked at. */
function scan(store: SandboxStore, path: string): { api: StoredApi; listenPath: string; rest: string } | undefined {
  let best: { api: StoredApi; listenPath: string; rest: string } | undefined;
  for (const api of store.apis.values()) {
    const value = ((api.extension.server as Record<string, unknown> | undefined)?.listenPath as Record<string, unknown> | undefined)?.value;
    const lp0 = typeof value === "string" && value !== "" ? value : "/";
    const withSlash = lp0.startsWith("/") ? lp0 : `/${lp0}`;
    const lp = withSlash.length > 1 ? withSlash.replace(/\/+$/, "") : "";
    if (lp === "" || path === lp || path.startsWith(`${lp}/`)) {
      if (best === undefined || lp.length > best.listenPath.length) best = { api, listenPath: lp, rest: path.slice(lp.length) };
    }
  }
  return best;
}

const segment = fc.constantFrom("a", "b", "ab", "gw", "");
const pathOf = (segments: string[]): string => `/${segments.join("/")}`;

describe("traffic routing by listen path", () => {
  it("finds the API a scan of every API finds, for any APIs and any path", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(segment, { maxLength: 3 }), { maxLength: 6 }),
        fc.array(fc.array(segment, { maxLength: 4 }), { minLength: 1, maxLength: 8 }),
        fc.boolean(),
        (listenPaths, paths, slash) => {
          const apis = listenPaths.map((s, i) => ({ id: `api-${i}`, listenPath: `${pathOf(s)}${slash ? "/" : ""}` }));
          const store = new SandboxStore({ apis }, () => "http://127.0.0.1:1");
          for (const p of paths.map(pathOf)) {
            const found = matchApi(store, p);
            const expected = scan(store, p);
            expect(found === undefined ? undefined : { id: found.api.id, listenPath: found.listenPath, rest: found.rest }).toEqual(
              expected === undefined ? undefined : { id: expected.api.id, listenPath: expected.listenPath, rest: expected.rest },
            );
          }
        },
      ),
    );
  });

  it("follows an API whose listen path a patch changed, and the APIs a reset brings back", () => {
    const store = new SandboxStore(
      {
        apis: [
          { id: "a", listenPath: "/one/" },
          { id: "b", listenPath: "/two/" },
        ],
      },
      () => "http://127.0.0.1:1",
    );
    expect(matchApi(store, "/one/x")?.api.id).toBe("a");
    const a = store.apis.get("a")!;
    a.extension = { ...a.extension, server: { ...(a.extension.server as object), listenPath: { value: "/three/", strip: true } } };
    store.apiRevision++;
    expect(matchApi(store, "/one/x")).toBeUndefined();
    expect(matchApi(store, "/three/x")).toMatchObject({ listenPath: "/three", rest: "/x" });
    store.reset();
    expect(matchApi(store, "/one/x")?.api.id).toBe("a");
    expect(matchApi(store, "/two")?.api.id).toBe("b");
  });
});
