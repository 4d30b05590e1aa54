/**
 * Picking members out of the services' answers by their published types
 * (reference/published/specs/): a member is kept only when it has the type gatesync's schema
 * wants, so a foreign value is left out and listed instead of written.
 */
import { isRecord } from "../model.js";

export type Shape = "string" | "integer" | "number" | "boolean" | "object" | "integers" | "strings";

const fits = (value: unknown, shape: Shape): boolean => {
  switch (shape) {
    case "string":
      return typeof value === "string";
    case "integer":
      return Number.isInteger(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "boolean":
      return typeof value === "boolean";
    case "object":
      return isRecord(value);
    case "integers":
      return Array.isArray(value) && value.every((v) => Number.isInteger(v));
    case "strings":
      return Array.isArray(value) && value.every((v) => typeof v === "string");
  }
};

/** The members of `object` that `shapes` names and whose values fit; the rest of its members, as unmanaged. */
export function pick(
  object: Record<string, unknown>,
  shapes: Readonly<Record<string, Shape>>,
  handled: readonly string[] = [],
): { kept: Record<string, unknown>; unmanaged: string[] } {
  const kept: Record<string, unknown> = {};
  const unmanaged: string[] = [];
  for (const key of Object.keys(object).sort()) {
    const shape = shapes[key];
    const value = object[key];
    if (shape !== undefined && value !== null && value !== undefined && fits(value, shape)) kept[key] = value;
    else if (!handled.includes(key) && value !== null && value !== undefined && !(shape !== undefined && value === "")) unmanaged.push(key);
  }
  return { kept, unmanaged };
}

/** The list an answer holds: the answer itself, or its member `member` (`{ "hooks": [...] }`, `{ "data": [...] }`). */
export function listIn(answer: unknown, members: readonly string[]): unknown[] | undefined {
  if (Array.isArray(answer)) return answer as unknown[];
  if (!isRecord(answer)) return undefined;
  for (const m of members) {
    const v = answer[m];
    if (Array.isArray(v)) return v as unknown[];
    if (isRecord(v)) return [v];
  }
  return undefined;
}
