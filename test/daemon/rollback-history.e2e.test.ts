/**
 * Rollback counts back along what production applied (docs/user/promotion.md), as an operator
 * meets it in an incident: a real `gatesync run` process over a real git repository, staging and
 * production sandboxes counting the objects, `gatesync promote`, `rollback` and `history` run
 * against it. Three revisions promoted; two `rollback --steps 1` in a row go v3 → v2 → v1 (never
 * back to v3) with one object per resource; `history` marks where each `--steps` goes; with no
 * earlier revision the page offers no rollback and `--steps 1` is refused; `promote` without a
 * revision does not quietly take back what a rollback left, `--to` a revision not before the one
 * in force is refused — each hint followed does what it says; promoting the revision in force
 * records nothing; a newer revision soaking is said; a prefix of two revisions is an error
 * naming both.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../helpers/eventually.js";
import { git } from "../helpers/git-repo.js";
import { doc } from "../helpers/plan.js";
import { acmeRate, pagesReader, promotionProcess, untilAcmeRate } from "../helpers/promotion-daemon.js";
import type { PromotionProcess } from "../helpers/promotion-daemon.js";
import { call } from "../helpers/sandbox.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

const keys = (rate: number): Record<string, string> => ({
  "config/keys.yaml": `${doc("OrgKey", "acme", `keyId: org-acme\nrate: ${rate}`)}---\n${doc("OrgKey", "beta", "keyId: org-beta\nrate: 5")}`,
});

interface HistoryJson {
  promotions: Array<{ seq: number; revision: string; rollback: boolean }>;
  verifications: Array<{ revision: string }>;
  rollbackTargets: Array<{ steps: number; revision: string; seq: number }>;
}

let d: PromotionProcess;
const v: string[] = [];

const history = async (): Promise<HistoryJson> => {
  const out = await d.cli(["history", "--env", "production", "--format", "json"]);
  expect(out.code, out.stderr).toBe(0);
  return JSON.parse(out.stdout) as HistoryJson;
};
/** The commands a hint quotes, as printed (between backticks), as words after `gatesync`. */
const hintedAll = (stderr: string): string[][] => {
  const line = /hint: .*/.exec(stderr)?.[0] ?? "";
  const commands = [...line.matchAll(/`(gatesync [^`]+)`/g)].map((m) => m[1]!.split(" ").slice(1));
  expect(commands.length, stderr).toBeGreaterThan(0);
  return commands;
};
/** The (first) command a hint quotes. */
const hinted = (stderr: string): string[] => hintedAll(stderr)[0]!;

/** Waits until production applied `rate` and verified the revision in force. */
async function productionOn(revision: string, r: number): Promise<void> {
  await untilAcmeRate(d, "production", r, 30_000);
  await eventually(history, (h) => h.verifications.some((x) => x.revision === revision), 30_000);
}

/** Pushes a revision, waits until staging verified it, promotes it by name. */
async function promoted(r: number): Promise<string> {
  const revision = await d.push(keys(r), `acme at ${r}`);
  await d.sync();
  await eventually(
    () => d.cli(["promote", "production", "--revision", revision]),
    (x) => x.code === 0,
    30_000,
  );
  await productionOn(revision, r);
  return revision;
}

beforeAll(async () => {
  d = await promotionProcess(keys(10), "2s");
  const first = git(d.work, "rev-parse", "HEAD");
  await eventually(
    () => d.cli(["promote", "production", "--revision", first]),
    (x) => x.code === 0,
    30_000,
  );
  await productionOn(first, 10);
  v.push(first, await promoted(20), await promoted(30));
}, 180_000);

afterAll(async () => {
  await d?.stop();
  await removeTempRepos();
});

/** The objects production holds: one per resource, whatever the rollbacks did. */
const orgKeyIds = (): string[] => [...d.production.inspect.store.orgKeys.keys()].sort();

/** The status page's reader: the daemon guards its pages with the pages token. */

describe("rollback along production's applied history", () => {
  it("history marks where --steps 1 and --steps 2 go; two --steps 1 in a row go v3 → v2 → v1, one object per resource", async () => {
    const marked = await d.cli(["history", "--env", "production"]);
    expect(marked.stdout).toMatch(new RegExp(`promoted ${v[2]!.slice(0, 12)} from staging .*← in force`));
    expect(marked.stdout).toMatch(new RegExp(`promoted ${v[1]!.slice(0, 12)} from staging .*← rollback --steps 1`));
    expect(marked.stdout).toMatch(new RegExp(`promoted ${v[0]!.slice(0, 12)} from staging .*← rollback --steps 2`));
    const first = await d.cli(["rollback", "production", "--steps", "1", "--auto-approve"]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain(`rolled production back to ${v[1]!.slice(0, 12)}`);
    await productionOn(v[1]!, 20);
    const second = await d.cli(["rollback", "production", "--steps", "1", "--auto-approve"]);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain(`rolled production back to ${v[0]!.slice(0, 12)}`);
    await untilAcmeRate(d, "production", 10, 30_000);
    expect(orgKeyIds()).toEqual(["org-acme", "org-beta"]);
    const h = await history();
    expect(h.promotions.slice(0, 2).map((p) => [p.revision, p.rollback])).toEqual([
      [v[0], true],
      [v[1], true],
    ]);
    expect(h.rollbackTargets).toEqual([]);
  }, 120_000);

  it("with nowhere to go back, --steps 1 is refused and the page offers no rollback", async () => {
    const refused = await d.cli(["rollback", "production", "--steps", "1", "--auto-approve"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("error[PROMOTION_REFUSED] production has 0 earlier revisions it applied and verified before the one in force");
    // the hint followed: the history shows the one in force and no entry a --steps would go to
    const followed = await d.follow(hinted(refused.stderr));
    expect(followed.code, followed.stderr).toBe(0);
    expect(followed.stdout).toMatch(new RegExp(`rolled back to ${v[0]!.slice(0, 12)} from production .*← in force`));
    expect(followed.stdout).not.toContain("← rollback --steps");
    const page = (await call(`${d.daemon.url}/environments/production/`, pagesReader)).text;
    expect(page).toContain("Promotion from staging");
    expect(page).not.toContain("gatesync rollback production");
    // nor does it suggest taking back what the rollbacks left
    expect(page).not.toContain(`gatesync promote production --revision ${v[2]!.slice(0, 10)}`);
    expect(acmeRate(d, "production")).toBe(10);
  });

  it("promote without a revision does not take back what the rollback left; its hint does, and promoting it again records nothing", async () => {
    const refused = await d.cli(["promote", "production"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`error[PROMOTION_REFUSED] production was rolled back from ${v[2]!.slice(0, 12)}, staging's newest verified revision`);
    const again = await d.follow(hinted(refused.stderr));
    expect(again.code, again.stderr).toBe(0);
    await productionOn(v[2]!, 30);
    const before = (await history()).promotions.length;
    const inForce = await d.cli(["promote", "production", "--revision", v[2]!.slice(0, 12)]);
    expect(inForce.code, inForce.stderr).toBe(0);
    expect(inForce.stdout).toBe(`${v[2]!.slice(0, 12)} is already in force in production: nothing promoted\n`);
    expect((await history()).promotions.length).toBe(before);
    // the page offers the rollback again: v1 lies below v3
    expect((await call(`${d.daemon.url}/environments/production/`, pagesReader)).text).toContain("gatesync rollback production --steps 1");
  }, 120_000);

  it("--to a revision a rollback took off is refused with a stable code; the hint's --forward goes there", async () => {
    const back = await d.cli(["rollback", "production", "--steps", "1", "--auto-approve"]);
    expect(back.code, back.stderr).toBe(0);
    await untilAcmeRate(d, "production", 10, 30_000);
    const refused = await d.cli(["rollback", "production", "--to", v[1]!.slice(0, 12), "--auto-approve"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`error[PROMOTION_NOT_EARLIER] production cannot roll back to ${v[1]!.slice(0, 12)}`);
    const hint = hinted(refused.stderr);
    // the hint carries the -c the command was given: the file naming the promotion token's variable
    expect(hint).toEqual(["rollback", "production", "--to", v[1]!.slice(0, 12), "--forward", "-c", d.operatorFile]);
    // a rollback asks before it starts; no terminal here, so the approval is given as a script would
    const forward = await d.follow([...hint, "--auto-approve"]);
    expect(forward.code, forward.stderr).toBe(0);
    await untilAcmeRate(d, "production", 20, 30_000);
    expect(orgKeyIds()).toEqual(["org-acme", "org-beta"]);
    // a revision production never ran: the hint sends it through staging's gate instead
    const never = await d.cli(["rollback", "production", "--to", "0123456789ab", "--auto-approve"]);
    expect(never.stderr).toContain("error[PROMOTION_NOT_EARLIER] production cannot roll back to 0123456789ab: production never applied 0123456789ab");
    expect(hinted(never.stderr)).toEqual(["promote", "production", "--revision", "0123456789ab", "-c", d.operatorFile]);
    const gated = await d.follow(hinted(never.stderr));
    expect(gated.stderr).toContain("error[PROMOTION_REFUSED] production cannot take 0123456789ab: 0123456789ab was not applied in staging");
  }, 120_000);

  it("promote without a revision says a newer revision is soaking in staging", async () => {
    const newer = await d.push(keys(40), "acme at 40");
    await d.sync();
    await untilAcmeRate(d, "staging", 40, 30_000);
    const dry = await d.cli(["promote", "production", "--dry-run"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(
      new RegExp(
        `note: a newer revision is on its way: ${newer.slice(0, 12)} (is soaking in staging: \\d+s of its soak left|ended its soak in staging; verified at its next run); this promotes ${v[2]!.slice(0, 12)}, staging's newest verified revision`,
      ),
    );
  }, 120_000);

  it("a prefix two revisions start with is an error naming both", async () => {
    const prefix = v[0]!.slice(0, 4);
    const twin = pushTwin(prefix);
    await d.sync();
    await eventually(
      () => d.cli(["promote", "production", "--revision", prefix, "--dry-run"]),
      (x) => x.stderr.includes("PROMOTION_AMBIGUOUS"),
      30_000,
    );
    const refused = await d.cli(["promote", "production", "--revision", prefix, "--dry-run"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`error[PROMOTION_AMBIGUOUS] ${prefix} is the start of`);
    expect(refused.stderr).toContain(v[0]!.slice(0, 12));
    expect(refused.stderr).toContain(twin.slice(0, 12));
    // the hint names each revision by a command: followed, each names one revision (v1's promotes it; the twin is staging's own gate's to judge)
    const commands = hintedAll(refused.stderr);
    expect(commands).toEqual(
      expect.arrayContaining([
        ["promote", "production", "--revision", v[0]!.slice(0, 12), "-c", d.operatorFile],
        ["promote", "production", "--revision", twin.slice(0, 12), "-c", d.operatorFile],
      ]),
    );
    for (const command of commands) expect((await d.follow([...command, "--dry-run"])).stderr).not.toContain("PROMOTION_AMBIGUOUS");
    const told = await d.follow([...commands.find((c) => c.includes(v[0]!.slice(0, 12)))!, "--dry-run"]);
    expect(told.code, told.stderr).toBe(0);
    expect(told.stdout).toContain(`promoting ${v[0]!.slice(0, 12)} from staging to production would apply`);
  }, 120_000);
});

/** A real commit on main (the head's tree again) whose id starts with `prefix`, pushed; its id. */
function pushTwin(prefix: string): string {
  const tree = git(d.work, "rev-parse", "HEAD^{tree}");
  const parent = git(d.work, "rev-parse", "HEAD");
  for (let n = 0; ; n++) {
    const body = `tree ${tree}\nparent ${parent}\nauthor t <t@example.com> 1790000000 +0000\ncommitter t <t@example.com> 1790000000 +0000\n\ntwin ${n}\n`;
    const id = createHash("sha1")
      .update(`commit ${Buffer.byteLength(body)}\0${body}`)
      .digest("hex");
    if (!id.startsWith(prefix)) continue;
    const written = execFileSync("git", ["hash-object", "-t", "commit", "-w", "--stdin"], { cwd: d.work, input: body, encoding: "utf8" }).trim();
    expect(written).toBe(id);
    git(d.work, "update-ref", "refs/heads/main", id);
    git(d.work, "push", "-q", "origin", "main");
    return id;
  }
}
