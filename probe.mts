import { readFileSync, readdirSync } from "node:fs";
import { parse } from "yaml";
import { classifyOpenApi } from "./src/plan/breaking/openapi.js";
type J = any;
function firstTypedProperty(doc: J): (string)[] | undefined {
  const seen = new Set<string>();
  const visit = (node: J, loc: string[]): string[] | undefined => {
    if (node === null || typeof node !== "object") return undefined;
    if (typeof node.$ref === "string" && node.$ref.startsWith("#/")) {
      if (seen.has(node.$ref)) return undefined; seen.add(node.$ref);
      const target = node.$ref.slice(2).split("/").map((s: string) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
      return visit(target.reduce((n: J, k: string) => n?.[k], doc), target);
    }
    if (loc.at(-2) === "properties" && typeof node.type === "string") return loc;
    for (const [k, v] of Object.entries(node)) { const r = visit(v, [...loc, k]); if (r) return r; }
    return undefined;
  };
  return visit(doc.paths, ["paths"]);
}
for (const v of ["3.0", "3.1"]) for (const f of readdirSync(`/work/shared/corpus/oas/${v}/pass`)) {
  const doc = parse(readFileSync(`/work/shared/corpus/oas/${v}/pass/${f}`, "utf8"));
  const loc = firstTypedProperty(doc); if (!loc) continue;
  const at = (d: J, l: string[]) => l.reduce((n: J, k) => n[k], d);
  const t = structuredClone(doc); const p = at(t, loc); p.type = p.type === "string" ? "integer" : "string";
  const o = structuredClone(doc); at(o, loc.slice(0, -1)).gatesync_note = { type: "string" };
  const ct = classifyOpenApi(doc, t), co = classifyOpenApi(doc, o);
  console.log(v, f, loc.join("/"), "type=", ct.map((c) => c.class + ":" + c.reason).join(" | "), " opt=", [...new Set(co.map((c) => c.class))].join("/"));
}
