/** A validation function of ajv's standalone code (src/validate/compiled/, made by `npm run schemas`). */
import type { ErrorObject } from "ajv";

export interface StandaloneValidator {
  (data: unknown): boolean;
  /** Set by a call that returned false. */
  errors?: ErrorObject[] | null;
}
