/**
 * A lockfile that lets an install from npm's cache (`--offline`) resolve without the registry.
 *
 * `npm ci` caches the tarballs of gatesync's lock, never the registry's package documents
 * (packuments), so in a fresh cache an offline `npm install some.tgz` cannot resolve a single
 * version range (ENOTCACHED). Written into the empty directory first, this lock pins every
 * package the install needs to the version gatesync's own lock holds, the tarballs `npm ci`
 * cached: the install then runs as a team's would, and a dependency missing from the lock still
 * fails it. Written by hand: npm has no command that derives a consumer's lock from another lock.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

interface LockEntry {
  version?: string;
  dev?: boolean;
  devOptional?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

const projectLock = path.resolve(import.meta.dirname, "../../package-lock.json");

/** Where Node's resolution finds `name` from the package at `from` (a lock path, "" the root). */
function resolveIn(packages: Record<string, LockEntry>, from: string, name: string): string | undefined {
  for (let at = from; ; at = at.slice(0, Math.max(0, at.lastIndexOf("/node_modules/")))) {
    const candidate = at === "" ? `node_modules/${name}` : `${at}/node_modules/${name}`;
    if (packages[candidate] !== undefined) return candidate;
    if (at === "") return undefined;
  }
}

/** The lock paths an install of `start`'s production dependencies reaches (required peers too). */
function reachable(packages: Record<string, LockEntry>, start: string): Set<string> {
  const seen = new Set<string>();
  const queue = [start];
  while (queue.length > 0) {
    const at = queue.pop()!;
    const entry = packages[at]!;
    const optionalPeers = new Set(Object.entries(entry.peerDependenciesMeta ?? {}).flatMap(([n, m]) => (m.optional === true ? [n] : [])));
    const peers = Object.keys(entry.peerDependencies ?? {}).filter((n) => !optionalPeers.has(n));
    for (const name of [...Object.keys(entry.dependencies ?? {}), ...Object.keys(entry.optionalDependencies ?? {}), ...peers]) {
      const found = resolveIn(packages, at, name);
      if (found === undefined || seen.has(found) || packages[found]!.dev === true) continue;
      seen.add(found);
      queue.push(found);
    }
  }
  return seen;
}

/**
 * Writes `dir`/package-lock.json for an install of gatesync's tarball (`package` undefined) or of
 * one package of gatesync's lock (`package`, e.g. "semver"), pinned to gatesync's lock.
 */
export function writeOfflineLock(dir: string, pkg?: string): void {
  const lock = JSON.parse(readFileSync(projectLock, "utf8")) as { packages: Record<string, LockEntry> };
  const start = pkg === undefined ? "" : `node_modules/${pkg}`;
  if (lock.packages[start] === undefined) throw new Error(`${pkg ?? "gatesync"} is not in gatesync's package-lock.json`);
  const paths = reachable(lock.packages, start);
  if (pkg !== undefined) paths.add(start);
  const own = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as { name: string; version: string };
  const packages: Record<string, LockEntry & { name?: string }> = { "": { name: own.name, version: own.version } };
  for (const at of [...paths].sort()) {
    // the consumer installs these as its own production tree: gatesync's dev markers do not apply
    const { dev: _dev, devOptional: _devOptional, ...entry } = lock.packages[at]!;
    packages[at] = entry;
  }
  writeFileSync(
    path.join(dir, "package-lock.json"),
    `${JSON.stringify({ name: own.name, version: own.version, lockfileVersion: 3, requires: true, packages }, null, 2)}\n`,
  );
}
