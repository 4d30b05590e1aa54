/**
 * The targets' operator settings a merge-request plan needs (issue 55): the URLs, the batch
 * route and size, the portal's app-type providers and the rates — never a credential's variable
 * or value. The daemon serves them in `GET /config` (daemon/config-endpoint.ts); a merge-request
 * job plans with them, or, with no daemon to ask, with the defaults: a merge request's checkout
 * never shapes its own plan's calls or validation through them.
 */
import { managementInterfaces } from "../contract/interfaces.js";
import type { InterfaceName } from "../contract/interfaces.js";
import { targetsConfig } from "./config-sections.js";
import type { GatewayTarget, PortalTarget, RateLimitConfig, Target, TargetsConfig } from "./config-sections.js";

export interface TargetView {
  readonly url: string;
  readonly authScheme: string;
  readonly rateLimit: RateLimitConfig;
  readonly batch?: { readonly listenPath: string; readonly apiId?: string; readonly maxSize: number };
  readonly appTypeProviders?: readonly number[];
}

export type TargetSettingsView = { readonly [I in InterfaceName]?: TargetView };

/** What the daemon serves of its targets: every setting but the credentials' variables. */
export function targetSettingsView(targets: TargetsConfig): TargetSettingsView {
  const view: Partial<Record<InterfaceName, TargetView>> = {};
  for (const { name } of managementInterfaces) {
    // an interface's own settings (the gateway's batch, the portal's providers) as they are, the variables' names left out
    const t = targets[name] as (Target & Partial<Pick<GatewayTarget, "batch"> & Pick<PortalTarget, "appTypeProviders">>) | undefined;
    if (t === undefined) continue;
    const { batch, appTypeProviders } = t;
    view[name] = {
      url: t.url,
      authScheme: t.authScheme,
      rateLimit: t.rateLimit,
      ...(batch === undefined
        ? {}
        : { batch: { listenPath: batch.listenPath, ...(batch.apiId === undefined ? {} : { apiId: batch.apiId }), maxSize: batch.maxSize } }),
      ...(appTypeProviders === undefined ? {} : { appTypeProviders }),
    };
  }
  return view;
}

type Raw = Record<string, unknown>;
const isRaw = (v: unknown): v is Raw => v !== null && typeof v === "object" && !Array.isArray(v);

/** One interface's view as the daemon wrote it, or undefined when it is not gatesync's. */
function wellFormedTarget(v: unknown): v is TargetView {
  if (!isRaw(v) || typeof v.url !== "string" || !/^https?:\/\//.test(v.url) || typeof v.authScheme !== "string" || !isRaw(v.rateLimit)) return false;
  const b = v.batch;
  if (
    b !== undefined &&
    (!isRaw(b) || typeof b.listenPath !== "string" || !Number.isInteger(b.maxSize) || (b.maxSize as number) < 1 || (b.maxSize as number) > 1000)
  )
    return false;
  return v.appTypeProviders === undefined || (Array.isArray(v.appTypeProviders) && v.appTypeProviders.every(Number.isInteger));
}

/** Whether a daemon's answer is a targets view (each interface well formed). */
export function isTargetSettingsView(v: unknown): v is TargetSettingsView {
  return isRaw(v) && Object.entries(v).every(([name, t]) => managementInterfaces.some((i) => i.name === name) && wellFormedTarget(t));
}

/** The targets a merge-request plan runs with: the daemon's settings (`view`), the checkout's variable names only (a plan reads no credential). */
export function targetsFromView(view: TargetSettingsView, checkout: TargetsConfig): TargetsConfig {
  const raw: Raw = {};
  for (const iface of managementInterfaces) {
    const v = view[iface.name];
    if (v === undefined) continue;
    const keyEnv = (checkout[iface.name] as Partial<Pick<GatewayTarget, "batch">> | undefined)?.batch?.keyEnv ?? "";
    raw[iface.name] = {
      ...v,
      [iface.credentialEnvKey]: checkout[iface.name]?.credentialEnv ?? "",
      ...(v.batch === undefined ? {} : { batch: { ...v.batch, keyEnv } }),
    };
  }
  return targetsConfig(raw);
}

/** The checkout's targets with none of their operator settings: each interface's URL and variable name, every other setting its default. */
export function defaultTargets(checkout: TargetsConfig): TargetsConfig {
  const raw: Raw = {};
  for (const iface of managementInterfaces) {
    const t = checkout[iface.name];
    if (t !== undefined) raw[iface.name] = { url: t.url, [iface.credentialEnvKey]: t.credentialEnv };
  }
  return targetsConfig(raw);
}
