/**
 * The operator's `telemetry.traces` of the gatesync.yaml a command runs with (`-c`, or
 * ./gatesync.yaml). The config's loader, and its schemas, are used only when the file has a
 * `telemetry:` section: a command without one starts as fast as before. A file that cannot be
 * read gives none here: the command itself reports it. A command run for a merge request takes
 * none from the file — its checkout's, which must not choose where the job's spans and the
 * collector's token go (docs/user/merge-requests.md) — only the job's own OTEL_* variables.
 */
import { readFile } from "node:fs/promises";
import type { TracesSettings } from "../../config/telemetry-section.js";
import { forMergeRequest } from "./cli-io.js";

/** The value of `--NAME VALUE` or `--NAME=VALUE` on the command line. */
function flagOf(argv: readonly string[], name: string): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === name) return argv[i + 1];
    if (argv[i]!.startsWith(`${name}=`)) return argv[i]!.slice(name.length + 1);
  }
  return undefined;
}

/** The config file the command line names (`-c FILE`, `--config FILE`, `--config=FILE`), else ./gatesync.yaml. */
function configFileOf(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (word === "-c" || word === "--config") return argv[i + 1];
    if (word.startsWith("--config=")) return word.slice("--config=".length);
  }
  return "gatesync.yaml";
}

export async function fileTraces(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): Promise<TracesSettings | undefined> {
  const stateUrl = flagOf(argv, "--state-url");
  if (forMergeRequest(env, stateUrl === undefined ? {} : { stateUrl })) return undefined;
  const file = configFileOf(argv);
  if (file === undefined) return undefined;
  const text = await readFile(file, "utf8").catch(() => undefined);
  if (text === undefined || !/^telemetry:/m.test(text)) return undefined;
  const { loadConfig } = await import("../../config/config.js");
  return loadConfig(file).then(
    (config) => config.telemetry?.traces,
    () => undefined,
  );
}
