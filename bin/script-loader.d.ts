import type { Script } from "node:vm";

/** Compiles `file` (a script of the build, with its V8 code cache when there is one) and runs it. */
export function runScript(file: string): { exports: Record<string, unknown>; script: Script };
