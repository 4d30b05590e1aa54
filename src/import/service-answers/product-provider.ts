/**
 * The API provider of the portal's products. The list answer (`GET /products`, Product-index)
 * carries no ProviderID, and a product cannot be written without one: `--product-provider ID`
 * names it; without the flag, the portal's own list of API providers (`GET /providers`, saved as
 * `providers.json`) gives it when it lists exactly one. Otherwise the products that carry none
 * are one located error at `products.json` saying what to do — never a provider guessed.
 */
import { readSourceFile } from "../bounded-input.js";
import type { InputLimits } from "../bounded-input.js";
import { isRecord } from "../model.js";
import { listIn } from "./answer-shapes.js";

export const providersFile = "providers.json";

export const providerHint = `pass --product-provider ID (the portal's API providers: GET /providers), or save that answer as ${providersFile} beside products.json: a portal with one API provider needs nothing more`;

export type ProductProvider = { readonly id: number } | { readonly id?: undefined; readonly why: string };

/** The provider the flag names, or the only one providers.json lists; else why there is none (an InputProblem from a file that cannot be read). */
export function productProviderOf(root: string, names: readonly string[], limits: InputLimits, given: number | undefined): ProductProvider {
  if (given !== undefined) return { id: given };
  if (!names.includes(providersFile)) return { why: `no --product-provider is given and there is no ${providersFile}` };
  const list = listIn(readSourceFile(root, providersFile, limits)[0]?.value, []);
  if (list === undefined) return { why: `${providersFile} is not the answer of GET /providers (a JSON list of providers)` };
  const ids = list.flatMap((p) => (isRecord(p) && Number.isInteger(p.ID) ? [p.ID as number] : []));
  if (ids.length === 1) return { id: ids[0]! };
  return { why: `${providersFile} lists ${ids.length === 0 ? "no API provider" : `${ids.length} API providers (${ids.join(", ")})`}` };
}
