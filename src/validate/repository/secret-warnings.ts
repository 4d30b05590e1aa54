/**
 * Secrets written in clear in the repository, which `validate` warns about (a merge request's
 * job runs it): a literal in a resource's field whose name says it holds a secret, and what the
 * SOPS files the references read hold in clear (sops-findings.ts). Values are never shown.
 */
import { realpathSync } from "node:fs";
import path from "node:path";
import { ErrorCode } from "../../errors.js";
import type { Diagnostic } from "../../errors.js";
import { formatPath } from "../../text/field-path.js";
import type { PathSegment } from "../../text/field-path.js";
import { isInside, repositoryPath } from "../../file-paths.js";
import { scanReferences } from "../../secrets/references.js";
import type { SecretSource } from "../../secrets/resolver.js";
import { namesASecret } from "../../secrets/secret-names.js";
import type { Locate } from "../findings.js";

/** A literal (no `${…}` reference) in a field of `spec` whose name says it holds a secret, each located. */
export function literalSecrets(
  spec: unknown,
  place: { readonly file: string; readonly index: number; readonly resource: string | undefined },
  locate: Locate,
): Diagnostic[] {
  const out: Diagnostic[] = [];
  const walk = (value: unknown, at: PathSegment[]): void => {
    if (Array.isArray(value)) value.forEach((v, i) => walk(v, [...at, i]));
    else if (value !== null && typeof value === "object") for (const [k, v] of Object.entries(value)) walk(v, [...at, k]);
    else if (typeof value === "string" && value !== "" && scanReferences(value).length === 0 && !value.includes("$${")) {
      const name = [...at].reverse().find((s): s is string => typeof s === "string");
      if (name === undefined || !namesASecret(name)) return;
      const field = formatPath(["spec", ...at]);
      out.push({
        severity: "warning",
        code: ErrorCode.SECRET_LITERAL,
        file: place.file,
        ...(place.resource === undefined ? {} : { resource: place.resource }),
        path: field,
        ...locate(place.file, place.index, ["spec", ...at]),
        message: `${field} names a secret but holds a literal: it is in git in clear, and in every clone of the repository`,
        hint: `encrypt it with sops in a file below secrets.fileRoot (\`sops set secrets/app.enc.yaml '["${name}"]' '"…"'\`) and write \`\${sops:app.enc.yaml#${name}}\` here, or \`\${env:NAME}\` for a variable set where gatesync runs`,
      });
    }
  };
  walk(spec, []);
  return out;
}

/** The warnings about the SOPS files the run's references read, each located in its file; named from `root` (the run's resource root) as findings are. */
export function sopsFileWarnings(source: SecretSource | undefined, root: string, prefix: string): Diagnostic[] {
  const fromRoot = (real: string): string => path.relative(root, real).split(path.sep).join("/");
  const found = source?.sopsFindings?.((real) => repositoryPath(prefix, fromRoot(real))) ?? [];
  return found.map((f) => ({
    severity: "warning",
    code: ErrorCode[f.code],
    file: fromRoot(f.real),
    line: f.line,
    column: f.column,
    path: f.keyPath,
    message: f.message,
    hint: f.hint,
  }));
}

/**
 * Each SOPS file among the resource files (a file's `sopsLine`) that lies outside the secrets
 * directory: no `${sops:}` reference of the environment reaches it. Named from `root` as findings are.
 */
/** What `strayedSopsFiles` reads of a file's verdict (check-file.ts's FileVerdict, whose checks call this module). */
type CheckedFile = { readonly path: string; readonly absolute: string; readonly sopsLine?: number };

export function strayedSopsFiles(records: Iterable<CheckedFile>, source: SecretSource | undefined, root: string, prefix: string): Diagnostic[] {
  const directory = source?.secretsDirectory?.();
  if (directory === undefined) return [];
  const shown = (p: string): string => repositoryPath(prefix, path.relative(root, p).split(path.sep).join("/"));
  const out: Diagnostic[] = [];
  for (const file of records) {
    if (file.sopsLine === undefined || isInside(realOrResolved(file.absolute), directory)) continue;
    const target = `${shown(directory)}/${path.basename(file.path)}`;
    out.push({
      severity: "warning",
      code: ErrorCode.SOPS_OUTSIDE_SCOPE,
      file: file.path,
      line: file.sopsLine,
      column: 1,
      message: `${shown(file.absolute)} is a SOPS file, but it lies outside secrets.fileRoot (${shown(directory)}): no \${sops:} reference of this environment can read it`,
      hint: `move it below secrets.fileRoot (\`git mv ${shown(file.absolute)} ${target}\`) and read its values with \`\${sops:${path.basename(file.path)}#KEY}\`, or remove it if no resource needs it`,
    });
  }
  return out;
}

function realOrResolved(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}
