/** Writes docs/user/resources.md from the schemas (`npm run docs:resources`). */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { renderResourceDocs } from "./resource-docs.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const target = path.join(root, "docs/user/resources.md");
await writeFile(target, renderResourceDocs(path.join(root, "schemas")));
process.stdout.write(`wrote ${path.relative(process.cwd(), target)}\n`);
