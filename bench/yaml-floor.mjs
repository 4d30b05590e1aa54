// The floor of the whole-process figures: a process that lists the same files and parses them
// with `yaml` on one thread, and does nothing else.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { parseAllDocuments } from "yaml";

const root = process.argv[2];
let documents = 0;
for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !/\.(ya?ml|json)$/.test(entry.name)) continue;
  for (const doc of parseAllDocuments(readFileSync(path.join(entry.parentPath, entry.name), "utf8"))) {
    doc.toJS();
    documents++;
  }
}
process.stdout.write(`${documents}\n`);
