/**
 * One error vocabulary for the whole pipeline.
 *
 * - `Diagnostic` is a located finding (error or warning) collected while loading and
 *   validating: a repository reports every problem at once, so these are gathered, not thrown.
 * - `GatesyncError` (and subclasses) is thrown when a step cannot continue at all
 *   (unreadable config, corrupt state, refused HTTP call). Each has a stable `code`.
 *
 * Every code is listed, with its meaning, in docs/user/errors.md. Messages pass through the
 * redaction layer: a secret value registered before the error is made never appears in it.
 */
import { stripControls } from "./text/bounded-text.js";
import { scrubText } from "./secrets/redaction.js";
import type { Paint } from "./text/style.js";

export const ErrorCode = {
  // reading files
  FILE_READ: "FILE_READ",
  FILE_TOO_LARGE: "FILE_TOO_LARGE",
  FILE_NOT_TEXT: "FILE_NOT_TEXT",
  TOO_MANY_FILES: "TOO_MANY_FILES",
  PATH_ESCAPE: "PATH_ESCAPE",
  // YAML / JSON syntax
  YAML_SYNTAX: "YAML_SYNTAX",
  YAML_DUPLICATE_KEY: "YAML_DUPLICATE_KEY",
  YAML_ALIAS_LIMIT: "YAML_ALIAS_LIMIT",
  YAML_TOO_DEEP: "YAML_TOO_DEEP",
  YAML_TOO_MANY_DOCUMENTS: "YAML_TOO_MANY_DOCUMENTS",
  TOO_MANY_DOCUMENTS: "TOO_MANY_DOCUMENTS",
  // resources
  NOT_A_RESOURCE: "NOT_A_RESOURCE",
  UNKNOWN_KIND: "UNKNOWN_KIND",
  SCHEMA_VIOLATION: "SCHEMA_VIOLATION",
  DUPLICATE_NAME: "DUPLICATE_NAME",
  DUPLICATE_IDENTITY: "DUPLICATE_IDENTITY",
  UNRESOLVED_REFERENCE: "UNRESOLVED_REFERENCE",
  RULE_VIOLATION: "RULE_VIOLATION",
  BATCH_ROUTE_RESERVED: "BATCH_ROUTE_RESERVED",
  DEPRECATED_FIELD: "DEPRECATED_FIELD",
  DEFINITION_FILE: "DEFINITION_FILE",
  OPENAPI_INVALID: "OPENAPI_INVALID",
  OPENAPI_UNCHECKED_REF: "OPENAPI_UNCHECKED_REF",
  SECRET_UNRESOLVED: "SECRET_UNRESOLVED",
  SECRET_SYNTAX: "SECRET_SYNTAX",
  SECRET_SCOPE: "SECRET_SCOPE",
  SECRET_TOO_SHORT: "SECRET_TOO_SHORT",
  SECRET_LITERAL: "SECRET_LITERAL",
  SOPS_PLAINTEXT: "SOPS_PLAINTEXT",
  SOPS_OUTSIDE_SCOPE: "SOPS_OUTSIDE_SCOPE",
  SOPS_FILE_IGNORED: "SOPS_FILE_IGNORED",
  SOPS_INVALID: "SOPS_INVALID",
  SOPS_INTEGRITY: "SOPS_INTEGRITY",
  SOPS_KEY_PATH: "SOPS_KEY_PATH",
  SOPS_NO_IDENTITY: "SOPS_NO_IDENTITY",
  SOPS_WRONG_KEY: "SOPS_WRONG_KEY",
  SOPS_KEY_UNSUPPORTED: "SOPS_KEY_UNSUPPORTED",
  SOPS_TOO_LARGE: "SOPS_TOO_LARGE",
  SOPS_UNWRAP_BUDGET: "SOPS_UNWRAP_BUDGET",
  REFERENCE_UNKNOWN: "REFERENCE_UNKNOWN",
  // environments (docs/user/environments.md)
  VALUE_MISSING: "VALUE_MISSING",
  VALUE_UNUSED: "VALUE_UNUSED",
  PATCH_INVALID: "PATCH_INVALID",
  // governance rules (Spectral rulesets: docs/user/rules.md)
  RULESET_VIOLATION: "RULESET_VIOLATION",
  RULE_TIMEOUT: "RULE_TIMEOUT",
  RULES_CACHE_TRACKED: "RULES_CACHE_TRACKED",
  // configuration
  CONFIG_INVALID: "CONFIG_INVALID",
  CONFIG_READ: "CONFIG_READ",
  CONFIG_UNKNOWN_ENVIRONMENT: "CONFIG_UNKNOWN_ENVIRONMENT",
  CONFIG_SETTING_IGNORED: "CONFIG_SETTING_IGNORED",
  CONFIG_TOKEN_SHARED: "CONFIG_TOKEN_SHARED",
  // where resources come from
  SOURCE_FETCH: "SOURCE_FETCH",
  SOURCE_INVALID: "SOURCE_INVALID",
  SOURCE_CHANGED: "SOURCE_CHANGED",
  SOURCE_NOT_PROMOTED: "SOURCE_NOT_PROMOTED",
  // promotion (docs/user/promotion.md)
  PROMOTION_REFUSED: "PROMOTION_REFUSED",
  PROMOTION_NOT_EARLIER: "PROMOTION_NOT_EARLIER",
  PROMOTION_AMBIGUOUS: "PROMOTION_AMBIGUOUS",
  // state, plan, apply, sandbox
  STATE_CORRUPT: "STATE_CORRUPT",
  STATE_LOCKED: "STATE_LOCKED",
  STATE_LOCK_LOST: "STATE_LOCK_LOST",
  STATE_IO: "STATE_IO",
  STATE_VERSION: "STATE_VERSION",
  STATE_CHANGED: "STATE_CHANGED",
  STATE_OLD_FORMAT: "STATE_OLD_FORMAT",
  STATE_EMPTY: "STATE_EMPTY",
  STATE_FOREIGN: "STATE_FOREIGN",
  STATE_UNREACHABLE: "STATE_UNREACHABLE",
  STATE_SQLITE_MISSING: "STATE_SQLITE_MISSING",
  STATE_POOL_TIMEOUT: "STATE_POOL_TIMEOUT",
  DEPENDENCY_CYCLE: "DEPENDENCY_CYCLE",
  OWNED_ELSEWHERE: "OWNED_ELSEWHERE",
  VALIDATION_FAILED: "VALIDATION_FAILED",
  USAGE: "USAGE",
  INTERNAL: "INTERNAL",
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** `info`: a governance rule's `info` or `hint` finding (reported, never failing). */
export type Severity = "error" | "warning" | "info";

/** Where a finding is: any of file position, resource and field path. */
export interface Location {
  /** Path of the file, relative to the repository root where there is one. */
  readonly file?: string | undefined;
  /** 1-based line. */
  readonly line?: number | undefined;
  /** 1-based column. */
  readonly column?: number | undefined;
  /** `Kind/name` of the resource. */
  readonly resource?: string | undefined;
  /** Field path inside the resource, dotted: `spec.access_rights.petstore.api_id`. */
  readonly path?: string | undefined;
}

export interface Diagnostic extends Location {
  readonly severity: Severity;
  readonly code: ErrorCode;
  /** What is wrong. */
  readonly message: string;
  /** What would be right, or how to fix it. */
  readonly hint?: string | undefined;
  /** The governance rule (of a Spectral ruleset) that made the finding: RULESET_VIOLATION. */
  readonly rule?: string | undefined;
}

export class GatesyncError extends Error {
  readonly code: ErrorCode;
  readonly hint: string | undefined;
  readonly location: Location | undefined;

  constructor(code: ErrorCode, message: string, opts: { hint?: string; location?: Location; cause?: unknown } = {}) {
    super(scrubText(message), opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = new.target.name;
    this.code = code;
    this.hint = opts.hint === undefined ? undefined : scrubText(opts.hint);
    this.location = opts.location;
  }

  toDiagnostic(): Diagnostic {
    return {
      severity: "error",
      code: this.code,
      message: this.message,
      ...(this.hint === undefined ? {} : { hint: this.hint }),
      ...this.location,
    };
  }
}

type Options = ConstructorParameters<typeof GatesyncError>[2];
type Family<Prefix extends string> = Extract<ErrorCode, `${Prefix}${string}`>;

/*
 * Each class carries the codes of its own family only (the constructors say which), so a
 * class and its code cannot disagree: a failed fetch is a SourceError with SOURCE_FETCH, a
 * command line that cannot be followed is a UsageError, a bug is an InternalError.
 */

/** gatesync.yaml cannot be read, or a setting cannot work here. */
export class ConfigError extends GatesyncError {
  constructor(code: Family<"CONFIG_">, message: string, opts?: Options) {
    super(code, message, opts);
  }
}

/** Where the resources come from (a git source, a directory) cannot give them. */
export class SourceError extends GatesyncError {
  constructor(code: Family<"SOURCE_"> | typeof ErrorCode.PATH_ESCAPE, message: string, opts?: Options) {
    super(code, message, opts);
  }
}

/**
 * A promotion or rollback the rules refuse (docs/user/promotion.md): the message names the gate;
 * PROMOTION_NOT_EARLIER: a rollback to a revision not before the one in force (`--forward` goes
 * there); PROMOTION_AMBIGUOUS: a revision prefix several revisions start with.
 */
export class PromotionError extends GatesyncError {
  constructor(message: string, opts?: Options, code: Family<"PROMOTION_"> = ErrorCode.PROMOTION_REFUSED) {
    super(code, message, opts);
  }
}

/** A file cannot be read as a resource file. */
export class LoadError extends GatesyncError {
  constructor(code: Family<"FILE_"> | typeof ErrorCode.PATH_ESCAPE | typeof ErrorCode.TOO_MANY_FILES, message: string, opts?: Options) {
    super(code, message, opts);
  }
}

/** The state cannot be read, written, locked or trusted. */
export class StateError extends GatesyncError {
  constructor(code: Family<"STATE_">, message: string, opts?: Options) {
    super(code, message, opts);
  }
}

/** The resources cannot be planned (a reference cycle). */
export class PlanError extends GatesyncError {
  constructor(code: typeof ErrorCode.DEPENDENCY_CYCLE, message: string, opts?: Options) {
    super(code, message, opts);
  }
}

/** The command line, or a file or object it names, cannot be used as asked. */
export class UsageError extends GatesyncError {
  constructor(message: string, hint?: string | Options) {
    super(ErrorCode.USAGE, message, typeof hint === "string" ? { hint } : hint);
  }
}

/** A bug: something gatesync itself should never do. */
export class InternalError extends GatesyncError {
  constructor(message: string, opts?: Options) {
    super(ErrorCode.INTERNAL, message, opts);
  }
}

/** Raised when a set of diagnostics contains errors and the caller wants to stop. */
export class ValidationFailed extends GatesyncError {
  readonly diagnostics: readonly Diagnostic[];
  constructor(diagnostics: readonly Diagnostic[]) {
    const errors = diagnostics.filter((d) => d.severity === "error").length;
    super(ErrorCode.VALIDATION_FAILED, `${errors} error(s) in the configuration`, {
      hint: "run `gatesync validate` to list them",
    });
    this.diagnostics = diagnostics;
  }
}

export function hasErrors(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === "error");
}

/** `file:line:column` (as far as known), for messages. */
export function formatPosition(loc: Location): string {
  if (loc.file === undefined) return "";
  if (loc.line === undefined) return loc.file;
  return loc.column === undefined ? `${loc.file}:${loc.line}` : `${loc.file}:${loc.line}:${loc.column}`;
}

/** A finding as one line (two with its hint) for people: position, resource, path, message. */
export function formatDiagnostic(d: Diagnostic, paint: Paint = (_s, t) => t): string {
  // a finding's file, path, message and hint carry a repository's (or a server's) text
  const where = stripControls([formatPosition(d), d.resource, d.path].filter((x) => x !== undefined && x !== "").join(" "));
  const colour = d.severity === "error" ? "red" : d.severity === "warning" ? "yellow" : "cyan";
  const code = stripControls(d.rule === undefined ? d.code : `${d.code} ${d.rule}`);
  const head = `${paint(colour, d.severity)}[${code}] ${paint("bold", where)}${where === "" ? "" : ": "}${stripControls(d.message)}`;
  return d.hint === undefined ? head : `${head}\n    ${paint("dim", `hint: ${stripControls(d.hint)}`)}`;
}

/** Stable order for reports: by file, line, column, then code. */
export function compareDiagnostics(a: Diagnostic, b: Diagnostic): number {
  return (
    (a.file ?? "").localeCompare(b.file ?? "") ||
    (a.line ?? 0) - (b.line ?? 0) ||
    (a.column ?? 0) - (b.column ?? 0) ||
    a.code.localeCompare(b.code) ||
    a.message.localeCompare(b.message)
  );
}
