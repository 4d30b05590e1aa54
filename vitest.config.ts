import { defineConfig } from "vitest/config";
import { postgresAnswers, servicesRequired, testPostgresUrl } from "./test/helpers/postgres-probe.js";
import { SummaryReporter } from "./test/helpers/summary-reporter.js";
import { testTiers } from "./test/helpers/test-tiers.js";

// Three projects (test/helpers/test-tiers.ts): `unit` runs in this process and fast
// (`npm run test:unit`), `slow` in this process but over 2 s a file, `services` starts processes,
// reaches PostgreSQL or drives a browser (read from each file's imports). `vitest run` runs all three.
const tiers = testTiers();

// The files that need PostgreSQL are left out where it does not answer, with the reason printed
// (by the summary reporter, first and in its closing line); never under GATESYNC_REQUIRE_SERVICES=1 (.ci/run).
const leftOut = servicesRequired || (await postgresAnswers()) ? [] : tiers.postgres;
const leftOutReason = `PostgreSQL does not answer at ${new URL(testPostgresUrl).host}`;

export default defineConfig({
  test: {
    // records compared by what their payloads hold (test/helpers/payload-equality.ts)
    setupFiles: ["test/helpers/payload-equality.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    reporters: ["default", new SummaryReporter({ files: leftOut, reason: leftOutReason })],
    // the suite runs on CI runners (CI=true there), but the commands it runs stand for a user's
    // own machine: `gatesync plan` refuses an empty state in CI. The tests of that set CI themselves.
    env: { CI: "" },
    projects: [
      { extends: true, test: { name: "unit", include: [...tiers.unit], isolate: false } },
      { extends: true, test: { name: "slow", include: [...tiers.slow] } },
      { extends: true, test: { name: "services", include: tiers.services.filter((f) => !leftOut.includes(f)) } },
    ],
  },
});
