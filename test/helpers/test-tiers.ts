/**
 * The two tiers of the suite, read from what each test file imports (so a file cannot sit in the
 * wrong tier: moving it means changing its imports). `vitest.config.ts` builds its projects from
 * these lists and `test/architecture/test-tiers.test.ts` checks them.
 * - `unit`: everything in this process — the sandbox over real HTTP on 127.0.0.1, temp
 *   directories, the CLI's `main` called in-process. `npm run test:unit`.
 * - `slow`: in this process too, but over 2 s a file (`slowInProcess`).
 * - `services`: a file that starts a process (node:child_process, gatesync as a child, git, age),
 *   reaches PostgreSQL or drives a browser, directly or through a helper of test/.
 * `postgres` lists the files that need PostgreSQL (a subset of `services`): they are left out, with
 * a printed reason, where it does not answer (`vitest.config.ts`).
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

const projectRoot = path.resolve(import.meta.dirname, "..", "..");

/** Packages whose import starts a process, opens a connection to PostgreSQL or drives a browser. */
export const servicePackages = ["node:child_process", "child_process", "pg", "playwright-core", "simple-git"] as const;

/** The helper of test/ that reaches PostgreSQL: a file that imports it (directly or through a helper) needs PostgreSQL. */
export const postgresHelper = "test/helpers/postgres.ts";

/**
 * Helpers that import node:child_process for some exports only: the file is a service file when
 * it uses one of those. `runCli` calls the CLI's `main` in this process; `spawnCli` runs it as a child.
 */
const processExports: Readonly<Record<string, readonly string[]>> = {
  "test/helpers/cli.ts": ["spawnCli", "cliArgs", "tsxLoader", "compiledIsFresh"],
};

/**
 * In-process files too slow for the fast loop, with the seconds each took in the `unit` run on two
 * busy cores (2026-12): a file over 2 s goes here and into `slow` (fuzzing, the whole tree read,
 * send-rate timing, large corpora). `test/architecture/test-tiers.test.ts` keeps the list true.
 */
export const slowInProcess: ReadonlyMap<string, number> = new Map([
  ["test/apply/abort-listeners.test.ts", 3.4],
  ["test/apply/apply-guards.test.ts", 4.6],
  ["test/apply/apply.test.ts", 15.9],
  ["test/apply/in-doubt-hints.test.ts", 2.9],
  ["test/apply/orphans.test.ts", 4.0],
  ["test/apply/recorder.model.test.ts", 2.1],
  ["test/apply/renames.test.ts", 2.4],
  ["test/apply/send-rate.test.ts", 20.6],
  ["test/architecture/size-rules.test.ts", 18.0],
  ["test/cli/daemon-answers.test.ts", 3.4],
  ["test/conformance/api-definition-validation.test.ts", 2.3],
  ["test/conformance/large-documents.test.ts", 3.3],
  ["test/conformance/llm-credential.test.ts", 2.1],
  ["test/conformance/org-keys.test.ts", 4.5],
  ["test/conformance/orphan-deactivation.test.ts", 6.9],
  ["test/conformance/published-schemas.test.ts", 5.9],
  ["test/daemon/reconciler.test.ts", 2.9],
  ["test/environments/example.test.ts", 4.6],
  ["test/fleet/lease-model.test.ts", 9.0],
  ["test/plan/breaking-corpus.test.ts", 5.0],
  ["test/plan/breaking-cost.test.ts", 2.4],
  ["test/plan/outgoing.test.ts", 2.7],
  ["test/plan/ownership-check.test.ts", 3.8],
  ["test/plan/renames.test.ts", 3.2],
  ["test/plan/render-chunks.test.ts", 3.8],
  ["test/plan/render.test.ts", 9.9],
  ["test/reliability/faults.test.ts", 17.5],
  ["test/reliability/hostile-input.test.ts", 11.0],
  ["test/rules/rule-thread.test.ts", 2.1],
  ["test/rules/rules-cli.test.ts", 8.1],
  ["test/rules/rules-docs.test.ts", 7.4],
  ["test/rules/rules-trust.test.ts", 8.9],
  ["test/sandbox/contract.test.ts", 3.1],
  ["test/sandbox/management.test.ts", 2.3],
  ["test/select/selection-apply.test.ts", 6.0],
  ["test/teams/two-teams.test.ts", 4.6],
  ["test/validate/duplicate-keys.property.test.ts", 6.1],
  ["test/validate/fast-yaml.property.test.ts", 11.0],
  ["test/validate/loader.property.test.ts", 4.0],
  ["test/validate/oas-corpus.test.ts", 2.4],
  ["test/validate/precompiled-schemas.test.ts", 13.0],
  ["test/validate/unknown-references.test.ts", 2.4],
]);

export interface Tiers {
  /** In this process and fast: `npm run test:unit`. */
  readonly unit: readonly string[];
  /** In this process but slow (`slowInProcess`). */
  readonly slow: readonly string[];
  readonly services: readonly string[];
  readonly postgres: readonly string[];
  /** For each service file, the first import that puts it there (what the architecture test prints). */
  readonly reasons: ReadonlyMap<string, string>;
}

const relative = (file: string): string => path.relative(projectRoot, file).split(path.sep).join("/");

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "fixtures" ? [] : testFiles(full);
    return entry.name.endsWith(".test.ts") ? [relative(full)] : [];
  });
}

/** The modules a file imports: packages by name, files of the project by path relative to its root. */
function importsOf(file: string): string[] {
  const text = readFileSync(path.join(projectRoot, file), "utf8");
  return ts
    .preProcessFile(text, true, true)
    .importedFiles.map(({ fileName }) =>
      fileName.startsWith(".") ? relative(path.resolve(projectRoot, path.dirname(file), fileName).replace(/\.js$/, ".ts")) : fileName,
    );
}

/** Why `file` needs a service ("" when it needs none), following its imports inside test/ (src/ is not followed). */
function serviceReason(file: string, seen: Map<string, string>, target: readonly string[]): string {
  const known = seen.get(file);
  if (known !== undefined) return known;
  seen.set(file, "");
  const text = readFileSync(path.join(projectRoot, file), "utf8");
  let reason = "";
  for (const imported of importsOf(file)) {
    const names = target === servicePackages ? processExports[imported] : undefined;
    if (target.includes(imported)) reason = `imports ${imported}`;
    else if (names !== undefined) {
      const used = names.find((n) => new RegExp(`\\b${n}\\b`).test(text));
      if (used !== undefined) reason = `uses ${used} of ${imported}`;
    } else if (imported.startsWith("test/")) {
      const inner = serviceReason(imported, seen, target);
      if (inner !== "") reason = `imports ${imported}, which ${inner}`;
    }
    if (reason !== "") break;
  }
  seen.set(file, reason);
  return reason;
}

/** The suite's test files by tier, read now from the tree. */
export function testTiers(): Tiers {
  const files = testFiles(path.join(projectRoot, "test")).sort();
  const serviceSeen = new Map<string, string>();
  const postgresSeen = new Map<string, string>();
  const reasons = new Map<string, string>();
  for (const file of files) {
    const reason = serviceReason(file, serviceSeen, servicePackages);
    if (reason !== "") reasons.set(file, reason);
  }
  return {
    unit: files.filter((f) => !reasons.has(f) && !slowInProcess.has(f)),
    slow: files.filter((f) => !reasons.has(f) && slowInProcess.has(f)),
    services: files.filter((f) => reasons.has(f)),
    postgres: files.filter((f) => serviceReason(f, postgresSeen, [postgresHelper]) !== ""),
    reasons,
  };
}
