/**
 * The door to `yaml`: no module outside src/yaml/ imports it (test/architecture/yaml-door.test.ts).
 * It is loaded when first asked for (synchronously: the parse is). From the sources and tsc's
 * dist/ it is required from node_modules; the bundle replaces this module by one that runs
 * `yaml` as the script the build made of it, with its V8 code cache (scripts/bundle/bundle.ts):
 * required, it is 72 CommonJS files read and compiled afresh by every process that locates a
 * finding (~50 ms of a small repository's `validate`). The types below are erased at build, so
 * importing them loads nothing.
 */
import { createRequire } from "node:module";
import type * as Yaml from "yaml";

export type YamlLibrary = typeof Yaml;
export type { Document, LineCounter, Node as YamlNode } from "yaml";

export function loadYamlLibrary(): YamlLibrary {
  return createRequire(import.meta.url)("yaml") as YamlLibrary;
}
