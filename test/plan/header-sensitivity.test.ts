import { describe, expect, it } from "vitest";
import { computePlan } from "../../src/plan/plan.js";
import { renderPlan } from "../../src/plan/render/render.js";
import { isSensitiveMarker, marker } from "../../src/secrets/markers.js";
import { desiredFrom, doc, emptyState, hashKey, planOptions, recordPlan } from "../helpers/plan.js";
import { heldPayload } from "../../src/record/wrappers/lazy-record.js";

const hook = (headers: string): string =>
  doc("DashboardWebhook", "alerts", `name: alerts\nmethod: POST\ntarget_path: https://chat.example.com/x\nheader_map:\n${headers}`);

describe("a dashboard webhook's header_map", () => {
  it("hides only credential-like headers and values from secret references", async () => {
    const set = await desiredFrom(
      {
        "d.yaml": hook(
          "  X-Source: gitops\n  Authorization: Bearer abc\n  X-Api-Key: k1\n  X-Auth-Token: t1\n  Cookie: c=1\n  X-Client-Secret: s\n  X-Trace: ${env:TRACE}\n  Content-Type: application/json",
        ),
      },
      { env: { TRACE: "trace-value" } },
    );
    const headers = set.desired[0]!.request.readCompare().header_map as Record<string, unknown>;
    expect(headers["X-Source"]).toBe("gitops");
    expect(headers["Content-Type"]).toBe("application/json");
    for (const h of ["Authorization", "X-Api-Key", "X-Auth-Token", "Cookie", "X-Client-Secret", "X-Trace"]) expect(isSensitiveMarker(headers[h]), h).toBe(true);
    const text = renderPlan(computePlan(set.desired, emptyState, planOptions), "text", { color: false });
    expect(text).toContain("gitops");
    for (const v of ["Bearer abc", "k1", "t1", "c=1", "trace-value"]) expect(text).not.toContain(v);
  });

  it("a header recorded as a hash while every header counted as sensitive is no change", async () => {
    const set = await desiredFrom({ "d.yaml": hook("  X-Source: gitops") });
    const state = recordPlan(computePlan(set.desired, emptyState, planOptions), set.desired, emptyState);
    const record = state.resources.get("DashboardWebhook/alerts")!;
    const applied = record.applied?.read() as { header_map: Record<string, unknown> };
    // as an earlier version recorded it
    const old = { ...record, appliedHash: "older", applied: heldPayload({ ...applied, header_map: { "X-Source": marker(hashKey, "gitops") } }) };
    const olderState = { ...state, resources: new Map([[old.id, old]]) };
    expect(computePlan(set.desired, olderState, { ...planOptions, hashKey }).changes[0]!.action).toBe("no-op");
    // a real change still shows (and is blocked: dashboard hooks cannot be updated)
    const changed = await desiredFrom({ "d.yaml": hook("  X-Source: manual") });
    expect(computePlan(changed.desired, olderState, { ...planOptions, hashKey }).changes[0]!.action).toBe("blocked");
  });
});
