/**
 * The reference resolver the rule runner gives Spectral (its `resolver` option): Spectral's own
 * (@stoplight/spectral-ref-resolver), with no reader for any scheme — nothing is read or
 * fetched — and a short path for a document without any `$ref`.
 *
 * Spectral resolves every document before linting it, and its resolver crawls the whole value,
 * builds a dependency graph and copies the document (immer) even when there is nothing to
 * resolve: for the five rules of bench/rules.ts on 10,000 resource documents, that was ~40% of
 * Spectral's time. A document without `$ref` resolves to itself: the short path returns what
 * the resolver returns then — the document as it is, a graph of the one document (the
 * `unreferencedReusableObject` function reads it) with an empty reference map, no error —
 * without the crawl. A document with any `$ref` goes through the resolver as it is.
 */
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

interface GraphLike {
  addNode(name: string, data: unknown): void;
}

/** What Spectral reads of a resolution (json-ref-resolver's IResolveResult). */
export interface Resolution {
  readonly result: unknown;
  readonly graph: GraphLike;
  readonly refMap: Record<string, string>;
  readonly errors: readonly unknown[];
}

interface ResolveOpts {
  readonly baseUri?: string;
}

interface ResolverClass {
  new (opts: { resolvers: Record<string, never>; uriCache: unknown }): { resolve(source: unknown, opts?: ResolveOpts): Promise<Resolution> };
}

interface RefResolverModule {
  readonly Resolver: ResolverClass;
  readonly ResolverDepGraph: new (opts: { circular: boolean }) => GraphLike;
}

/** Whether any mapping inside `value` has a `$ref` key (iterative: a deep document does not overflow the stack). */
export function hasRef(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== "object") continue;
    if (Array.isArray(node)) {
      for (const item of node) if (item !== null && typeof item === "object") stack.push(item);
      continue;
    }
    if (Object.prototype.hasOwnProperty.call(node, "$ref")) return true;
    for (const key in node) {
      const item = (node as Record<string, unknown>)[key];
      if (item !== null && typeof item === "object") stack.push(item);
    }
  }
  return false;
}

/** Spectral's resolver class with the short path (made when Spectral is loaded: rule-runner.ts loads it on first use). */
export function localResolver(uriCache: unknown): unknown {
  const { Resolver, ResolverDepGraph } = require("@stoplight/spectral-ref-resolver") as RefResolverModule;
  class LocalFirstResolver extends Resolver {
    override resolve(source: unknown, opts?: ResolveOpts): Promise<Resolution> {
      if (hasRef(source)) return super.resolve(source, opts);
      // as the resolver makes it (json-ref-resolver: a circular-tolerant graph, nodes by base URI)
      const graph = new ResolverDepGraph({ circular: true });
      graph.addNode(opts?.baseUri ?? "", { refMap: {}, data: source });
      return Promise.resolve({ result: source, graph, refMap: {}, errors: [] });
    }
  }
  return new LocalFirstResolver({ resolvers: {}, uriCache });
}
