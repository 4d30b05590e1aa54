/**
 * The key of the keyed hashes that stand for sensitive values (markers.ts): GATESYNC_HASH_KEY
 * when set, else the one the state holds, else a new one the state stores on its first write.
 */
import { randomBytes } from "node:crypto";
import { hashKeyVariable } from "./credentials.js";

export interface HashKey {
  readonly key: string;
  /** The key the state must store on its first write (undefined when it holds it or the environment does). */
  readonly store: string | undefined;
}

export function hashKeyFor(env: Readonly<Record<string, string | undefined>>, stateKey: string | undefined): HashKey {
  const fromEnv = env[hashKeyVariable];
  if (fromEnv !== undefined && fromEnv !== "") return { key: fromEnv, store: undefined };
  if (stateKey !== undefined) return { key: stateKey, store: stateKey };
  const key = randomBytes(32).toString("hex");
  return { key, store: key };
}
