/**
 * The import's report, per source object: imported as what (and how the first plan knows it:
 * by id or by adoption), skipped and why, the fields gatesync does not manage (listed, kept
 * nowhere), the references that stand for secret values — as text and as JSON. No value is in
 * it: secrets were taken out before it was made, and every string passes stripControls.
 */
import { stripControls } from "../text/bounded-text.js";
import type { ReportEntry } from "./model.js";

export interface ImportReport {
  readonly target: string;
  readonly merge: boolean;
  readonly entries: readonly ReportEntry[];
  readonly written: readonly string[];
  readonly unchanged: readonly string[];
  /** The variables (or SOPS keys) the resources read, names only. */
  readonly secretNames: readonly string[];
  readonly counts: { readonly imported: number; readonly skipped: number; readonly errors: number };
  /** About the files besides the resources: a SOPS file written again although `--merge` (its values could not be compared), and why. */
  readonly notes: readonly string[];
}

const where = (e: ReportEntry): string => `${e.origin.file}${e.origin.at === undefined || e.origin.at === "" ? "" : ` ${e.origin.at}`}`;

export function sortEntries(entries: readonly ReportEntry[]): ReportEntry[] {
  const key = (e: ReportEntry): string => `${e.origin.file}\0${e.origin.at ?? ""}\0${e.as ?? ""}\0${e.reason ?? ""}`;
  return [...entries].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

function entryLine(e: ReportEntry): string[] {
  const head =
    e.outcome === "imported"
      ? `  imported ${where(e)} as ${e.as ?? "?"} (${e.identity === "adopt" ? "adopted by annotation" : "by its id"})`
      : `  ${e.outcome === "error" ? "error" : "skipped"} ${where(e)}: ${e.reason ?? ""}`;
  return [
    head,
    ...(e.hint === undefined ? [] : [`      hint: ${e.hint}`]),
    ...(e.secrets === undefined || e.secrets.length === 0 ? [] : [`      secrets as references: ${e.secrets.join(", ")}`]),
    ...(e.unmanaged === undefined || e.unmanaged.length === 0 ? [] : [`      not managed by gatesync (kept nowhere): ${e.unmanaged.join(", ")}`]),
  ].map(stripControls);
}

export function renderReportText(r: ImportReport): string {
  const c = r.counts;
  return [
    `import into ${stripControls(r.target)}${r.merge ? " (merge)" : ""}: ${c.imported} imported, ${c.skipped} skipped, ${c.errors} error(s)`,
    ...r.entries.flatMap(entryLine),
    `files: ${r.written.length} written, ${r.unchanged.length} unchanged`,
    ...r.notes.map((n) => stripControls(`note: ${n}`)),
    ...(r.secretNames.length === 0 ? [] : [`secret references (names only; values are in no file import wrote in clear): ${r.secretNames.join(", ")}`]),
    "",
  ].join("\n");
}

export const renderReportJson = (r: ImportReport): string => `${JSON.stringify(r, null, 2)}\n`;
