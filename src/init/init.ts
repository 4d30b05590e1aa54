/**
 * `gatesync init [DIR]`: scaffolds a repository. Resource files carry a yaml-language-server
 * modeline whose `$schema` is the path, relative to the file, of the schemas of the gatesync
 * that ran init: `../node_modules/gatesync/schemas/…` when gatesync is installed in the
 * repository (the recommended set-up; a `file:` install included), else the schemas/ of the
 * gatesync that ran.
 */
import { copyFile, mkdir, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import path from "node:path";
import { InvalidArgumentError } from "commander";
import { packageRoot } from "../package-root.js";
import { configTemplate, fixturesTemplate, resourceTemplates, rulesetTemplates } from "./templates.js";

interface PlannedFile {
  readonly path: string;
  readonly content?: string;
  readonly copyFrom?: string;
}

/**
 * Where the schemas are, as the repository reaches them: through `node_modules/gatesync` in
 * `dir` or a directory above it when gatesync is installed there — also when that is a link
 * (`npm install file:../gatesync`), whose real path lies outside the repository and would make
 * modelines that work on no other machine — else this package's own directory (a checkout).
 */
function schemasDir(dir: string): string {
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    const installed = path.join(at, "node_modules", "gatesync");
    if (existsSync(path.join(installed, "schemas"))) return path.join(installed, "schemas");
    if (path.dirname(at) === at) return path.join(packageRoot, "schemas");
  }
}

function modeline(file: string, schemas: string, schema: string): string {
  const rel = path.relative(path.dirname(file), path.join(schemas, schema)).split(path.sep).join("/");
  return `# yaml-language-server: $schema=${rel}\n`;
}

/**
 * What never belongs in the repository: the local state, dependencies, plaintext secret files.
 * Below secrets/ only SOPS-encrypted files are committed (`*.enc.yaml`, `*.enc.yml`,
 * `*.enc.json`, in any sub-directory: a daemon reads them from the commit), so a `git add -A`
 * takes a rotation and never a plaintext file beside it.
 */
export const gitignoreTemplate = `# gatesync's local state, dependencies and plaintext secret files: never committed
.gatesync/
node_modules/
.env
# below secrets/, only the files sops encrypted: docs/user/secrets.md
secrets/**
!secrets/**/
!secrets/.gitkeep
!secrets/**/*.enc.yaml
!secrets/**/*.enc.yml
!secrets/**/*.enc.json
`;

/** The files init writes into `dir` (absolute paths). */
export function scaffoldFiles(dir: string): PlannedFile[] {
  const at = (...p: string[]): string => path.join(dir, ...p);
  const ci = path.join(packageRoot, "examples/ci");
  const schemas = schemasDir(dir);
  return [
    { path: at("gatesync.yaml"), content: modeline(at("gatesync.yaml"), schemas, "gatesync-config.schema.json") + configTemplate },
    ...Object.entries(resourceTemplates).map(([name, body]) => ({
      path: at("config", name),
      content: modeline(at("config", name), schemas, "resource.schema.json") + body,
    })),
    ...Object.entries(rulesetTemplates).map(([name, body]) => ({ path: at("rules", name), content: body })),
    { path: at("sandbox-fixtures.yaml"), content: modeline(at("sandbox-fixtures.yaml"), schemas, "sandbox-fixtures.schema.json") + fixturesTemplate },
    { path: at("secrets/.gitkeep"), content: "" },
    { path: at(".gitignore"), content: gitignoreTemplate },
    { path: at(".github/workflows/gatesync-plan.yaml"), copyFrom: path.join(ci, "github-actions-plan.yaml") },
    { path: at("ci/plan-comment.sh"), copyFrom: path.join(ci, "plan-comment.sh") },
    { path: at("ci/post-comment.mjs"), copyFrom: path.join(ci, "post-comment.mjs") },
  ];
}

/** Writes the scaffold; refuses (USAGE) to overwrite an existing file unless `force`. */
export async function initRepository(dir: string, force: boolean): Promise<string[]> {
  const files = scaffoldFiles(path.resolve(dir));
  const existing = files.filter((f) => existsSync(f.path)).map((f) => path.relative(process.cwd(), f.path) || f.path);
  if (existing.length > 0 && !force) {
    throw new InvalidArgumentError(`init would overwrite ${existing.join(", ")}: move them away or pass --force`);
  }
  for (const f of files) {
    await mkdir(path.dirname(f.path), { recursive: true });
    if (f.copyFrom === undefined) await writeFile(f.path, f.content ?? "");
    else await copyFile(f.copyFrom, f.path);
  }
  return files.map((f) => f.path);
}
