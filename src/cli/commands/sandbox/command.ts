import { InvalidArgumentError } from "commander";
import type { Command } from "commander";
import { defaultMaxBodyBytes } from "../../../sandbox/body-limit.js";
import { examplesText } from "../../common/help-examples.js";
import type { SandboxFlags } from "./action.js";

function number(name: string, min: number, max = Number.POSITIVE_INFINITY) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isFinite(n) || n < min || n > max)
      throw new InvalidArgumentError(`${name} must be a number from ${min}${max === Number.POSITIVE_INFINITY ? " up" : ` to ${max}`}`);
    return n;
  };
}

function integer(name: string, min: number) {
  const parse = number(name, min);
  return (value: string): number => {
    const n = parse(value);
    if (!Number.isInteger(n)) throw new InvalidArgumentError(`${name} must be a whole number from ${min} up`);
    return n;
  };
}

function rateLimit(value: string): { requestsPerSecond: number; burst: number } {
  const m = /^(\d+(?:\.\d+)?)(?::(\d+))?$/.exec(value);
  if (m === null || Number(m[1]) <= 0) throw new InvalidArgumentError("give requests per second, optionally with a burst: 100 or 100:20");
  const rps = Number(m[1]);
  return { requestsPerSecond: rps, burst: m[2] === undefined ? Math.max(1, Math.ceil(rps)) : Math.max(1, Number(m[2])) };
}

export function addSandboxCommand(program: Command, io: { stdout: (t: string) => void; env: Readonly<Record<string, string | undefined>> }): void {
  program
    .command("sandbox")
    .addHelpText("after", examplesText("sandbox"))
    .description("run a local implementation of the ten management operations, with fault injection")
    .option("--port <port>", "port (0: any free port)", number("port", 0, 65535), 8080)
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .option("--fixtures <file>", "YAML with the APIs, OAuth clients, providers, policies and keys the interfaces cannot create")
    .option("--latency <ms>", "added latency per call", number("latency", 0), 0)
    .option("--jitter <ms>", "random extra latency, up to this", number("jitter", 0), 0)
    .option("--error-rate <share>", "share of calls answered 500 (0-1)", number("error rate", 0, 1), 0)
    .option("--unavailable-rate <share>", "share of calls answered 503 + Retry-After (0-1)", number("unavailable rate", 0, 1), 0)
    .option("--reset-rate <share>", "share of connections reset (0-1)", number("reset rate", 0, 1), 0)
    .option("--rate-limit <rps[:burst]>", "token bucket per interface: 429 + Retry-After beyond it", rateLimit)
    .option("--seed <n>", "seed of the fault generator", number("seed", 0), 1)
    .option("--log-size <n>", "calls kept in the call log (inspect /calls; the counts cover every call)", integer("log size", 1), 50_000)
    .option(
      "--max-body-mib <n>",
      "largest management or traffic body accepted, in MiB (413 beyond; production sets no limit)",
      integer("max body", 1),
      defaultMaxBodyBytes / (1024 * 1024),
    )
    .action(async (flags: SandboxFlags) => {
      const { sandboxAction } = await import("./action.js");
      await sandboxAction(flags, io);
    });
}
