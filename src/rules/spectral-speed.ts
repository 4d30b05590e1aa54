/**
 * Two costs Spectral pays again for every document, paid once per thread here. Measured on the
 * benchmark's OpenAPI documents (bench/rules.ts), they were most of a lint's time:
 *
 * - its runner compiles the rules' JSONPath expressions (nimma: code generation and `Function`)
 *   for each document, though they are the same for every document of a ruleset and format.
 *   The compiled query keeps no state between queries (the callbacks are arguments), so one
 *   compiled instance per set of expressions serves them all.
 * - its `schema` function makes new ajv instances for each document — compiling JSON Schema's
 *   meta-schemas and then, for `oas3-schema`, the whole OpenAPI schema again. One set of
 *   instances serves the thread; a schema whose `$id` was seen with other content gets fresh
 *   instances (as Spectral would); one without `$id` is compiled once per content (documents of
 *   a repository repeat their schemas: the examples' checks compile each again otherwise); and
 *   the shared instances are renewed after a bounded number of compilations, since ajv keeps
 *   every schema it compiled.
 *
 * Both replace an export of a module inside Spectral's packages; when a package's shape is not
 * the one expected (another version), that part is left as it is: slower, never different
 * (test/rules/rules-fast-path.test.ts compares with Spectral as it ships).
 *
 * Why not through Spectral's supported extension points (the resolver and the parsed document
 * are: rule-runner.ts): Spectral 1.24 has none for either. Its Runner makes the nimma query in a
 * module-level function. For the schemas, wrapping the rules' `then.function` (the public
 * `Rule.then`) with a context whose `documentInventory` is one key per thread would share the ajv
 * instances, but not the compilations that matter: `oasExample` (the example rules) deep-copies
 * each schema before handing it to `schema`, whose cache is by object, so each example's schema
 * would be compiled again for every document — only a cache by content inside
 * `createAjvInstances` avoids that, and it is not reachable from a rule.
 */
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);

type NimmaClass = new (expressions: readonly string[], opts: unknown) => object;

function reuseCompiledQueries(): boolean {
  const core = createRequire(require.resolve("@stoplight/spectral-core"));
  const legacy = core("nimma/legacy") as { default?: unknown };
  if (typeof legacy.default !== "function") return false;
  const Original = legacy.default as NimmaClass;
  const compiled = new Map<string, object>();
  // a constructor returning the kept instance: `new` gives that object
  function CachedNimma(expressions: readonly string[], opts: unknown): object {
    const key = expressions.join("\u0000");
    let kept = compiled.get(key);
    if (kept === undefined) {
      kept = new Original(expressions, opts);
      if (compiled.size >= 256) compiled.delete(compiled.keys().next().value!);
      compiled.set(key, kept);
    }
    return kept;
  }
  legacy.default = CachedNimma;
  return true;
}

type Validate = (schema: Record<string, unknown>, dialect: string, allErrors: boolean) => unknown;

/** A schema's content as a key; undefined for one that refers to itself (resolved recursive `$ref`s). */
function contentKey(schema: Record<string, unknown>, dialect: string, allErrors: boolean): string | undefined {
  try {
    return `${dialect}\0${allErrors}\0${JSON.stringify(schema)}`;
  } catch {
    return undefined;
  }
}

/** Compilations after which the shared ajv instances are renewed (ajv holds each compiled schema). */
const compilationsPerInstance = 2_000;

function shareSchemaCompilers(): boolean {
  const functionsMain = require.resolve("@stoplight/spectral-functions");
  const ajvModule = require(path.join(path.dirname(functionsMain), "schema/ajv.js")) as { createAjvInstances?: unknown };
  if (typeof ajvModule.createAjvInstances !== "function") return false;
  const original = ajvModule.createAjvInstances as () => Validate;
  let shared = original();
  let calls = 0;
  const byId = new Map<string, Record<string, unknown>>();
  // schemas without an $id by their content: documents of one repository repeat theirs (an
  // Error object, a page of results), and a compiled schema depends on nothing else
  const byContent = new Map<string, unknown>();
  const sharedValidate: Validate = (schema, dialect, allErrors) => {
    const id = schema.$id;
    if (typeof id === "string") {
      const seen = byId.get(id);
      // another schema under a known $id: its own instances, as Spectral gives each document
      if (seen !== undefined && seen !== schema && JSON.stringify(seen) !== JSON.stringify(schema)) return original()(schema, dialect, allErrors);
      byId.set(id, schema);
      return shared(schema, dialect, allErrors);
    }
    const key = contentKey(schema, dialect, allErrors);
    if (key === undefined) return shared(schema, dialect, allErrors);
    const kept = byContent.get(key);
    if (kept !== undefined) return kept;
    if (++calls > compilationsPerInstance) {
      shared = original();
      calls = 0;
      byId.clear();
      byContent.clear();
    }
    const compiled = shared(schema, dialect, allErrors);
    byContent.set(key, compiled);
    return compiled;
  };
  ajvModule.createAjvInstances = () => sharedValidate;
  return true;
}

let applied = false;

/** Applies both (once per thread), before the first lint. */
export function speedUpSpectral(): void {
  if (applied) return;
  applied = true;
  try {
    reuseCompiledQueries();
    shareSchemaCompilers();
  } catch {
    // another layout of Spectral's packages: linted as Spectral does
  }
}
