/**
 * Whether a repository ruleset's JSONPath (`given`, an alias) may be handed to Spectral. Its
 * JSONPath engine (nimma) turns a filter `[?(…)]` into generated JavaScript: its guard refuses
 * unknown names, but not a member such as `constructor`, and `@.constructor.constructor('…')()`
 * is the `Function` constructor called with the repository's text. So a filter is parsed here
 * with nimma's own parsers and accepted only when made of what a filter needs: the current
 * value and its context (`@`, `@property`, `@path`, `@parent`, `@parentProperty`, `@root`),
 * literals, operators, members by plain name, and a few methods of strings and arrays.
 */
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);

interface EsNode {
  readonly type: string;
  readonly [key: string]: unknown;
}

interface NimmaParsers {
  readonly parse: (expression: string) => ReadonlyArray<{ readonly type: string; readonly value?: unknown }>;
  readonly script: (expression: string) => EsNode;
}

let parsers: NimmaParsers | undefined;

function nimmaParsers(): NimmaParsers {
  if (parsers === undefined) {
    const core = createRequire(require.resolve("@stoplight/spectral-core"));
    const parserModule = core.resolve("nimma/parser");
    const { parse } = core(parserModule) as Pick<NimmaParsers, "parse">;
    const script = (core(path.join(path.dirname(parserModule), "jsep.js")) as { default: NimmaParsers["script"] }).default;
    parsers = { parse, script };
  }
  return parsers;
}

/** The names a filter may start from (nimma's context of the current value). */
const contextNames = new Set(["@", "@property", "@path", "@parent", "@parentProperty", "@root", "undefined"]);
/** Methods a filter may call: they read a string or an array, and reach nothing else. */
const methods = new Set(["match", "test", "startsWith", "endsWith", "includes", "indexOf", "toLowerCase", "toUpperCase", "trim"]);
/** Members that lead from a value to a function's constructor or to the prototype chain. */
const forbiddenMembers = new Set([
  "constructor",
  "prototype",
  "__proto__",
  "__defineGetter__",
  "__defineSetter__",
  "__lookupGetter__",
  "__lookupSetter__",
  "caller",
  "callee",
  "arguments",
  "call",
  "apply",
  "bind",
]);
const operators = new Set(["==", "===", "!=", "!==", "<", "<=", ">", ">=", "&&", "||", "!", "+", "-", "*", "/", "%", "in", "~=", "void", "typeof"]);

/** Why a member is refused, or undefined. */
function memberProblem(node: EsNode): string | undefined {
  const prop = node.property as EsNode;
  const name = node.computed === true ? (prop.type === "Literal" ? prop.value : undefined) : prop.name;
  if (typeof name !== "string" && typeof name !== "number") return "a member named by an expression (only plain names and literals)";
  if (forbiddenMembers.has(String(name))) return `the member \`${String(name)}\``;
  return scriptProblem(node.object as EsNode);
}

/** Why a call is refused, or undefined. */
function callProblem(node: EsNode): string | undefined {
  const callee = node.callee as EsNode;
  if (callee.type !== "MemberExpression" || callee.computed === true || !methods.has(String((callee.property as EsNode).name))) {
    return `a call other than ${[...methods].map((m) => `.${m}()`).join(", ")}`;
  }
  return memberProblem(callee) ?? (node.arguments as EsNode[]).map(scriptProblem).find((p) => p !== undefined);
}

/** Why a filter's expression is refused, or undefined when every node of it is allowed. */
function scriptProblem(node: EsNode): string | undefined {
  switch (node.type) {
    case "Literal":
      return undefined;
    case "Identifier":
      return contextNames.has(String(node.name)) ? undefined : `the name \`${String(node.name)}\``;
    case "MemberExpression":
      return memberProblem(node);
    case "CallExpression":
      return callProblem(node);
    case "BinaryExpression":
    case "LogicalExpression":
      if (!operators.has(String(node.operator))) return `the operator \`${String(node.operator)}\``;
      return scriptProblem(node.left as EsNode) ?? scriptProblem(node.right as EsNode);
    case "UnaryExpression":
      return operators.has(String(node.operator)) ? scriptProblem(node.argument as EsNode) : `the operator \`${String(node.operator)}\``;
    case "ConditionalExpression":
      return [node.test, node.consequent, node.alternate].map((n) => scriptProblem(n as EsNode)).find((p) => p !== undefined);
    case "ArrayExpression":
      return (node.elements as EsNode[]).map(scriptProblem).find((p) => p !== undefined);
    default:
      return `a ${node.type}`;
  }
}

/**
 * Why a ruleset's JSONPath is refused, or undefined when Spectral may have it. An alias
 * reference (`#Name`, optionally followed by more of a path) is checked for what follows it.
 */
export function givenProblem(expression: string): string | undefined {
  const rest = expression.startsWith("#") ? expression.replace(/^#[A-Za-z0-9_-]+/, "") : expression;
  if (expression.startsWith("#") && rest === "") return undefined;
  let parsed: ReturnType<NimmaParsers["parse"]>;
  try {
    parsed = nimmaParsers().parse(expression.startsWith("#") ? `$${rest}` : rest);
  } catch (err) {
    return `\`${expression}\` is not a JSONPath expression: ${err instanceof Error ? err.message : String(err)}`;
  }
  for (const segment of parsed) {
    if (!/ScriptFilterExpression$/.test(segment.type)) continue;
    const text = String(segment.value);
    if (text.startsWith("@@")) return `\`${expression}\`: a custom filter (${text}) is not accepted`;
    let tree: EsNode;
    try {
      tree = nimmaParsers().script(text);
    } catch (err) {
      return `\`${expression}\`: the filter ${text} does not parse: ${err instanceof Error ? err.message : String(err)}`;
    }
    const why = scriptProblem(tree);
    if (why !== undefined) return `\`${expression}\`: the filter uses ${why}; a filter compares the value and its members (see docs/user/rules.md)`;
  }
  return undefined;
}
