/** `gatesync sandbox`: the sandbox until SIGINT or SIGTERM. */
import type { FaultSettings } from "../../../sandbox/faults.js";
import { loadFixtures } from "../../../sandbox/fixtures.js";
import { startSandbox } from "../../../sandbox/sandbox.js";
import { untilStopSignal } from "../apply/interrupt.js";

/** What `gatesync sandbox` reads from its flags (sandbox-command.ts declares and parses them). */
export interface SandboxFlags {
  port: number;
  host: string;
  fixtures?: string;
  latency: number;
  jitter: number;
  errorRate: number;
  unavailableRate: number;
  resetRate: number;
  rateLimit?: { requestsPerSecond: number; burst: number };
  seed: number;
  logSize: number;
  maxBodyMib: number;
}

/** Credentials come from the same variables gatesync.yaml names; unset ones are generated. */
const credentialEnv = { gatewayKey: "GW_ADMIN_KEY", portalKey: "PORTAL_API_KEY", dashboardToken: "DASHBOARD_TOKEN", llmKey: "LLM_API_KEY" } as const;

export async function sandboxAction(
  flags: SandboxFlags,
  io: { stdout: (t: string) => void; env: Readonly<Record<string, string | undefined>> },
): Promise<void> {
  const fixtures = flags.fixtures === undefined ? {} : await loadFixtures(flags.fixtures);
  const faults: Partial<FaultSettings> = {
    latencyMs: flags.latency,
    jitterMs: flags.jitter,
    errorRate: flags.errorRate,
    unavailableRate: flags.unavailableRate,
    resetRate: flags.resetRate,
    rateLimit: flags.rateLimit,
  };
  const credentials = Object.fromEntries(Object.entries(credentialEnv).flatMap(([k, env]) => (io.env[env] === undefined ? [] : [[k, io.env[env]]])));
  const sandbox = await startSandbox({
    port: flags.port,
    host: flags.host,
    fixtures,
    faults,
    seed: flags.seed,
    credentials,
    logSize: flags.logSize,
    maxBodyBytes: flags.maxBodyMib * 1024 * 1024,
  });
  // listened for before the address is printed: whoever waits for that line may stop it at once
  const stopped = untilStopSignal();
  const generated = Object.entries(credentialEnv).filter(([, env]) => io.env[env] === undefined);
  io.stdout(
    [
      `sandbox listening on ${sandbox.urls.base}`,
      `  gateway   ${sandbox.urls.gateway}/gw/`,
      `  dashboard ${sandbox.urls.dashboard}/api/hooks`,
      `  portal    ${sandbox.urls.portal}`,
      `  llm       ${sandbox.urls.llm}`,
      `  inspect   ${sandbox.urls.inspect}/objects | /calls | /faults | /events | /reset`,
      ...(generated.length === 0
        ? []
        : [
            "sandbox-only credentials, generated because these variables are unset:",
            ...generated.map(([k, env]) => `  export ${env}=${sandbox.credentials[k as keyof typeof credentialEnv]}`),
          ]),
      "",
    ].join("\n"),
  );
  await stopped;
  await sandbox.stop();
}
