/**
 * `gatesync init [DIR]`: scaffolds a repository. Resource files carry a yaml-language-server
 * modeline whose `$schema` is the path, relative to the file, of the schemas of the gatesync
 * that ran init: `../node_modules/gatesync/schemas/…` when gatesync is a dependency of the
 * repository (the recommended set-up), the checkout's schemas/ in this repository.
 */
import { copyFile, mkdir, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { InvalidArgumentError } from "commander";
import { configTemplate, fixturesTemplate, resourceTemplates, rulesetTemplates } from "./templates.js";

const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

interface PlannedFile {
  readonly path: string;
  readonly content?: string;
  readonly copyFrom?: string;
}

function modeline(file: string, schema: string): string {
  const rel = path.relative(path.dirname(file), path.join(packageRoot, "schemas", schema)).split(path.sep).join("/");
  return `# yaml-language-server: $schema=${rel}\n`;
}

/** The files init writes into `dir` (absolute paths). */
export function scaffoldFiles(dir: string): PlannedFile[] {
  const at = (...p: string[]): string => path.join(dir, ...p);
  const ci = path.join(packageRoot, "examples/ci");
  return [
    { path: at("gatesync.yaml"), content: modeline(at("gatesync.yaml"), "gatesync-config.schema.json") + configTemplate },
    ...Object.entries(resourceTemplates).map(([name, body]) => ({ path: at("config", name), content: modeline(at("config", name), "resource.schema.json") + body })),
    ...Object.entries(rulesetTemplates).map(([name, body]) => ({ path: at("rules", name), content: body })),
    { path: at("sandbox-fixtures.yaml"), content: modeline(at("sandbox-fixtures.yaml"), "sandbox-fixtures.schema.json") + fixturesTemplate },
    { path: at("secrets/.gitkeep"), content: "" },
    { path: at(".gitignore"), content: ".gatesync/\n" },
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
