/**
 * Prints one plain closing line, `tests: N passed, N failed, N skipped`, that CI systems
 * which do not parse Vitest's own summary can read. `failed` is never 0 when the run failed:
 * besides failed tests it counts each test file that failed outside its tests (a `beforeAll`
 * that threw — its tests then count as skipped —, an `afterAll`, a file that did not load) and
 * each unhandled error, and says which files they were.
 */
import path from "node:path";
import type { SerializedError } from "vitest";
import type { Reporter, TestModule, TestRunEndReason, Vitest } from "vitest/node";

/** Errors a file raised outside its tests: in the file itself or in a suite's hooks. */
function errorsOutsideTests(module: TestModule): number {
  let n = module.errors().length;
  for (const suite of module.children.allSuites()) n += suite.errors().length;
  return n;
}

/** Test files the run left out on purpose (a service they need is absent), and why: counted as skipped. */
export interface LeftOut {
  readonly files: readonly string[];
  readonly reason: string;
}

export class SummaryReporter implements Reporter {
  constructor(private readonly leftOut: LeftOut = { files: [], reason: "" }) {}

  private vitest: Vitest | undefined;

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
    const { files, reason } = this.leftOut;
    if (files.length > 0) process.stderr.write(`${reason}: the ${files.length} test files that need it are left out (GATESYNC_TEST_PG_URL to use another)\n`);
  }

  /**
   * The left-out files this run would have run: none for the `unit` project alone (`npm run
   * test:unit`), and with file filters (`vitest run test/record`) those they match. Vitest keeps
   * the filters in a field it does not document; without it every left-out file counts.
   */
  private leftOutHere(): readonly string[] {
    const projects = this.vitest?.projects ?? [];
    if (projects.length > 0 && !projects.some((p) => p.name === "services")) return [];
    const filters = (this.vitest as { filenamePattern?: string[] } | undefined)?.filenamePattern ?? [];
    return filters.length === 0 ? this.leftOut.files : this.leftOut.files.filter((f) => filters.some((filter) => f.includes(filter)));
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError> = [], reason?: TestRunEndReason): void {
    let passed = 0;
    let failedTests = 0;
    const leftOut = this.leftOutHere();
    let skipped = leftOut.length;
    const failedFiles: string[] = [];
    for (const module of testModules) {
      let failedHere = 0;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") failedHere++;
        else skipped++;
      }
      failedTests += failedHere;
      if (errorsOutsideTests(module) > 0 || (module.state() === "failed" && failedHere === 0)) failedFiles.push(path.relative(process.cwd(), module.moduleId));
    }
    let failed = failedTests + failedFiles.length + unhandledErrors.length;
    // a run that failed for a reason none of these counts (the last resort): never "0 failed"
    const unexplained = reason === "failed" && failed === 0;
    if (unexplained) failed = 1;
    const details = [
      ...(failedFiles.length === 0 ? [] : [`${failedFiles.length} file${failedFiles.length === 1 ? "" : "s"} failed outside tests: ${failedFiles.join(", ")}`]),
      ...(unhandledErrors.length === 0 ? [] : [`${unhandledErrors.length} unhandled error${unhandledErrors.length === 1 ? "" : "s"}`]),
      ...(unexplained ? ["the run failed: see above"] : []),
      ...(leftOut.length === 0 ? [] : [`${leftOut.length} test file${leftOut.length === 1 ? "" : "s"} left out, counted as skipped: ${this.leftOut.reason}`]),
    ];
    process.stdout.write(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped${details.length === 0 ? "" : ` (${details.join("; ")})`}\n`);
  }
}
