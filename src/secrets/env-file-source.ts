/**
 * The secret source gatesync plans and applies with: `${env:NAME}` from an environment and
 * `${file:PATH}` from files inside one directory (secrets.fileRoot), which they may not leave.
 */
import { readFileSync, realpathSync } from "node:fs";
import path from "node:path";
import { isInside } from "../file-paths.js";
import { formatRef } from "./references.js";
import type { SecretRef } from "./references.js";
import { registerSecret } from "./redaction.js";
import type { SecretLookup, SecretSource } from "./resolver.js";
import { envRefusal, fileRefusal } from "./scope.js";
import type { SecretScope } from "./scope.js";

/**
 * Reads secrets from an environment and from files below one directory, within a scope (see
 * scope.ts; without one, everything resolves: library use and tests). Every value read
 * is registered with the redaction layer.
 */
export class EnvFileSecretSource implements SecretSource {
  constructor(
    private readonly env: Readonly<Record<string, string | undefined>>,
    private readonly fileRoot: string,
    private readonly scope?: SecretScope,
  ) {}

  lookup(ref: SecretRef): SecretLookup {
    const found = this.read(ref);
    if (found.ok) registerSecret(found.value);
    return found;
  }

  private read(ref: SecretRef): SecretLookup {
    if (ref.provider === "env") {
      const refused = this.scope === undefined ? undefined : envRefusal(this.scope, ref.name);
      if (refused !== undefined) return { ok: false, reason: "scope", ...refused };
      const value = this.env[ref.name];
      return value === undefined ? { ok: false, reason: "missing", message: `environment variable ${ref.name} is not set` } : { ok: true, value };
    }
    const target = path.resolve(this.fileRoot, ref.name);
    if (!isInside(target, this.fileRoot)) {
      return { ok: false, reason: "escape", message: `${formatRef(ref)} leaves the secrets directory ${this.fileRoot}` };
    }
    const reserved = this.scope === undefined ? undefined : fileRefusal(this.scope, target);
    if (reserved !== undefined) return { ok: false, reason: "scope", message: `${formatRef(ref)}: ${reserved.message}`, allow: reserved.allow };
    let real: string;
    try {
      real = realpathSync(target);
    } catch {
      return { ok: false, reason: "missing", message: `secret file ${ref.name} does not exist in ${this.fileRoot}` };
    }
    if (!isInside(real, realpathSync(this.fileRoot))) {
      return { ok: false, reason: "escape", message: `${formatRef(ref)} leaves the secrets directory ${this.fileRoot} through a link` };
    }
    const refused = this.scope === undefined ? undefined : fileRefusal(this.scope, real);
    if (refused !== undefined) return { ok: false, reason: "scope", message: `${formatRef(ref)}: ${refused.message}`, allow: refused.allow };
    try {
      // A trailing newline is almost always an artefact of how the file was written.
      return { ok: true, value: readFileSync(real, "utf8").replace(/\r?\n$/, "") };
    } catch {
      return { ok: false, reason: "unreadable", message: `secret file ${ref.name} cannot be read` };
    }
  }
}
