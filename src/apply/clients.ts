/**
 * The interfaces an apply talks to: one client and one queue per interface its plan calls, and
 * the batch sender when gateway changes may travel in batch calls. Credentials are checked
 * here, before any call: a missing one stops the apply naming every missing variable.
 */
import type { GatesyncConfig } from "../config/config.js";
import { ConfigError, ErrorCode } from "../errors.js";
import { managementInterface } from "../contract/interfaces.js";
import { operations } from "../contract/operations.js";
import type { InterfaceName } from "../contract/interfaces.js";
import type { Logger } from "../logger.js";
import type { PlannedChange } from "../plan/plan-change.js";
import { BatchSender } from "./batch/batch.js";
import { InterfaceClient } from "./http-client.js";
import type { Caller } from "./http-client.js";
import { InterfaceQueue } from "./pace/queues.js";
import type { ApplyDeps } from "./types.js";

interface Credential {
  readonly header: string;
  readonly env: string;
  /** `targets.<interface>.authScheme` (production's by default): "" sends the credential alone. */
  readonly scheme: string;
}

/** The credential of an interface the config names a target for: its header from the registry, its variable and scheme from the target. */
function credentialOf(config: GatesyncConfig, iface: InterfaceName): Credential | undefined {
  const target = config.targets[iface];
  return target === undefined ? undefined : { header: managementInterface(iface).credentialHeader, env: target.credentialEnv, scheme: target.authScheme };
}

/** The header's value: `<scheme> <credential>`, or the credential alone. */
export function credentialValue(scheme: string, credential: string): string {
  return scheme === "" ? credential : `${scheme} ${credential}`;
}

/** The clients and queues of one apply. */
export class Interfaces {
  readonly clients = new Map<InterfaceName, Caller>();
  readonly queues = new Map<InterfaceName, InterfaceQueue>();
  batch: BatchSender | undefined;

  client(iface: InterfaceName): Caller {
    return this.clients.get(iface)!;
  }

  queue(iface: InterfaceName): InterfaceQueue {
    return this.queues.get(iface)!;
  }

  /** HTTP requests started on one interface. */
  started(iface: InterfaceName): number {
    return this.queues.get(iface)?.started ?? 0;
  }

  get pauses(): number {
    return [...this.queues.values()].reduce((n, q) => n + q.pauses, 0);
  }

  stop(): void {
    for (const q of this.queues.values()) q.stop();
  }

  /** Checked just before every call leaves, on every interface (see InterfaceQueue.fence). */
  fence(check: () => void): void {
    for (const q of this.queues.values()) q.fence = check;
  }
}

/** An interface's queue; its pace shared with the process's other applies to the same target and credential, when given `pacers`. */
function queueFor(
  iface: InterfaceName,
  target: NonNullable<GatesyncConfig["targets"][InterfaceName]>,
  credential: string,
  deps: Pick<ApplyDeps, "config" | "pacers">,
  logger: Logger,
): InterfaceQueue {
  const pacer = deps.pacers?.pacerOf(target.url, credential, target.rateLimit.requestsPerSecond);
  return new InterfaceQueue(iface, target.rateLimit, logger, { maxPauseMs: deps.config.retries.maxRetryAfterMs, ...(pacer === undefined ? {} : { pacer }) });
}

/** Opens what the executable changes need; throws ConfigError for a missing target or credential. */
export function openInterfaces(
  executable: readonly PlannedChange[],
  deps: Pick<ApplyDeps, "config" | "env" | "dispatcher" | "pacers">,
  logger: Logger,
  also: readonly InterfaceName[] = [],
): Interfaces {
  const { config, env } = deps;
  const open = new Interfaces();
  const missing: string[] = [];
  for (const iface of new Set([...executable.map((c) => c.operation!.interface), ...also])) {
    const cred = credentialOf(config, iface);
    const target = config.targets[iface];
    if (cred === undefined || target === undefined) {
      throw new ConfigError(ErrorCode.CONFIG_INVALID, `the plan calls the ${iface} interface, but gatesync.yaml has no targets.${iface}`, {
        hint: `add targets.${iface} with its url and credential variable`,
      });
    }
    const value = env[cred.env];
    if (value === undefined || value === "") {
      missing.push(cred.env);
      continue;
    }
    const auth = { header: cred.header, value: credentialValue(cred.scheme, value) };
    open.clients.set(
      iface,
      new InterfaceClient({
        name: iface,
        baseUrl: target.url,
        auth,
        dispatcher: deps.dispatcher,
        timeoutMs: config.retries.timeoutMs,
        maxResponseBytes: config.limits.maxResponseBytes,
      }),
    );
    open.queues.set(iface, queueFor(iface, target, auth.value, deps, logger));
  }
  const batch = config.targets.gateway?.batch;
  if (batch !== undefined && executable.some((c) => c.operation?.batchable === true)) {
    const loopbackKey = env[batch.keyEnv];
    if (loopbackKey === undefined || loopbackKey === "") missing.push(batch.keyEnv);
    else if (open.clients.has(operations.batch.interface)) {
      // batch calls share the client and the queue (the rate) of the interface whose route they take
      open.batch = new BatchSender(
        open.client(operations.batch.interface),
        open.queue(operations.batch.interface),
        { listenPath: batch.listenPath, loopbackKey, adminKey: env[config.targets.gateway!.credentialEnv]!, maxSize: batch.maxSize },
        logger,
      );
    }
  }
  if (missing.length > 0) {
    const names = [...new Set(missing)].sort();
    throw new ConfigError(
      ErrorCode.CONFIG_INVALID,
      `credentials missing: environment variable${names.length === 1 ? "" : "s"} ${names.join(", ")} ${names.length === 1 ? "is" : "are"} not set`,
      { hint: "set them where gatesync runs; gatesync.yaml names them" },
    );
  }
  return open;
}
