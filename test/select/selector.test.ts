/** Label selectors and the selection of resources and orphan records (pure). */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { UsageError } from "../../src/errors.js";
import type { ResourceRecord } from "../../src/record/state.js";
import { stampRecord } from "../../src/select/record-labels.js";
import { scopeOf, selectResources } from "../../src/select/selection.js";
import type { SelectionItem, SelectionRequest } from "../../src/select/selection.js";
import { matchesSelector, parseSelector } from "../../src/label-selector.js";

const m = (sel: string, labels: Record<string, string>): boolean => matchesSelector(parseSelector(sel), labels);

describe("label selectors", () => {
  it("matches equality, inequality, sets and existence, all requirements at once", () => {
    expect(m("team=storefront", { team: "storefront" })).toBe(true);
    expect(m("team==storefront", { team: "storefront" })).toBe(true);
    expect(m("team=storefront", { team: "data" })).toBe(false);
    expect(m("tier!=internal", {})).toBe(true);
    expect(m("tier!=internal", { tier: "internal" })).toBe(false);
    expect(m("team in (a, b)", { team: "b" })).toBe(true);
    expect(m("team in (a,b)", {})).toBe(false);
    expect(m("team notin (a,b)", {})).toBe(true);
    expect(m("team notin (a,b)", { team: "a" })).toBe(false);
    expect(m("canary", { canary: "" })).toBe(true);
    expect(m("!canary", { canary: "x" })).toBe(false);
    expect(m("team in (a,b), tier!=internal, !legacy", { team: "a", tier: "public" })).toBe(true);
    expect(m("team in (a,b), tier!=internal", { team: "a", tier: "internal" })).toBe(false);
    expect(m("example.com/team=x", { "example.com/team": "x" })).toBe(true);
  });

  it.each(["", "team=", "=x", "team in ()", "team in (a", "team in a)", "te am=x", "team=a b", "team=x,,tier=y", "team=" + "v".repeat(64)])(
    "refuses %j with a USAGE error",
    (text) => {
      if (text === "team=") {
        // an empty value is allowed, as in Kubernetes
        expect(m(text, { team: "" })).toBe(true);
        return;
      }
      expect(() => parseSelector(text)).toThrow(UsageError);
    },
  );

  it("never throws anything but a USAGE error, whatever the text", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (text) => {
        try {
          parseSelector(text);
        } catch (err) {
          expect(err).toBeInstanceOf(UsageError);
        }
      }),
    );
  });
});

const item = (id: string, labels: Record<string, string> = {}, dependsOn: string[] = []): SelectionItem => ({ id, kind: id.split("/")[0]!, labels, dependsOn });
const record = (id: string, labels?: Record<string, string>): ResourceRecord => ({
  id,
  kind: id.split("/")[0]!,
  name: id.split("/")[1]!,
  address: {},
  status: "applied",
  createdAt: "t",
  updatedAt: "t",
  ...(labels === undefined ? {} : { labels }),
});
const request = (r: Partial<SelectionRequest>): SelectionRequest => ({ targets: [], excludes: [], kinds: [], ...r });
const items = [
  item("ApiDefinition/petstore", { team: "storefront" }),
  item("ApiDefinition/orders", { team: "checkout" }),
  item("OAuthClient/petstore-mobile", {}, ["ApiDefinition/petstore"]),
  item("OrgKey/acme", { plan: "gold" }, ["ApiDefinition/orders", "ApiDefinition/petstore"]),
  item("ApiProduct/storefront", { team: "storefront" }, ["ApiDefinition/petstore"]),
];

describe("selection", () => {
  it("a target pulls in what it references, transitively, and says by which target", () => {
    const r = selectResources(items, new Set(), scopeOf(request({ targets: ["OrgKey/acme", "ApiProduct/storefront"] }), undefined));
    expect([...r.selected].sort()).toEqual(["ApiDefinition/orders", "ApiDefinition/petstore", "ApiProduct/storefront", "OrgKey/acme"]);
    const s = r.summary([], new Set(items.map((i) => i.id)));
    expect(s.pulledIn).toEqual([
      { id: "ApiDefinition/orders", by: ["OrgKey/acme"] },
      { id: "ApiDefinition/petstore", by: ["ApiProduct/storefront", "OrgKey/acme"] },
    ]);
    expect(s).toMatchObject({ selected: 4, leftOut: 1 });
  });

  it("--exclude wins over a target's references; --kind and --selector filter", () => {
    expect([
      ...selectResources(items, new Set(), scopeOf(request({ targets: ["OAuthClient/petstore-mobile"], excludes: ["ApiDefinition/petstore"] }), undefined))
        .selected,
    ]).toEqual(["OAuthClient/petstore-mobile"]);
    expect([...selectResources(items, new Set(), scopeOf(request({ kinds: ["ApiDefinition"] }), undefined)).selected].sort()).toEqual([
      "ApiDefinition/orders",
      "ApiDefinition/petstore",
    ]);
    expect([...selectResources(items, new Set(), scopeOf(request({ selector: "team=storefront" }), undefined)).selected].sort()).toEqual([
      "ApiDefinition/petstore",
      "ApiProduct/storefront",
    ]);
  });

  it("the config's selector bounds everything, references included", () => {
    const r = selectResources(items, new Set(), scopeOf(request({ targets: ["ApiProduct/storefront"] }), "team=storefront"));
    expect([...r.selected].sort()).toEqual(["ApiDefinition/petstore", "ApiProduct/storefront"]);
    // OrgKey/acme is outside the instance's selector: no target there, and its references are not pulled
    expect(() => selectResources(items, new Set(), scopeOf(request({ targets: ["OrgKey/acme"] }), "team=storefront"))).toThrow(
      /outside this instance's selector/,
    );
    const owned = selectResources(items, new Set(), scopeOf(request({}), "team=storefront"));
    expect([...owned.selected].sort()).toEqual(["ApiDefinition/petstore", "ApiProduct/storefront"]);
  });

  it("refuses unknown kinds, malformed ids and unknown targets, naming the known ones", () => {
    expect(() => scopeOf(request({ kinds: ["Api"] }), undefined)).toThrow(/unknown kind/);
    expect(() => scopeOf(request({ targets: ["petstore"] }), undefined)).toThrow(/give Kind\/name/);
    expect(() => scopeOf(request({ excludes: ["Nope/x"] }), undefined)).toThrow(/unknown kind "Nope"/);
    expect(() => selectResources(items, new Set(), scopeOf(request({ targets: ["ApiDefinition/petstor"] }), undefined))).toThrow(
      /known: ApiDefinition\/orders, ApiDefinition\/petstore/,
    );
    expect(() => scopeOf(request({ selector: "team in (" }), undefined)).toThrow(UsageError);
  });

  it("judges orphan records by their recorded labels; a record without labels matches no label selector", () => {
    const scope = scopeOf(request({}), "team=storefront");
    const r = selectResources(items, new Set(), scope);
    expect(r.includesRecord(record("ApiDefinition/gone", { team: "storefront" }))).toBe(true);
    expect(r.includesRecord(record("ApiDefinition/theirs", { team: "data" }))).toBe(false);
    expect(r.includesRecord(record("ApiDefinition/legacy"))).toBe(false);
    const all = selectResources(items, new Set(), scopeOf(request({ kinds: ["ApiDefinition"] }), undefined));
    expect(all.includesRecord(record("ApiDefinition/legacy"))).toBe(true);
    expect(all.includesRecord(record("OrgKey/legacy"))).toBe(false);
    const targeted = selectResources(items, new Set(["OrgKey/gone"]), scopeOf(request({ targets: ["OrgKey/gone"] }), undefined));
    expect(targeted.selected.size).toBe(0);
    expect(targeted.includesRecord(record("OrgKey/gone"))).toBe(true);
    expect(targeted.includesRecord(record("OrgKey/other"))).toBe(false);
    const s = r.summary(
      [record("ApiDefinition/theirs", { team: "data" }), record("ApiDefinition/legacy"), record("ApiDefinition/petstore")],
      new Set(items.map((i) => i.id)),
    );
    expect(s.recordsOutside).toBe(2);
  });

  it("a record is stamped with its resource's current labels, and an unknown resource's record keeps its own", () => {
    const labels = new Map([["OrgKey/a", { team: "x" }]]);
    expect(stampRecord(record("OrgKey/a"), labels, undefined).labels).toEqual({ team: "x" });
    expect(stampRecord(record("OrgKey/b", { team: "y" }), labels, undefined).labels).toEqual({ team: "y" });
    expect(stampRecord(record("OrgKey/b"), labels, record("OrgKey/b", { team: "z" })).labels).toEqual({ team: "z" });
  });
});
