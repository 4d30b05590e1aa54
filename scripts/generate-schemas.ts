/** Writes schemas/resource.schema.json from the kind registry (`npm run schemas`). */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { allKinds } from "../src/kinds/registry.js";
import { resourceSchemaText } from "../src/kinds/resource-schema.js";

const target = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../schemas/resource.schema.json");
await writeFile(target, resourceSchemaText(allKinds()));
process.stdout.write(`wrote ${path.relative(process.cwd(), target)} (${allKinds().length} kinds)\n`);
