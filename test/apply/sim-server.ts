/**
 * A simulated gateway and portal for the model-based test of the apply protocol: products are
 * created (not idempotent, the server names them), org keys upserted (a `reset_quota=1` write
 * resets the quota: not repeatable), and batch calls carry org-key writes. Each call meets a
 * fault drawn from a seeded generator — the answer lost after processing, a reset after
 * sending, a timeout, a refusal before processing, a 500, a 429 — and batch calls meet
 * whole-call faults too (a garbage 2xx, the route absent) and per-item ones (`code: 0`, a
 * missing item). `kill()` is the process dying: nothing it sends afterwards arrives.
 */
import type { CallOutcome, CallRequest, Caller } from "../../src/apply/http-client.js";

/** mulberry32: a small seeded generator. */
export function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface SimFaults {
  /** Share of calls meeting a fault (0–1). */
  readonly rate: number;
  /** The batch route answers 404 in both forms (batching unavailable). */
  readonly batchAbsent: boolean;
  /** The process dies after this many calls. */
  readonly killAfter: number | undefined;
}

type Fault = "lost" | "reset-after" | "timeout" | "refused" | "500" | "429" | "429-long";
const faults: readonly Fault[] = ["lost", "reset-after", "timeout", "refused", "500", "429", "429-long"];

const answered = (status: number, body: unknown, retryAfterMs?: number): CallOutcome => ({
  kind: "answered",
  status,
  retryAfterMs,
  body,
  text: JSON.stringify(body),
});

export class SimServer {
  /** Products by server id. */
  readonly products = new Map<string, { readonly name: string }>();
  /** Creates processed per product name. */
  readonly creates = new Map<string, number>();
  /** Quota resets processed per key id, and the bodies of the keys. */
  readonly resets = new Map<string, number>();
  readonly keys = new Map<string, unknown>();
  private nextId = 1;
  private random: () => number = Math.random;
  private settings: SimFaults = { rate: 0, batchAbsent: false, killAfter: undefined };
  private calls = 0;
  /** Each process's calls carry its generation: a dead process's stragglers never arrive. */
  private generation = 0;
  dead = false;
  /** Told when the process dies (its state stops taking writes). */
  onKill: () => void = () => undefined;
  /** Told before a non-repeatable request is processed: the test checks its intent is recorded. */
  onNonRepeatable: (resourceKey: string) => void = () => undefined;
  /** Told after every processed request. */
  onProcessed: () => void = () => undefined;

  /** A new process: new faults, alive again. */
  start(settings: SimFaults, seed: number): void {
    this.settings = settings;
    this.random = generator(seed);
    this.calls = 0;
    this.dead = false;
    this.generation++;
  }

  kill(): void {
    if (!this.dead) this.onKill();
    this.dead = true;
  }

  /** The caller of the current process. */
  caller(): Caller {
    const generation = this.generation;
    return { call: (req) => (generation === this.generation ? this.call(req) : Promise.resolve({ kind: "not-sent", error: "the process is dead" })) };
  }

  private fault(): Fault | undefined {
    return this.random() < this.settings.rate ? faults[Math.floor(this.random() * faults.length)] : undefined;
  }

  private async call(req: CallRequest): Promise<CallOutcome> {
    await Promise.resolve();
    if (this.dead) return { kind: "not-sent", error: "the process is dead" };
    this.calls++;
    if (this.settings.killAfter !== undefined && this.calls > this.settings.killAfter) {
      // the kill lands while this call is on the wire: it arrives, or it does not
      if (this.random() < 0.5) this.processAll(req);
      this.kill();
      return { kind: "unknown", error: "killed" };
    }
    if (req.path.includes("/gw/batch")) return this.batch(req);
    return this.direct(req, this.fault());
  }

  private direct(req: CallRequest, fault: Fault | undefined): CallOutcome {
    if (fault === "refused") return { kind: "not-sent", error: "ECONNREFUSED" };
    if (fault === "429") return answered(429, { message: "slow down" }, 1);
    if (fault === "429-long") return answered(429, { message: "come back tomorrow" }, 86_400_000);
    if (fault === "500") {
      if (this.random() < 0.5) this.process(req);
      return answered(500, { message: "oops" });
    }
    const processed = fault === "reset-after" ? this.random() < 0.5 || undefined : true;
    const result = processed === true ? this.process(req) : undefined;
    if (fault !== undefined) return { kind: "unknown", error: fault };
    return result!;
  }

  /** A request, or each sub-request of a batch, done without answering. */
  private processAll(req: CallRequest): void {
    if (!req.path.includes("/gw/batch")) this.process(req);
    else
      for (const r of (req.body as { requests: Array<{ method: string; relative_url: string; body?: string }> }).requests)
        this.process({ method: r.method, path: `/gw/${r.relative_url}`, body: r.body === undefined ? undefined : JSON.parse(r.body) });
  }

  /** Does what the request asks; returns its answer. */
  private process(req: CallRequest): CallOutcome {
    if (req.method === "POST" && req.path === "/products") {
      const name = (req.body as { Name: string }).Name;
      this.onNonRepeatable(`ApiProduct/${name}`);
      const id = String(this.nextId++);
      this.products.set(id, { name });
      this.creates.set(name, (this.creates.get(name) ?? 0) + 1);
      this.onProcessed();
      return answered(201, { ID: Number(id), Name: name });
    }
    const key = /org\/keys\/([^?]+)/.exec(req.path)?.[1];
    if (key === undefined) return answered(404, { message: "no route" });
    if (req.path.includes("reset_quota=1")) {
      this.onNonRepeatable(`OrgKey/${key}`);
      this.resets.set(key, (this.resets.get(key) ?? 0) + 1);
    }
    this.keys.set(key, req.body);
    this.onProcessed();
    return answered(200, { key, status: "ok", action: "added" });
  }

  private batch(req: CallRequest): CallOutcome {
    if (this.settings.batchAbsent) return answered(404, { message: "not found" });
    const requests = (req.body as { requests: Array<{ method: string; relative_url: string; body?: string }> }).requests;
    // a whole-call fault: a third of them a garbage 2xx (a proxy's page after processing)
    const drawn = this.fault();
    const whole = drawn === undefined ? undefined : this.random() < 0.34 ? "garbage" : drawn;
    if (whole === "refused" || whole === "429" || whole === "429-long") return this.direct(req, whole);
    const results: unknown[] = [];
    for (const r of requests) {
      const sub: CallRequest = { method: r.method, path: `/gw/${r.relative_url}`, body: r.body === undefined ? undefined : JSON.parse(r.body) };
      const fault = whole === undefined ? this.fault() : "lost";
      if (fault === "refused" || fault === "429" || fault === "429-long") continue; // a missing item
      const outcome =
        fault === "500"
          ? answered(500, { message: "oops" })
          : this.direct(sub, fault === "lost" || fault === "reset-after" || fault === "timeout" ? undefined : fault);
      if (outcome.kind !== "answered" || fault !== undefined) results.push({ relative_url: "", code: 0, headers: null, body: "" });
      else results.push({ relative_url: r.relative_url, code: outcome.status, headers: {}, body: outcome.text });
    }
    if (whole === "garbage") return answered(200, "<html>proxy page</html>");
    if (whole === "500") return answered(500, { message: "oops" });
    if (whole !== undefined) return { kind: "unknown", error: whole };
    return answered(200, results);
  }
}
