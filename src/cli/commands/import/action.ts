import { UsageError } from "../../../errors.js";
import { InputProblem, defaultInputLimits } from "../../../import/bounded-input.js";
import { runImport } from "../../../import/import.js";
import { renderReportJson, renderReportText } from "../../../import/report.js";
import { ageRecipientPattern } from "../../../secrets/sops/sops-writer.js";
import type { CliIo } from "../../common/cli-io.js";
import type { ImportFlags } from "./import-flags.js";

function checkedFlags(flags: ImportFlags): { maxFileBytes: number; productProvider?: number } {
  if (flags.syncDump.length + flags.operator.length + flags.dashboardExport.length + flags.answers.length === 0) {
    throw new UsageError(
      "nothing to import: give a source",
      "gatesync import DIR --sync-dump DUMP | --operator FILE | --dashboard-export FILE | --answers DIR",
    );
  }
  for (const r of flags.encryptTo) {
    if (!ageRecipientPattern.test(r))
      throw new UsageError(`--encrypt-to ${JSON.stringify(r.slice(0, 80))} is not an age recipient`, "give the public key age-keygen prints (age1…)");
  }
  if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(flags.environment)) throw new UsageError("--environment must be a lower-case name ([a-z0-9-])");
  const maxFileBytes = flags.maxFileBytes === undefined ? defaultInputLimits.maxFileBytes : Number(flags.maxFileBytes);
  if (!Number.isInteger(maxFileBytes) || maxFileBytes < 1) throw new UsageError("--max-file-bytes must be a positive integer");
  const productProvider = flags.productProvider === undefined ? undefined : Number(flags.productProvider);
  if (productProvider !== undefined && !Number.isInteger(productProvider)) throw new UsageError("--product-provider must be an integer id");
  return { maxFileBytes, ...(productProvider === undefined ? {} : { productProvider }) };
}

/** `gatesync import DIR`: reads the sources, writes the repository, prints the report. */
export async function importAction(dir: string, flags: ImportFlags, io: CliIo): Promise<void> {
  const { maxFileBytes, productProvider } = checkedFlags(flags);
  try {
    const report = await runImport({
      sources: {
        syncDumps: flags.syncDump,
        operatorFiles: flags.operator,
        dashboardExports: flags.dashboardExport,
        answerDirs: flags.answers,
        ...(productProvider === undefined ? {} : { productProvider }),
      },
      target: dir,
      merge: flags.merge,
      encryptTo: flags.encryptTo,
      environment: flags.environment,
      limits: { ...defaultInputLimits, maxFileBytes },
      env: io.env,
    });
    io.stdout(flags.format === "json" ? renderReportJson(report) : renderReportText(report));
    process.exitCode = report.counts.errors > 0 ? 1 : 0;
  } catch (err) {
    if (err instanceof InputProblem) throw new UsageError(err.message, err.hint);
    throw err;
  }
}
