/**
 * The daemon's sources, one per ref its environments follow (`track:`, docs/user/environments.md):
 * environments that follow the same ref share one SharedSource (fetched once for all of them);
 * one that follows another branch, or the newest tag matching a pattern, or names its own
 * repository (`source:`, a team's), has its own. A trigger
 * (webhook, sync) invalidates every one of them.
 */
import type { GatesyncConfig } from "../../config/config.js";
import type { EnvironmentConfig } from "../../config/environments.js";
import { trackKey } from "../../config/track-section.js";
import { createSource } from "../../source/create-source.js";
import { SharedSource } from "./shared-source.js";

export class EnvironmentSources {
  /** The top level's ref (what an environment without `track:` follows): logged and shown as the daemon's source. */
  readonly description: string;
  private readonly byKey = new Map<string, SharedSource>();
  private readonly byEnvironment = new Map<string, SharedSource>();

  constructor(config: GatesyncConfig, environments: readonly EnvironmentConfig[], env: Readonly<Record<string, string | undefined>>) {
    // one environment fetches for itself: a snapshot is shared only between environments of one trigger
    const reuseMs = environments.length > 1 ? 2_000 : 0;
    const top = new SharedSource(createSource(config, env), reuseMs);
    this.description = top.description;
    for (const e of environments) {
      // an environment naming its own repository (a team's: docs/user/teams.md) reads it, on its own ref
      const own = e.config.source !== config.source;
      const base = own ? { ...config, source: e.config.source } : config;
      const ref = trackKey(e.config.track, base.source);
      const key = own ? `source ${JSON.stringify(e.config.source)} ${ref ?? ""}` : ref;
      let source = key === undefined ? top : this.byKey.get(key);
      if (source === undefined) {
        source = new SharedSource(createSource({ ...base, ...(e.config.track === undefined ? {} : { track: e.config.track }) }, env), reuseMs);
        this.byKey.set(key!, source);
      }
      this.byEnvironment.set(e.name, source);
    }
    this.byKey.set("", top);
  }

  /** The source an environment reads. */
  of(name: string): SharedSource {
    const source = this.byEnvironment.get(name);
    if (source === undefined) throw new Error(`no source for environment ${name}`);
    return source;
  }

  /** The sources may have moved: each one's next fetch asks it. */
  invalidate(): void {
    for (const s of this.byKey.values()) s.invalidate();
  }

  async closeShared(): Promise<void> {
    // eslint-disable-next-line no-restricted-syntax -- bounded by the refs the operator's environments follow (one per `track:`), local work only
    await Promise.all([...this.byKey.values()].map((s) => s.closeShared()));
  }
}
