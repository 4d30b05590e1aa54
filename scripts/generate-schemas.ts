/**
 * `npm run schemas`: writes schemas/resource.schema.json from the kind registry, then ajv's
 * standalone validators for every schema into src/validate/compiled/.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { allKinds } from "../src/kinds/registry.js";
import { resourceSchemaText } from "../src/kinds/resource-schema.js";
import { compiledDir, schemaDir, standaloneModules } from "./standalone-validators.js";

const target = path.join(schemaDir, "resource.schema.json");
await writeFile(target, resourceSchemaText(allKinds()));
process.stdout.write(`wrote ${path.relative(process.cwd(), target)} (${allKinds().length} kinds)\n`);
for (const [file, text] of Object.entries(standaloneModules())) {
  await writeFile(path.join(compiledDir, file), text);
  process.stdout.write(`wrote ${path.relative(process.cwd(), path.join(compiledDir, file))} (${Math.round(text.length / 1024)} KiB)\n`);
}
