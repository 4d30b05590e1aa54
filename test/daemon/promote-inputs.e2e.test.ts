/**
 * The worst bodies POST /environments/NAME/promote meets (docs/user/promotion.md), against a real
 * daemon: a body over its 64 KiB bound and JSON nested past its depth are refused as too large
 * (413, read no further), a body that is not JSON or asks with the wrong types is refused (400),
 * and a revision that is not a commit id — not hex, or longer than one — is refused by name with
 * a hint (409); an environment name that does not decode (400) or names none (404), and a freeze's
 * body past its 16 KiB (413). None of them promotes or freezes anything: production still has no promotion.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { doc } from "../helpers/plan.js";
import { promoteToken, promotionDaemon } from "../helpers/promotion-daemon.js";
import type { PromotionDaemon } from "../helpers/promotion-daemon.js";
import { call } from "../helpers/sandbox.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

const key = { "config/keys.yaml": doc("OrgKey", "acme", "keyId: org-acme\nrate: 10") };
const errorOf = (body: unknown): string => (body as { error?: string }).error ?? "";

let d: PromotionDaemon;

beforeAll(async () => {
  d = await promotionDaemon(key);
});

afterAll(async () => {
  await d.stop();
  await removeTempRepos();
});

describe("POST /environments/production/promote with the worst bodies", () => {
  it("a body over 64 KiB is refused as too large", async () => {
    const answer = await d.promote(JSON.stringify({ revision: "a".repeat(70 * 1024) }));
    expect(answer.status).toBe(413);
    expect(errorOf(answer.body)).toBe("body too large");
  });

  it("JSON nested past its depth is refused as too large, not parsed into an ask", async () => {
    const answer = await d.promote(`${"[".repeat(5000)}${"]".repeat(5000)}`);
    expect(answer.status).toBe(413);
    const justPast = await d.promote({ rollback: { steps: 1, deeper: { a: { b: { c: { d: { e: { f: { g: 1 } } } } } } } } });
    expect(justPast.status).toBe(413);
  });

  it("a body that is not JSON, or asks with the wrong types, is refused with what it should be", async () => {
    const notJson = await d.promote("{ revision: abc");
    expect(notJson.status).toBe(400);
    expect(errorOf(notJson.body)).toBe("the body is not JSON");
    const list = await d.promote([]);
    expect(list.status).toBe(400);
    expect(errorOf(list.body)).toContain("the body is a JSON object");
    const numeric = await d.promote({ revision: 1234 });
    expect(numeric.status).toBe(400);
    expect(errorOf(numeric.body)).toBe("revision is a commit id");
    const steps = await d.promote({ rollback: { steps: 1e9 } });
    expect(steps.status).toBe(400);
    expect(errorOf(steps.body)).toContain("rollback.steps is a whole number");
    const forward = await d.promote({ rollback: { forward: "yes" }, revision: "abcd" });
    expect(forward.status).toBe(400);
    expect(errorOf(forward.body)).toBe("rollback.forward is true or false");
    // forward goes somewhere named: with no revision it would be a step forward of no meaning
    const nowhere = await d.promote({ rollback: { forward: true } });
    expect(nowhere.status).toBe(400);
    expect(errorOf(nowhere.body)).toBe("rollback.forward goes to a revision: give revision");
  });

  it("a revision that is not hex, or longer than a commit id, is refused by name and cut short in the message", async () => {
    for (const revision of ["not-a-commit", "abc", "ABCDEF12", "g".repeat(12), "a".repeat(41), `${"b".repeat(500)};rm`]) {
      const answer = await d.promote({ revision, dryRun: true });
      expect(answer.status, revision.slice(0, 20)).toBe(409);
      const body = answer.body as { error: string; code: string; hint?: string };
      expect(body.code).toBe("PROMOTION_REFUSED");
      expect(body.error).toContain("is not a commit id");
      expect(body.error.length).toBeLessThan(120);
      expect(body.hint).toBe("give a commit id (at least 4 hex digits)");
    }
  });

  it("a name that does not decode, or is no environment, is refused before the body is read", async () => {
    const broken = await d.promote({ dryRun: true }, undefined, "%E0%A4%A");
    expect(broken.status).toBe(400);
    expect(errorOf(broken.body)).toBe("bad environment name");
    const unknown = await d.promote({ dryRun: true }, undefined, "prod%00uction");
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ error: "no such environment", environments: ["staging", "production"] });
  });

  it("a freeze's body over its 16 KiB bound is refused as too large, and freezes nothing", async () => {
    const url = `${d.daemon.url}/environments/production/freeze`;
    const headers = { authorization: `Bearer ${promoteToken}`, "content-type": "application/json" };
    const answer = await call(url, { method: "POST", headers, body: JSON.stringify({ reason: "x".repeat(17 * 1024) }) });
    expect(answer.status).toBe(413);
    expect(errorOf(answer.body)).toBe("body too large");
    const status = (await call(`${d.daemon.url}/status`)).body as { environments: Array<{ environment: string; hold: unknown }> };
    expect(status.environments.find((e) => e.environment === "production")?.hold).toBeNull();
  });

  it("none of them promoted anything: production's state has no promotion", async () => {
    const waiting = await d.daemon.environments.get("production")!.runOnce("test");
    expect(waiting).toMatchObject({ result: "waiting" });
    expect(waiting.error).toContain("nothing promoted to production yet");
  });
});
