/**
 * `yaml`, loaded when first asked for (synchronously: the parse is). From the sources and tsc's
 * dist/ it is required from node_modules; the bundle replaces this module by one that runs
 * `yaml` as the script the build made of it, with its V8 code cache (scripts/bundle/bundle.ts):
 * required, it is 72 CommonJS files read and compiled afresh by every process that locates a
 * finding (~50 ms of a small repository's `validate`).
 */
import { createRequire } from "node:module";
import type * as YamlLibrary from "yaml";

export function loadYamlLibrary(): typeof YamlLibrary {
  return createRequire(import.meta.url)("yaml") as typeof YamlLibrary;
}
