// Child process of the benchmark, on the compiled code (what production runs): load, validate,
// prepare and plan a repository, then report the process's peak resident set size.
import { EnvFileSecretSource } from "../dist/secrets/env-file-source.js";
import { prepareDesired } from "../dist/plan/prepare-desired.js";
import { computePlan } from "../dist/plan/plan.js";
import { RepositoryValidator } from "../dist/validate/repository/repository-validator.js";

const root = process.argv[2];
const secrets = new EnvFileSecretSource(process.env, root);
// as the one-shot commands run it (the calling thread checks files beside cores-1 workers)
const result = await RepositoryValidator.oneShot().validate({ root, secrets: { source: secrets, missing: "error" } });
const desired = prepareDesired(result.resources, { secrets, hashKey: "k", appTypeProviders: new Set() });
const plan = computePlan(
  desired.desired,
  { lineage: "", serial: 0, hashKey: undefined, resources: new Map() },
  { orphans: "report", now: new Date().toISOString() },
);
process.stdout.write(
  JSON.stringify({ resources: result.resources.length, changes: plan.changes.length, peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024) }),
);
