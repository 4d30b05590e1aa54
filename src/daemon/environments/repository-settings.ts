/**
 * The team settings of the commit a daemon run applies, read through the one function every
 * reader of a commit uses (`effectiveSettings`, run/effective-settings.ts); what the
 * repository's file writes that the daemon ignores is logged once per commit.
 */
import type { GatesyncConfig } from "../../config/config.js";
import { teamSettingsIn } from "../../config/settings-owners.js";
import { formatDiagnostic } from "../../errors.js";
import type { Logger } from "../../logger.js";
import { effectiveSettings } from "../../run/effective-settings.js";
import type { RepositorySettings } from "../../run/effective-settings.js";
import type { SourceSnapshot } from "../../source/source.js";

export { effectiveSettings, readRepositorySettings, settingsFingerprint, withTeamSettings } from "../../run/effective-settings.js";
export type { RepositorySettings } from "../../run/effective-settings.js";

/**
 * The team settings of each run, shared by the environments of a daemon: the file is read at
 * every run (a directory source's revision does not cover it), and what it writes that the
 * daemon ignores is logged once per commit and content, never more often.
 */
export class TeamSettingsReader {
  private lastLogged: string | undefined;
  private replacedLogged: string | undefined;

  constructor(private readonly logger: Logger) {}

  /** The run's effective settings (`effectiveSettings`), what the daemon ignores of them logged once per commit. */
  async read(operator: GatesyncConfig, snapshot: SourceSnapshot): Promise<{ readonly config: GatesyncConfig; readonly settings: RepositorySettings }> {
    const effective = await effectiveSettings(operator, snapshot);
    const settings = effective.settings;
    const key = `${snapshot.revision}\n${settings.hash}\n${JSON.stringify(operator.document ?? null)}`;
    if (settings.ignored.length > 0 && key !== this.lastLogged) {
      this.logger.info(
        { commit: snapshot.commit ?? snapshot.revision, ignored: settings.ignored.map((d) => formatDiagnostic(d)) },
        "the repository's gatesync.yaml writes operator settings the daemon ignores",
      );
    }
    this.lastLogged = key;
    this.noteReplaced(operator, settings);
    return effective;
  }

  /** The team settings the daemon's own file still carries, replaced by the repository's: said once per operator file (a migration's leftovers). */
  private noteReplaced(operator: GatesyncConfig, settings: RepositorySettings): void {
    const replaced = settings.from === undefined ? [] : teamSettingsIn(operator.document ?? {});
    const key = JSON.stringify(operator.document ?? null);
    if (replaced.length === 0 || key === this.replacedLogged) return;
    this.replacedLogged = key;
    this.logger.warn(
      {
        file: operator.file,
        settings: replaced,
        from: settings.from?.file,
        hint: "remove them from the daemon's gatesync.yaml: the repository's file decides them",
      },
      "the daemon's own gatesync.yaml sets team settings: the repository's gatesync.yaml replaces them",
    );
  }
}
