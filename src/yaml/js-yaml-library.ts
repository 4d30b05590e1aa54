/**
 * The door to `js-yaml` (the value-only parse of load/fast-yaml.ts): no module outside src/yaml/
 * imports it (test/architecture/yaml-door.test.ts); its `dump` is the plain stringify of files
 * written without comments to keep or an order to follow (import's resource files). A plain re-export: js-yaml is small and
 * bundled, and the value-only parse runs for nearly every file, so it loads with its importer.
 */
export { Schema, Type, dump, loadAll } from "js-yaml";
export type { LoadOptions, State } from "js-yaml";
