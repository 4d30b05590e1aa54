/**
 * Secret references of a resource: well-formed, and resolvable where gatesync will plan and
 * apply (how a missing one counts is the caller's choice). Values are never shown.
 */
import { ErrorCode } from "../../errors.js";
import type { Diagnostic, Severity } from "../../errors.js";
import { formatPath } from "../../text/field-path.js";
import { formatRef, refSyntaxProblem } from "../../secrets/references.js";
import type { SecretLookup, SecretSource } from "../../secrets/resolver.js";
import { minScrubLength } from "../../secrets/redaction.js";
import type { SecretRefAt } from "./check-document.js";
import { errorAt } from "../findings.js";
import type { Locate } from "../findings.js";

export interface SecretSettings {
  readonly source: SecretSource;
  readonly missing: Severity;
}

/** What one run has said of references so far: each is said once per run, not once per use. */
export interface SecretsSaid {
  /** References already warned about as too short: one warning each, at its first use. */
  readonly short: Set<string>;
  /** References that could not be resolved where a missing one is not an error (validate): one summary for all (`unresolvedSummary`). */
  readonly unresolved: Set<string>;
}

/** The error of a lookup refused outright (a SOPS file that does not decrypt, out of scope, out of the file root); undefined otherwise. */
function refusedLookup(found: Extract<SecretLookup, { ok: false }>, at: () => Omit<Diagnostic, "severity" | "code" | "message">): Diagnostic | undefined {
  if (found.reason === "sops") return errorAt(found.code, at(), found.message, sopsHint(found.code));
  if (found.reason === "scope") return errorAt(ErrorCode.SECRET_SCOPE, at(), found.message, found.allow);
  if (found.reason === "escape") return errorAt(ErrorCode.PATH_ESCAPE, at(), found.message, found.allow ?? "secret files must live inside secrets.fileRoot");
  return undefined;
}

export function secretDiagnostics(
  refs: readonly SecretRefAt[],
  place: { readonly file: string; readonly index: number; readonly resource: string | undefined },
  secrets: SecretSettings | undefined,
  locate: Locate,
  said: SecretsSaid,
): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const { path, ref } of refs) {
    // positions are looked up only for findings: locating parses the file again
    const at = (): Omit<Diagnostic, "severity" | "code" | "message"> => ({
      file: place.file,
      resource: place.resource,
      path: formatPath(path),
      ...locate(place.file, place.index, path),
    });
    const syntax = refSyntaxProblem(ref);
    if (syntax !== undefined) {
      out.push(errorAt(ErrorCode.SECRET_SYNTAX, at(), syntax, "write ${env:NAME} or ${file:PATH}; `$${` gives a literal `${`"));
      continue;
    }
    if (secrets === undefined) continue;
    const found = secrets.source.lookup(ref);
    if (found.ok) {
      // the value is the same at every use: one located warning says it, not one per resource
      // (and each warning's position costs a parse of its file)
      const name = formatRef(ref);
      if (found.value.length > 0 && found.value.length < minScrubLength && !said.short.has(name)) {
        said.short.add(name);
        out.push({
          severity: "warning",
          code: ErrorCode.SECRET_TOO_SHORT,
          ...at(),
          message: `the value of ${name} is shorter than ${minScrubLength} characters: it cannot be scrubbed from server answers and logs (warned at its first use only)`,
          hint: "use a longer secret",
        });
      }
      continue;
    }
    const refused = refusedLookup(found, at);
    if (refused !== undefined) {
      out.push(refused);
    } else if (secrets.missing !== "error") {
      // where validate runs (a merge request's CI job) the secrets are not set, and need not be:
      // the reference is well-formed and in scope, and plan, apply and the daemon resolve it —
      // one notice for the run, not an annotation on every line that holds a reference
      said.unresolved.add(formatRef(ref));
    } else {
      out.push({
        severity: secrets.missing,
        code: (found.reason === "scope" ? undefined : found.code) ?? ErrorCode.SECRET_UNRESOLVED,
        ...at(),
        message: `${formatRef(ref)} cannot be resolved: ${found.message}`,
        hint: ("allow" in found ? found.allow : undefined) ?? "it must be resolvable where gatesync plans and applies",
      });
    }
  }
  return out;
}

/** The one notice of a run about the references it could not resolve, naming a few (names only: never a value). */
export function unresolvedSummary(unresolved: ReadonlySet<string>): Diagnostic[] {
  if (unresolved.size === 0) return [];
  const names = [...unresolved].sort();
  const shown = names.slice(0, 5).join(", ") + (names.length > 5 ? ` and ${names.length - 5} more` : "");
  return [
    {
      severity: "info",
      code: ErrorCode.SECRET_UNRESOLVED,
      message: `${names.length} secret reference(s) cannot be resolved here (${shown}): their syntax and scope are checked; a plan or apply of the resources holding them resolves them, and stops if it cannot`,
      hint: "nothing to do in a merge request's validate job; set them where gatesync plans and applies",
    },
  ];
}

/** What to do about a SOPS file gatesync refused (docs/user/secrets.md#sops). */
function sopsHint(code: ErrorCode): string {
  if (code === ErrorCode.SOPS_INTEGRITY) return "the file is not as sops wrote it: restore it from git, or edit it with `sops FILE` (never by hand)";
  if (code === ErrorCode.SOPS_WRONG_KEY) return "give an identity of one of the file's recipients, or add this environment's key with `sops updatekeys FILE`";
  if (code === ErrorCode.SOPS_KEY_UNSUPPORTED) return "add an age recipient to the file (`sops updatekeys` with an age key in .sops.yaml)";
  if (code === ErrorCode.SOPS_TOO_LARGE)
    return "keep the file as sops writes it: one age stanza per recipient (`sops updatekeys FILE` rewrites the list from .sops.yaml), and split large files";
  if (code === ErrorCode.SOPS_UNWRAP_BUDGET) return "reference fewer SOPS files from one environment, or give them fewer recipients (`sops updatekeys FILE`)";
  if (code === ErrorCode.SOPS_KEY_PATH) return "name a key path the file holds, e.g. ${sops:app.enc.yaml#db.password}";
  return "encrypt the file with `sops --encrypt` (age recipients) and commit what it writes";
}
