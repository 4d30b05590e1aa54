/**
 * The apply protocol on its own, model-based (fast-check commands): random plans of product
 * creates (not idempotent) and org-key writes (idempotent, or carrying a quota reset: not
 * repeatable; batched) are applied by the real executor, recorder and sender against a
 * simulated server (sim-server.ts) that loses answers, resets after sending, times out,
 * refuses, throttles and is killed at random points; an operator resolves what is in doubt by
 * looking at the server; the repository changes between runs. After every state write, every
 * processed request and every command the invariants hold:
 * - nothing non-repeatable is processed twice, and its intent was recorded before it arrived;
 * - every object on the server is recorded as applied or in doubt;
 * - every record marked applied exists on the server.
 * Once the faults stop, a few resolve-and-apply rounds converge: nothing left to do.
 */
import { HeldValue } from "../../src/deferred.js";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BatchSender } from "../../src/apply/batch/batch.js";
import { Interfaces } from "../../src/apply/clients.js";
import { executeWith } from "../../src/apply/executor.js";
import { InterfaceQueue } from "../../src/apply/pace/queues.js";
import { configFromDocument } from "../../src/config/config.js";
import type { Resource } from "../../src/kinds/resource.js";
import { EnvFileSecretSource } from "../../src/secrets/env-file-source.js";
import { silentLogger } from "../../src/logger.js";
import { prepareDesired } from "../../src/plan/prepare-desired.js";
import { computePlan } from "../../src/plan/plan.js";
import { isExecutable } from "../../src/plan/plan-change.js";
import { appliedRecord } from "../../src/apply/records/applied-record.js";
import type { ResourceRecord, StateBackend, StateSnapshot } from "../../src/record/state.js";
import type { SimFaults } from "./sim-server.js";
import { SimServer } from "./sim-server.js";
import { heldPayload } from "../../src/record/wrappers/lazy-record.js";

const runs = Number(process.env.GATESYNC_MODEL_RUNS ?? 100);
const logger = silentLogger();
const config = configFromDocument(
  { source: { directory: "." }, retries: { max: 2, baseDelayMs: 1, maxDelayMs: 2, timeoutMs: 1000, maxRetryAfterMs: 50 }, targets: {} },
  undefined,
  "/tmp",
);

/** The state in memory, written through one view per process; a dead process's view takes no writes. */
class MemoryState {
  records = new Map<string, ResourceRecord>();
  serial = 0;
  /** Quota resets each key's records account for (applied with a new trigger). */
  readonly accounted = new Map<string, number>();
  onChange: () => void = () => undefined;

  set(record: ResourceRecord): void {
    const prev = this.records.get(record.id);
    if (
      record.kind === "OrgKey" &&
      record.status === "applied" &&
      record.trigger !== undefined &&
      record.trigger !== (prev?.applied === undefined ? undefined : prev.trigger)
    ) {
      this.accounted.set(record.name, (this.accounted.get(record.name) ?? 0) + 1);
    }
    this.records.set(record.id, record);
  }

  snapshot(): StateSnapshot {
    return { lineage: "l", serial: this.serial, hashKey: "h", resources: new Map(this.records) };
  }

  /** A process's view; `kill()` stops it taking writes. */
  view(): StateBackend & { kill(): void } {
    let dead = false;
    const change = async (apply: () => void): Promise<void> => {
      await Promise.resolve();
      if (dead) throw new Error("killed: the write never happened");
      apply();
      this.serial++;
      this.onChange();
    };
    return {
      description: "memory",
      kill: () => (dead = true),
      read: () => Promise.resolve(this.snapshot()),
      readHeads: () => Promise.resolve(this.snapshot()),
      readPayloads: (heads) => Promise.resolve(heads),
      readVersion: () => Promise.resolve({ lineage: "l", serial: this.serial }),
      lock: () => Promise.resolve({ release: () => Promise.resolve(), check: () => undefined }),
      write: (record) => change(() => this.set(record)),
      remove: (id) => change(() => this.records.delete(id)),
      initialise: () => change(() => undefined),
      replaceAll: () => Promise.reject(new Error("not used")),
      writeClaiming: () => Promise.reject(new Error("not used")),
      appendHistory: () => Promise.reject(new Error("not used")),
      readHistory: () => Promise.resolve([]),
      close: () => Promise.resolve(),
    };
  }
}

interface Model {
  products: number;
  keys: Array<{ rate: number; trigger: number }>;
  /** Trigger values each key has had: the most quota resets it may ever see. */
  triggers: number[];
}

const source = { file: "r.yaml", index: 0, line: 1 };
const resource = (kind: Resource["kind"], name: string, spec: Record<string, unknown>): Resource => ({
  apiVersion: "gatesync.dev/v1",
  kind,
  name,
  labels: {},
  annotations: {},
  spec: new HeldValue(spec),
  source,
});

function resources(m: Model): Resource[] {
  return [
    ...Array.from({ length: m.products }, (_, i) => resource("ApiProduct", `p${i}`, { Name: `p${i}`, ProviderID: 1 })),
    ...m.keys.map((k, i) => resource("OrgKey", `k${i}`, { keyId: `k${i}`, rate: k.rate, quotaResetTrigger: `t${k.trigger}` })),
  ];
}

class Real {
  readonly server = new SimServer();
  readonly state = new MemoryState();
  applies = 0;

  constructor() {
    this.server.onNonRepeatable = (id) => {
      // the intent is recorded before a non-repeatable request can arrive
      expect(this.state.records.get(id)?.status, `intent of ${id} before it reached the server`).toBe("in-doubt");
    };
  }

  check(model: Model): void {
    const s = this.server;
    for (const [name, n] of s.creates) expect(n, `creates of ${name}`).toBeLessThanOrEqual(1);
    model.triggers.forEach((n, i) => expect(s.resets.get(`k${i}`) ?? 0, `quota resets of k${i}`).toBeLessThanOrEqual(n));
    for (const [id, p] of s.products) {
      const r = this.state.records.get(`ApiProduct/${p.name}`);
      expect(r?.status === "in-doubt" || (r?.status === "applied" && r.serverId === id), `product ${p.name} (${id}) recorded as applied or in doubt`).toBe(
        true,
      );
    }
    for (const r of this.state.records.values()) {
      if (r.status === "applied" && r.kind === "ApiProduct") expect(s.products.get(r.serverId ?? "")?.name, `applied record ${r.id} exists`).toBe(r.name);
      if (r.status === "applied" && r.kind === "OrgKey") expect(s.keys.has(r.name), `applied record ${r.id} exists`).toBe(true);
    }
  }

  async apply(model: Model, faults: SimFaults, seed: number, reassert = false): Promise<void> {
    this.server.start(faults, seed);
    const state = this.state.view();
    this.server.onKill = () => state.kill();
    this.state.onChange = () => this.check(model);
    this.server.onProcessed = () => this.check(model);
    const snapshot = this.state.snapshot();
    const desired = prepareDesired(resources(model), { secrets: new EnvFileSecretSource({}, "/nonexistent"), hashKey: "h", appTypeProviders: new Set() });
    const plan = computePlan(desired.desired, snapshot, { orphans: "report", batch: { maxSize: 3 }, now: new Date(0).toISOString(), reassert });
    const interfaces = new Interfaces();
    for (const iface of ["gateway", "portal"] as const) {
      interfaces.clients.set(iface, this.server.caller());
      interfaces.queues.set(iface, new InterfaceQueue(iface, { concurrency: 3, requestsPerSecond: 100_000 }, logger, { maxPauseMs: 50 }));
    }
    interfaces.batch = new BatchSender(
      interfaces.client("gateway"),
      interfaces.queue("gateway"),
      { listenPath: "/lb/", loopbackKey: "l", adminKey: "a", maxSize: 3 },
      logger,
    );
    const input = { plan, desired, bodies: desired.outgoing, resources: [], hashKey: { key: "h", store: undefined }, state: snapshot };
    // a killed process's apply ends with its failed state write, or not at all: either way it is over
    await executeWith(input, { config, state, logger, random: () => 0.5 }, interfaces).catch((err: Error) => expect(err.message).toMatch(/killed/));
    this.server.kill();
    this.check(model);
    this.applies++;
  }

  /** The operator: an in-doubt create exists (record its id) or not (forget); a quota reset happened (accept) or not (forget). */
  resolve(model: Model): void {
    const desired = prepareDesired(resources(model), { secrets: new EnvFileSecretSource({}, "/nonexistent"), hashKey: "h", appTypeProviders: new Set() });
    for (const r of [...this.state.records.values()].filter((x) => x.status === "in-doubt")) {
      const found = [...this.server.products].find(([, p]) => p.name === r.name)?.[0];
      const d = desired.desired.find((x) => x.id === r.id);
      if (r.kind === "ApiProduct" && found !== undefined)
        this.state.records.set(r.id, { ...r, status: "applied", serverId: found, applied: r.attempted ?? heldPayload({}) });
      // the reset happened when the server saw more resets than the records account for
      else if (r.kind === "OrgKey" && d !== undefined && (this.server.resets.get(r.name) ?? 0) > (this.state.accounted.get(r.name) ?? 0))
        this.state.set(appliedRecord(d, r, { now: r.updatedAt, quotaReset: true }));
      else this.state.records.delete(r.id);
    }
    this.check(model);
  }
}

type Command = fc.AsyncCommand<Model, Real>;

const applyCommand = (faults: SimFaults, seed: number, reassert: boolean): Command => ({
  check: () => true,
  run: async (m, r) => r.apply(m, faults, seed, reassert),
  toString: () => `apply(${JSON.stringify(faults)}, seed ${seed}${reassert ? ", reassert" : ""})`,
});
const resolveCommand = (): Command => ({ check: () => true, run: (m, r) => Promise.resolve(r.resolve(m)), toString: () => "resolve" });
const editCommand = (what: "product" | "rate" | "trigger", index: number): Command => ({
  check: () => true,
  run: (m, r) => {
    if (what === "product") m.products++;
    else if (m.keys.length > 0) {
      const k = m.keys[index % m.keys.length]!;
      if (what === "rate") k.rate++;
      else {
        k.trigger++;
        m.triggers[index % m.keys.length]!++;
      }
    }
    r.check(m);
    return Promise.resolve();
  },
  toString: () => `edit(${what} ${index})`,
});

const apply = fc
  .record({
    rate: fc.integer({ min: 0, max: 60 }).map((n) => n / 100),
    batchAbsent: fc.nat({ max: 4 }).map((n) => n === 0),
    killAfter: fc.option(fc.nat({ max: 12 }), { freq: 2 }),
    seed: fc.nat(),
    reassert: fc.boolean(),
  })
  .map(({ seed, reassert, killAfter, ...faults }) => applyCommand({ ...faults, killAfter: killAfter ?? undefined }, seed, reassert));
const commands = fc.commands(
  [
    apply,
    apply,
    apply,
    fc.constant(null).map(() => resolveCommand()),
    fc.tuple(fc.constantFrom("product" as const, "rate" as const, "trigger" as const), fc.nat({ max: 5 })).map(([what, i]) => editCommand(what, i)),
  ],
  { maxCommands: 12 },
);

describe("the apply protocol under a lossy, killable server (model-based)", () => {
  it("never sends a non-repeatable request twice, records every object, and converges", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 8 }), commands, async (products, keys, cmds) => {
        const model: Model = { products, keys: Array.from({ length: keys }, () => ({ rate: 1, trigger: 0 })), triggers: Array.from({ length: keys }, () => 1) };
        const real = new Real();
        await fc.asyncModelRun(() => ({ model, real }), cmds);
        // the faults stop: resolve and apply until nothing is left
        for (let round = 0; round < 3; round++) {
          real.resolve(model);
          await real.apply(model, { rate: 0, batchAbsent: false, killAfter: undefined }, round);
        }
        const desired = prepareDesired(resources(model), { secrets: new EnvFileSecretSource({}, "/nonexistent"), hashKey: "h", appTypeProviders: new Set() });
        const plan = computePlan(desired.desired, real.state.snapshot(), { orphans: "report", batch: { maxSize: 3 }, now: new Date(0).toISOString() });
        expect(plan.changes.filter((c) => isExecutable(c) || c.action === "blocked").map((c) => `${c.action} ${c.id}`)).toEqual([]);
        expect([...real.server.creates.keys()].sort()).toEqual(Array.from({ length: model.products }, (_, i) => `p${i}`).sort());
      }),
      { numRuns: runs },
    );
  }, 120_000);
});
