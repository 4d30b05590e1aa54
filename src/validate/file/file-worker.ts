/**
 * A worker thread of the file-checking pool (piscina): checks the files of one task with
 * checkers made once per thread. It compiles no schema (they are compiled at build time:
 * src/validate/compiled/) and loads neither ajv nor the OpenAPI validator library; the compiled
 * modules are imported statically, since a dynamic `import()` of a `.js` specifier does not
 * resolve to its `.ts` source in a worker run through tsx (tests, `gatesync` from sources).
 */
import type { FileToRead } from "../../load/read-file.js";
import { checkFile } from "./check-file.js";
import type { FileCheckContext, FileVerdict } from "./check-file.js";
import { OpenApiChecker } from "../document/openapi.js";
import { SchemaRegistry } from "../schema/schema-registry.js";

export interface FileTask {
  readonly files: readonly FileToRead[];
  readonly ctx: FileCheckContext;
}

const checkers = { schemas: new SchemaRegistry(), openapi: new OpenApiChecker() };

export async function checkFiles(task: FileTask): Promise<FileVerdict[]> {
  const verdicts: FileVerdict[] = [];
  // synchronous reads: profiling showed the async round trips through libuv's pool costing a
  // tenth of a worker's CPU time, for a thread that has nothing else to do meanwhile
  for (const file of task.files) verdicts.push(await checkFile(file, task.ctx, checkers, true));
  return verdicts;
}
