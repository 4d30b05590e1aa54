/**
 * The status page's drawing, without a browser: whatever a server, a file or a label holds is
 * text on the page, never markup; stored values are shown capped; the run history folds quiet
 * runs and follows a resource's changes.
 */
import { afterEach, describe, expect, it } from "vitest";
import { redactor, registerSecret } from "../../src/secrets/redaction.js";
import { escapeHtml, html, rootOf } from "../../src/daemon/ui/html.js";
import { maxShownChars, pretty, resourcePage, settleCommands } from "../../src/daemon/ui/resource-page.js";
import { filterFrom, matches } from "../../src/daemon/ui/resources-page.js";
import path from "node:path";
import { leaderRunView } from "../helpers/run-view.js";
import { SqliteStateBackend } from "../../src/record/sqlite/sqlite-backend.js";
import { tempRepo } from "../helpers/temp-repo.js";
import { planPage } from "../../src/daemon/ui/plan-page.js";
import { PlanPreview } from "../../src/daemon/views/plan-preview.js";
import type { PlanRun } from "../../src/run/run-plan.js";
import type { ResourceRow } from "../../src/daemon/ui/view.js";
import type { RunReport } from "../../src/run/run-report.js";
import type { Plan } from "../../src/plan/plan.js";
import { heldPayload } from "../../src/record/wrappers/lazy-record.js";

const hostile = `<script>alert("x")</script><img src=x onerror=alert(1)>'"&`;

function row(over: Partial<ResourceRow> = {}): ResourceRow {
  return {
    id: "PortalWebhook/audit",
    kind: "PortalWebhook",
    name: "audit",
    status: "in-doubt",
    next: "blocked",
    health: undefined,
    commit: "0123456789abcdef0123456789abcdef01234567",
    updatedAt: "2026-11-23T00:00:00.000Z",
    labels: { team: hostile },
    record: {
      id: "PortalWebhook/audit",
      kind: "PortalWebhook",
      name: "audit",
      address: {},
      status: "in-doubt",
      error: `422 ${hostile}`,
      response: heldPayload({ errors: [hostile] }),
      attempted: heldPayload({ Name: hostile, Headers: { $sensitive: "abc" } }),
      createdAt: "2026-11-23T00:00:00.000Z",
      updatedAt: "2026-11-23T00:00:00.000Z",
    },
    change: undefined,
    ...over,
  };
}

afterEach(() => redactor.clear());

describe("status page drawing", () => {
  it("says the repository lost a resource only when the next run's plan is known: not when it could not be planned", () => {
    const unplanned = resourcePage(row({ change: undefined }), [], { unplanned: `The next run could not be planned: ${hostile}` }).text;
    expect(unplanned).toContain("The next run could not be planned");
    expect(unplanned).not.toContain("Not in the repository any more");
    expect(unplanned).not.toContain("<script>");
    expect(resourcePage(row({ change: undefined }), []).text).toContain("Not in the repository any more");
  });

  it("escapes every interpolated value", () => {
    expect(escapeHtml(hostile)).not.toMatch(/[<>"']/);
    expect(html`<p title="${hostile}">${hostile}</p>`.text).toBe(`<p title="${escapeHtml(hostile)}">${escapeHtml(hostile)}</p>`);
    const page = resourcePage(row(), []).text;
    expect(page).not.toContain("<script>");
    expect(page).not.toContain("<img");
    expect(page).toContain("&lt;script&gt;");
  });

  it("passes every value through the redaction layer before escaping it", () => {
    const secret = `tok&en<"value">-42`;
    registerSecret(secret);
    const echoed = row({
      record: {
        ...row().record!,
        error: `422 the portal says: header ${secret} is not allowed`,
        response: heldPayload({ echo: { Authorization: secret, url: `https://h/?t=${encodeURIComponent(secret)}` } }),
      },
    });
    const page = resourcePage(echoed, []).text;
    expect(page).not.toContain(secret);
    expect(page).not.toContain(escapeHtml(secret));
    expect(page).not.toContain(encodeURIComponent(secret));
    expect(page).toContain("[redacted]");
  });

  it("shows sensitive markers as (sensitive) and caps long values", () => {
    expect(pretty({ a: { $sensitive: "hash" } })).toContain('"a": "(sensitive)"');
    const long = pretty({ body: "x".repeat(100_000) });
    expect(long.length).toBeLessThan(maxShownChars + 100);
    expect(long).toMatch(/more characters not shown/);
  });

  it("gives the command that settles what waits for a person", () => {
    expect(settleCommands(row())).toEqual([
      expect.stringContaining("gatesync state resolve PortalWebhook/audit --id <server id>"),
      expect.stringContaining("--forget"),
    ]);
    expect(settleCommands(row({ status: "blocked", record: undefined }))).toEqual([expect.stringContaining("--accept")]);
    expect(settleCommands(row({ status: "applied", record: undefined }))).toEqual([]);
    // a blocked rename or a withheld mass deactivation: the plan's own steps, never --accept
    const rename = {
      id: "ApiProduct/storefront",
      kind: "ApiProduct",
      name: "storefront",
      action: "blocked",
      wave: 1,
      fields: [],
      notes: [],
      hint: "if ApiProduct/storefront is ApiProduct/shop renamed, annotate it …; if the old object is gone from the server, `gatesync state resolve ApiProduct/shop --forget` first",
    } as const;
    expect(settleCommands(row({ status: "blocked", record: undefined, change: rename }))).toEqual([
      expect.stringContaining("gatesync state resolve ApiProduct/shop --forget"),
    ]);
  });

  it("filters rows by kind, status, label and text", () => {
    const r = row({ labels: { team: "storefront", tier: "gold" } });
    expect(matches(r, filterFrom(new URLSearchParams("kind=PortalWebhook&status=in-doubt")))).toBe(true);
    expect(matches(r, filterFrom(new URLSearchParams("kind=OrgKey")))).toBe(false);
    expect(matches(r, filterFrom(new URLSearchParams("label=team=storefront")))).toBe(true);
    expect(matches(r, filterFrom(new URLSearchParams("label=team=checkout")))).toBe(false);
    expect(matches(r, filterFrom(new URLSearchParams("label=tier")))).toBe(true);
    expect(matches(r, filterFrom(new URLSearchParams("q=AUD")))).toBe(true);
    expect(matches(r, filterFrom(new URLSearchParams("q=nothing")))).toBe(false);
  });

  it("marks breaking changes on the plan page, each with its path and reason", () => {
    const change = {
      id: "OrgKey/acme",
      kind: "OrgKey",
      name: "acme",
      action: "update",
      wave: 0,
      notes: [],
      fields: [{ path: "rate", op: "change", before: 100, after: 50 }],
      breaking: [{ path: "rate", reason: "the rate limit is lowered" }],
    };
    const plain = { ...change, id: "OrgKey/globex", name: "globex", breaking: [] };
    const plan = {
      commit: "c",
      state: { lineage: "l", serial: 3 },
      summary: { resources: 2, create: 0, update: 2, noop: 0, blocked: 0, orphan: 0, deactivate: 0, quotaResets: 0, breaking: 1, calls: {} },
      changes: [change, plain],
    };
    const page = planPage({ kind: "plan", run: { plan } as unknown as PlanRun }, "./").text;
    expect(page.match(/data-breaking/g)).toHaveLength(1);
    expect(page).toContain("<code>rate</code>: the rate limit is lowered");
  });

  it("plans the next run anew when the commit, the config in force or the state changes, and only then", async () => {
    let revision = "r1";
    let config = "c1";
    let serial = 1;
    let computed = 0;
    const preview = new PlanPreview({
      snapshot: () => ({ root: "/x", boundary: "/x", revision }),
      configHash: () => config,
      state: { read: () => Promise.resolve({ lineage: "l", serial, hashKey: undefined, resources: new Map() }) },
      plan: () => {
        computed += 1;
        return Promise.resolve({ plan: { computed } } as unknown as PlanRun);
      },
    });
    await preview.get();
    await preview.get();
    expect(computed).toBe(1);
    config = "c2";
    await preview.get();
    revision = "r2";
    await preview.get();
    serial = 2;
    await preview.get();
    expect(computed).toBe(4);
  });

  it("finds the page root from any depth (a reverse proxy's prefix is kept)", () => {
    expect(rootOf("/")).toBe("./");
    expect(rootOf("/runs")).toBe("./");
    expect(rootOf("/resources/OrgKey/acme")).toBe("../../");
    expect(rootOf("/resources/")).toBe("../");
  });

  it("keeps the last runs, folds quiet ones, and follows one resource's changes by commit", async () => {
    const dir = await tempRepo({});
    const store = new SqliteStateBackend(path.join(dir, "state.db"));
    const history = leaderRunView(store, 3);
    const report = (result: RunReport["result"], commit: string): RunReport => ({
      reason: "schedule",
      startedAt: "2026-11-27T00:00:00.000Z",
      finishedAt: "2026-11-27T00:00:01.000Z",
      durationMs: 5,
      result,
      revision: commit,
      commit,
    });
    const plan = (action: "update" | "no-op"): Plan =>
      ({ changes: [{ id: "OrgKey/acme", kind: "OrgKey", name: "acme", action, wave: 0, fields: [], notes: [] }] }) as unknown as Plan;
    history.runFinished(report("applied", "c1"), plan("update"));
    history.runFinished(report("noop", "c1"), plan("no-op"));
    history.runFinished(report("noop", "c1"), plan("no-op"));
    await history.settled();
    expect(history.entries()).toHaveLength(2);
    expect(history.entries()[0]!.repeats).toBe(1);
    history.runFinished(report("applied", "c2"), plan("update"));
    history.runFinished(report("applied", "c3"), plan("update"));
    await history.settled();
    expect(history.entries().map((e) => e.seq)).toEqual([4, 3, 2]);
    // the same refused revision, again and again: one row, counted
    history.runFinished(report("invalid", "c4"), undefined);
    history.runFinished(report("invalid", "c4"), undefined);
    history.runFinished(report("invalid", "c4"), undefined);
    await history.settled();
    expect(history.entries().map((e) => [e.seq, e.record.outcome, e.repeats])).toEqual([
      [5, "invalid", 2],
      [4, "applied", 0],
      [3, "applied", 0],
    ]);
    expect((await history.historyOf("OrgKey/acme"))?.map((h) => h.commit)).toEqual(["c3", "c2"]);
    const seen: boolean[] = [];
    const stop = history.subscribe((s) => seen.push(s.running));
    history.runStarted("webhook");
    const progress = history.progress();
    progress.start(2);
    progress.done("OrgKey/acme", "applied");
    expect(history.live).toMatchObject({ running: true, reason: "webhook", done: 1, total: 2 });
    stop();
    expect(seen).toEqual([true, true, true]);
    await store.close();
  });
});
