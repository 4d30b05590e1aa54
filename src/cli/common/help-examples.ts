/**
 * The invocations each command's `--help` ends with: the common ones of the README and
 * docs/user/commands.md, run from a repository `gatesync init` made (test/cli/help-examples.test.ts
 * runs every one of them against the sandbox, so they stay true). Data only: `--help` loads it.
 */
export interface HelpExample {
  /** The command line, as a user types it (no quotes: the words are split on spaces). */
  readonly line: string;
  /** What it is for, shown under it. */
  readonly says: string;
}

/** By command path (`state list`), in the order a new repository meets them. */
export const helpExamples: Readonly<Record<string, readonly HelpExample[]>> = {
  init: [
    { line: "gatesync init", says: "scaffold the current directory: gatesync.yaml, config/ (one example per kind), sandbox-fixtures.yaml, the CI job" },
    { line: "gatesync init my-gateway-config", says: "scaffold another directory (made when missing)" },
    { line: "gatesync init --force", says: "write the scaffold again over the files it wrote before" },
  ],
  import: [
    {
      line: "gatesync import --dashboard-export petstore.oas.json --merge .",
      says: "an API the dashboard exported, into this repository: the first plan updates it in place",
    },
  ],
  validate: [
    { line: "gatesync validate", says: "every problem of the config's source at once, each at file:line:column" },
    { line: "gatesync validate config --format json", says: "a directory of resources, findings as JSON" },
    { line: "gatesync validate --format github", says: "in a GitHub Actions job: each error annotated on the diff line" },
  ],
  plan: [
    { line: "gatesync plan", says: "what an apply would change, against the recorded state" },
    { line: "gatesync plan --detailed-exitcode", says: "for CI: exit 2 when there are changes to apply, 3 when some are blocked" },
    { line: "gatesync plan --format markdown --out plan.json", says: "a merge-request comment, and the plan saved for `gatesync apply --plan`" },
    { line: "gatesync plan --target OrgKey/acme --fail-on-breaking", says: "one resource; exit 4 if the change takes access away" },
  ],
  apply: [
    {
      line: "gatesync apply --auto-approve --allow-empty-state --target OrgKey/acme",
      says: "the first apply of a repository (its state is new), one resource",
    },
    { line: "gatesync apply --plan plan.json --auto-approve", says: "exactly the plan saved by `gatesync plan --out` (refused if anything changed since)" },
    { line: "gatesync apply --auto-approve", says: "plan and apply without asking" },
  ],
  state: [
    { line: "gatesync state list", says: "every recorded resource with its status" },
    { line: "gatesync state resolve OrgKey/acme --accept", says: "record the repository's spec as applied, after a change made by hand" },
  ],
  "state list": [
    { line: "gatesync state list", says: "every recorded resource with its status" },
    { line: "gatesync state list --json", says: "the same, as JSON" },
  ],
  "state pull": [{ line: "gatesync state pull --out state.json", says: "the whole state as JSON (secrets as keyed hashes)" }],
  "state push": [{ line: "gatesync state push state.json", says: "put back what `state pull` wrote (refused if the state was written since)" }],
  "state resolve": [
    { line: "gatesync state resolve OrgKey/acme --accept", says: "record the repository's spec as applied, after a change made by hand" },
    { line: "gatesync state resolve ApiProduct/storefront --forget", says: "drop the record: the next apply creates the product again" },
  ],
  "state adopt": [
    {
      line: "gatesync state adopt ApiProduct/storefront --id 1042",
      says: "record a product made by hand on the portal (id 1042) as the repository's: the next apply updates it, never creates it again",
    },
  ],
  "state move-to-env": [
    {
      line: "gatesync state move-to-env production",
      says: "once gatesync.yaml has `environments:`, the state kept before becomes environment production's",
    },
  ],
  "state migrate": [{ line: "gatesync state migrate --from sqlite:.gatesync/state.db --to sqlite:copy.db", says: "copy the whole state to another backend" }],
  run: [
    { line: "gatesync run --once", says: "one run of the daemon, then exit (0 applied or nothing to do)" },
    { line: "gatesync run", says: "the daemon: reconcile on its schedule and on webhooks, serve /healthz, /metrics and the status page" },
  ],
  history: [
    { line: "gatesync history", says: "the environment's last runs, newest first: trigger, commit with author and subject, outcome, counts, replica" },
    { line: "gatesync history --format json --limit 5", says: "the newest 5, as JSON" },
  ],
  promote: [
    {
      line: "gatesync promote production --dry-run",
      says: "the plan promoting the newest revision staging verified would apply, against production's state (the daemon: GATESYNC_DAEMON_URL)",
    },
    { line: "gatesync promote production", says: "promote it, with the token in GATESYNC_PROMOTE_TOKEN: production applies it now" },
  ],
  rollback: [
    { line: "gatesync rollback production --steps 1 --dry-run", says: "the plan going back one verified revision would apply, and what it cannot undo" },
    { line: "gatesync rollback production --steps 1 --auto-approve", says: "go back: production stays on that revision until the next promotion" },
  ],
  freeze: [
    {
      line: 'gatesync freeze production --reason "incident 4521" --until 2h',
      says: "hold production at once: it plans, but applies and promotes nothing for two hours (the daemon: GATESYNC_DAEMON_URL, GATESYNC_PROMOTE_TOKEN)",
    },
    { line: 'gatesync freeze production --reason "release freeze"', says: "hold it until `gatesync unfreeze production`" },
  ],
  unfreeze: [{ line: 'gatesync unfreeze production --reason "incident closed"', says: "lift the freeze: production applies what waited, now" }],
  ownership: [
    { line: "gatesync ownership list --format json", says: "the ownership registry as JSON: each object's target, owner, environment and claiming resource" },
  ],
  "ownership list": [
    { line: "gatesync ownership list", says: "which team owns each object on the targets, and the environment that manages it (docs/user/teams.md)" },
  ],
  "ownership transfer": [
    {
      line: 'gatesync ownership transfer org-key:acme --interface gateway --to payments --to-environment payments-prod --reason "payments runs acme now"',
      says: "hand the object to another owner: nothing is sent; payments' next apply manages it, this repository's plans refuse it",
    },
  ],
  "ownership release": [
    {
      line: 'gatesync ownership release org-key:acme --interface gateway --reason "acme goes back to this repository"',
      says: "no owner: the next apply that declares it claims it",
    },
  ],
  sandbox: [
    { line: "gatesync sandbox --fixtures sandbox-fixtures.yaml", says: "a local gateway on 127.0.0.1:8080, with the objects the interfaces cannot create" },
    {
      line: "gatesync sandbox --fixtures sandbox-fixtures.yaml --error-rate 0.05 --latency 200 --seed 7",
      says: "the same, with faults: 5% of calls answered 500, 200 ms each",
    },
    { line: "gatesync sandbox --rate-limit 20:5", says: "429 with Retry-After beyond 20 calls per second per interface" },
  ],
  demo: [
    { line: "gatesync demo --once", says: "sync examples/ into an in-process sandbox once, then stop (what `npm start -- --once` runs)" },
    { line: "gatesync demo --serve", says: "after the first run keep the sandbox up for exploring" },
  ],
  completion: [
    { line: "gatesync completion bash", says: "the bash script: `source <(gatesync completion bash)` in ~/.bashrc" },
    { line: "gatesync completion fish", says: "the fish script: save it as ~/.config/fish/completions/gatesync.fish" },
  ],
};

/** The examples' help text, as commander prints it after the options. */
export function examplesText(path: string): string {
  const examples = helpExamples[path] ?? [];
  if (examples.length === 0) return "";
  return ["", "Examples:", ...examples.flatMap((e) => [`  $ ${e.line}`, `      ${e.says}`])].join("\n");
}
