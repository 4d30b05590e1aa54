/**
 * Resources that address the batch route's loopback API (kinds/batch-route.ts), refused: checked
 * on the resources as finally resolved for the environment — values put in, overlay patches
 * merged, attached documents read — so a `${var:}` value or a patch cannot bring one in unseen.
 */
import { ErrorCode } from "../../errors.js";
import type { Diagnostic } from "../../errors.js";
import { formatPath } from "../../text/field-path.js";
import { batchRouteHint } from "../../kinds/batch-route.js";
import { kindModule } from "../../kinds/registry.js";
import type { ReservedBatchRoute } from "../../kinds/kind.js";
import type { Resource } from "../../kinds/resource.js";
import type { Locate } from "../findings.js";

/** The resources that leave the route alone, and a located BATCH_ROUTE_RESERVED error for each field of the others that claims it. */
export function checkBatchRoute(
  resources: readonly Resource[],
  route: ReservedBatchRoute | undefined,
  locate: Locate,
): { valid: Resource[]; diagnostics: Diagnostic[] } {
  if (route === undefined) return { valid: [...resources], diagnostics: [] };
  const valid: Resource[] = [];
  const diagnostics: Diagnostic[] = [];
  for (const r of resources) {
    const claims = kindModule(r.kind).batchRoute?.claims(r.spec.read(), route) ?? [];
    if (claims.length === 0) {
      valid.push(r);
      continue;
    }
    for (const claim of claims) {
      diagnostics.push({
        severity: "error",
        code: ErrorCode.BATCH_ROUTE_RESERVED,
        file: r.source.file,
        resource: `${r.kind}/${r.name}`,
        path: formatPath(claim.path),
        ...locate(r.source.file, r.source.index, claim.path),
        message: `addresses the batch route: ${claim.message}`,
        hint: batchRouteHint(route),
      });
    }
  }
  return { valid, diagnostics };
}
