/** Whether two names are close enough for a "did you mean" (typos, case, one inside the other). */
import { distance } from "fastest-levenshtein";

export function similar(a: string, b: string): boolean {
  const la = a.toLowerCase();
  const lb = b.toLowerCase();
  return distance(la, lb) <= Math.max(2, Math.floor(Math.max(la.length, lb.length) / 3)) || la.includes(lb) || lb.includes(la);
}
