/**
 * Every in-doubt hint gatesync prints is followed literally, as a user would, against a real
 * sandbox whose answers are lost (`lostResponseRate`: the write happened, the answer never came)
 * or whose connections are reset before processing (`resetRate`: it did not happen): the
 * commands are read from `gatesync plan`'s and `gatesync apply`'s own output, run as printed
 * (with the id the server shows for `<server id>`), and afterwards nothing exists twice and no
 * quota was reset twice (issue 31, point 1).
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { Harness } from "../helpers/apply.js";
import { harness } from "../helpers/apply.js";
import { runCli } from "../helpers/cli.js";
import { doc } from "../helpers/plan.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});
afterAll(removeTempRepos);

const cli = (args: string[]): ReturnType<typeof runCli> => runCli([...args, "-c", path.join(h!.dir, "gatesync.yaml")], h!.env);

/** One step of a printed hint: when to take it, and the command. */
interface Step {
  readonly when: string;
  readonly command: string;
}

/** The steps of the hint printed under `id` in a plan's text: "…: when: `command`; when: `command`". */
function planSteps(text: string, id: string): Step[] {
  const block = text.slice(text.indexOf(` ${id} `));
  const hint = /hint: (.*)/.exec(block.slice(0, block.indexOf("\n\n") < 0 ? undefined : block.indexOf("\n\n")))?.[1] ?? "";
  return [...hint.matchAll(/(?:— |; )([^`;—]+?): `(gatesync [^`]+)`/g)].map((m) => ({ when: m[1]!, command: m[2]! }));
}

/** The steps the apply summary prints under an in-doubt resource: "    command   (when)". */
function summarySteps(text: string, id: string): Step[] {
  const at = text.indexOf(`  ${id}: `);
  if (at < 0) return [];
  const lines = text.slice(at).split("\n").slice(1);
  const steps: Step[] = [];
  for (const line of lines) {
    const m = /^ {4}(gatesync .+?) {3}\((.+)\)$/.exec(line);
    if (m === null) break;
    steps.push({ command: m[1]!, when: m[2]! });
  }
  return steps;
}

/** Runs a printed command as it is, `<server id>` replaced by what the server shows. */
async function follow(step: Step, serverId?: string): Promise<Awaited<ReturnType<typeof runCli>>> {
  const words = step.command
    .replace("<server id>", serverId ?? "<server id>")
    .split(/\s+/)
    .slice(1);
  return cli(words[0] === "apply" ? [...words, "--auto-approve"] : words);
}

const pick = (steps: readonly Step[], exists: boolean): Step => {
  const step = steps.find((s) => (exists ? /^it exists/ : /^it does not exist/).test(s.when));
  if (step === undefined) throw new Error(`no step for "${exists ? "it exists" : "it does not exist"}" in ${JSON.stringify(steps)}`);
  return step;
};

const key = (trigger: string): Record<string, string> => ({
  "k.yaml": doc("OrgKey", "acme", `keyId: org-acme\nrate: 10\nquota_max: 100\nquotaResetTrigger: "${trigger}"`),
});

describe("an org key whose write carrying reset_quota=1 lost its answer", () => {
  const inDoubtKey = async (): Promise<{ apply: string }> => {
    h = await harness({ files: key("2026-10") });
    expect((await cli(["apply", "--auto-approve", "--allow-empty-state"])).code).toBe(0);
    expect(h.sandbox.inspect.store.orgKeys.get("org-acme")!.quotaResets).toBe(1);
    await writeFile(path.join(h.dir, "config/k.yaml"), key("2026-11")["k.yaml"]!);
    h.sandbox.inspect.setFaults({ lostResponseRate: 1, interfaces: ["gateway"] });
    const apply = await cli(["apply", "--auto-approve", "--allow-empty-state"]);
    h.sandbox.inspect.setFaults({ lostResponseRate: 0 });
    expect(apply.code).toBe(1);
    expect((await h.state.read()).resources.get("OrgKey/acme")!.status).toBe("in-doubt");
    // the write happened: the quota was reset for 2026-11
    expect(h.sandbox.inspect.store.orgKeys.get("org-acme")!.quotaResets).toBe(2);
    return { apply: apply.stdout };
  };

  it("the plan calls it no create and gives no --id; following it (apply) never resets the quota again", async () => {
    const { apply } = await inDoubtKey();
    expect(summarySteps(apply, "OrgKey/acme")).toEqual([]);
    expect(apply).toContain("nothing to resolve");
    const plan = await cli(["plan"]);
    const shown = plan.stdout.split("Plan:")[0]!;
    expect(shown).toMatch(/~ OrgKey\/acme {2}update {2}POST \/gw\/org\/keys\/org-acme \[batch\]\n/);
    expect(shown).not.toMatch(/create|--id|reset_quota=1 \[|\[.*quota reset/);
    expect(planSteps(plan.stdout, "OrgKey/acme")).toEqual([]);
    expect((await cli(["apply", "--auto-approve", "--allow-empty-state"])).code).toBe(0);
    expect(h!.sandbox.inspect.store.orgKeys.get("org-acme")!.quotaResets).toBe(2);
    expect(h!.sandbox.inspect.store.orgKeys.get("org-acme")!.session).toMatchObject({ rate: 10 });
    // settled: nothing more to do, and the reset stays spent
    const again = await cli(["plan", "--detailed-exitcode"]);
    expect(again.code).toBe(0);
    expect((await cli(["apply", "--auto-approve", "--allow-empty-state"])).code).toBe(0);
    expect(h!.sandbox.inspect.store.orgKeys.get("org-acme")!.quotaResets).toBe(2);
  });

  it("`state resolve --accept` (the README's step for a quota-reset write) records it, and no reset follows", async () => {
    await inDoubtKey();
    expect((await cli(["state", "resolve", "OrgKey/acme", "--accept"])).code).toBe(0);
    expect((await cli(["plan", "--detailed-exitcode"])).code).toBe(0);
    await cli(["apply", "--auto-approve", "--allow-empty-state"]);
    expect(h!.sandbox.inspect.store.orgKeys.get("org-acme")!.quotaResets).toBe(2);
  });

  it("`state resolve --id` is refused for a key (it has no server id to record), and its hint repeats nothing", async () => {
    await inDoubtKey();
    const refused = await cli(["state", "resolve", "OrgKey/acme", "--id", "anything"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("has no server id to record");
    expect((await h!.state.read()).resources.get("OrgKey/acme")!.status).toBe("in-doubt");
    await cli(["apply", "--auto-approve", "--allow-empty-state"]);
    expect(h!.sandbox.inspect.store.orgKeys.get("org-acme")!.quotaResets).toBe(2);
  });
});

/** A created kind: the files, the interface its create goes to, and the server ids the sandbox holds. */
interface Created {
  readonly id: string;
  readonly files: Record<string, string>;
  readonly iface: "portal" | "llm";
  readonly serverIds: (hh: Harness) => string[];
}

const created: readonly Created[] = [
  {
    id: "ApiProduct/shop",
    files: { "p.yaml": doc("ApiProduct", "shop", "Name: Shop\nProviderID: 1") },
    iface: "portal",
    serverIds: (hh) => [...hh.sandbox.inspect.store.products.keys()].map(String),
  },
  {
    id: "PortalWebhook/crm",
    files: { "w.yaml": doc("PortalWebhook", "crm", "Name: crm\nURL: https://crm.example.com/h\nMethod: POST\nEvents: [UserRegistered]") },
    iface: "portal",
    serverIds: (hh) => [...hh.sandbox.inspect.store.portalWebhooks.keys()],
  },
  {
    id: "LlmSettings/assistant",
    files: { "l.yaml": doc("LlmSettings", "assistant", "attributes: { model_name: m }") },
    iface: "llm",
    serverIds: (hh) => [...hh.sandbox.inspect.store.llmSettings.keys()],
  },
];

describe.each(created)("$id: a create in doubt", (kind) => {
  for (const exists of [true, false]) {
    it(`${exists ? "happened (answer lost)" : "did not happen (reset before processing)"}: the printed step for it leaves exactly one object`, async () => {
      h = await harness({
        files: kind.files,
        sandbox: { faults: exists ? { lostResponseRate: 1, interfaces: [kind.iface] } : { resetRate: 1, interfaces: [kind.iface] } },
      });
      const apply = await cli(["apply", "--auto-approve", "--allow-empty-state"]);
      h.sandbox.inspect.setFaults({ lostResponseRate: 0, resetRate: 0 });
      expect((await h.state.read()).resources.get(kind.id)!.status).toBe("in-doubt");
      expect(kind.serverIds(h)).toHaveLength(exists ? 1 : 0);
      const plan = await cli(["plan"]);
      const steps = planSteps(plan.stdout, kind.id);
      // the plan and the apply summary give the same steps
      expect(summarySteps(apply.stdout, kind.id)).toEqual(steps);
      const step = pick(steps, exists);
      expect((await follow(step, kind.serverIds(h)[0])).code).toBe(0);
      expect((await cli(["apply", "--auto-approve", "--allow-empty-state"])).code).toBe(0);
      expect(kind.serverIds(h)).toHaveLength(1);
      expect((await cli(["plan", "--detailed-exitcode"])).code).toBe(0);
    });
  }
});

describe("DashboardWebhook: a create in doubt whose spec changed since", () => {
  const hook = (target: string): string => doc("DashboardWebhook", "alerts", `name: alerts\nmethod: POST\ntarget_path: ${target}`);
  for (const exists of [true, false]) {
    it(`${exists ? "happened" : "did not happen"}: the printed step leaves one hook`, async () => {
      h = await harness({
        files: { "w.yaml": hook("https://chat.example.com/a") },
        sandbox: { faults: exists ? { lostResponseRate: 1, interfaces: ["dashboard"] } : { resetRate: 1, interfaces: ["dashboard"] } },
      });
      await cli(["apply", "--auto-approve", "--allow-empty-state"]);
      h.sandbox.inspect.setFaults({ lostResponseRate: 0, resetRate: 0 });
      await writeFile(path.join(h.dir, "config/w.yaml"), hook("https://chat.example.com/b"));
      const plan = await cli(["plan"]);
      expect(plan.stdout).toMatch(/! DashboardWebhook\/alerts {2}blocked/);
      const step = pick(planSteps(plan.stdout, "DashboardWebhook/alerts"), exists);
      // "put the spec back as it was sent" is part of the step
      if (exists) await writeFile(path.join(h.dir, "config/w.yaml"), hook("https://chat.example.com/a"));
      expect((await follow(step)).code).toBe(0);
      await cli(["apply", "--auto-approve", "--allow-empty-state"]);
      expect(h.sandbox.inspect.store.dashboardHooks).toHaveLength(1);
      expect((await h.state.read()).resources.get("DashboardWebhook/alerts")!.status).toBe("applied");
    });
  }
});
