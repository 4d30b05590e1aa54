/**
 * The sync tool's index file (the vendor's `.tyk.json`; `.gw.json` in the contract's spelling):
 * `files` (each `file`, optional `api_id`, `db_id`, `org_id` and an `oas` block of overrides),
 * `policies` and `assets`. Read as data: every member checked for its type, nothing evaluated.
 */
import { isRecord } from "../model.js";

export const indexNames = [".gw.json", ".tyk.json"] as const;

export interface IndexedFile {
  readonly file: string;
  readonly apiId?: string;
  readonly dbId?: string;
  readonly orgId?: string;
  readonly overrides: {
    readonly target?: string;
    readonly listenPath?: string;
    readonly versionName?: string;
    readonly strip?: boolean;
  };
  readonly at: string;
}

export interface DumpIndex {
  readonly files: IndexedFile[];
  readonly policies: { readonly file: string; readonly at: string }[];
  readonly assets: { readonly file: string; readonly at: string }[];
  /** Members of the index that are not what the format says (located, by their pointer). */
  readonly problems: { readonly at: string; readonly message: string }[];
}

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

function indexedFile(entry: unknown, at: string, problems: DumpIndex["problems"]): IndexedFile | undefined {
  if (!isRecord(entry) || typeof entry.file !== "string") {
    problems.push({ at, message: "an entry of `files` needs a `file` name" });
    return undefined;
  }
  const oas = isRecord(entry.oas) ? entry.oas : {};
  const overrides = {
    ...(str(oas.override_target) === undefined ? {} : { target: str(oas.override_target)! }),
    ...(str(oas.override_listen_path) === undefined ? {} : { listenPath: str(oas.override_listen_path)! }),
    ...(str(oas.version_name) === undefined ? {} : { versionName: str(oas.version_name)! }),
    ...(typeof oas.strip_listen_path === "boolean" ? { strip: oas.strip_listen_path } : {}),
  };
  return {
    file: entry.file,
    ...(str(entry.api_id) === undefined ? {} : { apiId: str(entry.api_id)! }),
    ...(str(entry.db_id) === undefined ? {} : { dbId: str(entry.db_id)! }),
    ...(str(entry.org_id) === undefined ? {} : { orgId: str(entry.org_id)! }),
    overrides,
    at,
  };
}

function fileList(value: unknown, member: string, problems: DumpIndex["problems"]): { file: string; at: string }[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    problems.push({ at: `/${member}`, message: `\`${member}\` must be a list` });
    return [];
  }
  return value.flatMap((e, i) => (isRecord(e) && typeof e.file === "string" ? [{ file: e.file, at: `/${member}/${i}` }] : []));
}

export function readIndex(value: unknown, maxFiles: number): DumpIndex {
  const problems: DumpIndex["problems"] = [];
  if (!isRecord(value)) return { files: [], policies: [], assets: [], problems: [{ at: "", message: "the index must be a JSON object" }] };
  const raw = Array.isArray(value.files) ? value.files : [];
  if (value.files !== undefined && !Array.isArray(value.files)) problems.push({ at: "/files", message: "`files` must be a list" });
  if (raw.length > maxFiles) problems.push({ at: "/files", message: `the index lists ${raw.length} files, more than the ${maxFiles} an import reads` });
  const files = raw.slice(0, maxFiles).flatMap((e, i) => indexedFile(e, `/files/${i}`, problems) ?? []);
  return { files, policies: fileList(value.policies, "policies", problems), assets: fileList(value.assets, "assets", problems), problems };
}
