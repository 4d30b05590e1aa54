/**
 * Every function in a file and the lines it spans, read with the TypeScript compiler's parser:
 * declarations, methods, constructors, accessors, arrow functions and function expressions,
 * each measured from the line its first token is on to the line its last token is on (a leading
 * doc comment is not part of it; a nested function counts in its parent too).
 */
import ts from "typescript";

export interface FunctionSpan {
  name: string;
  /** 1-based line of its first token. */
  line: number;
  lines: number;
}

type FunctionNode = ts.FunctionLikeDeclaration;

function isMeasured(node: ts.Node): node is FunctionNode {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node) ||
    ts.isArrowFunction(node) ||
    ts.isFunctionExpression(node)
  );
}

function propertyName(name: ts.PropertyName | ts.BindingName, source: ts.SourceFile): string {
  return ts.isIdentifier(name) || ts.isPrivateIdentifier(name) || ts.isStringLiteral(name) ? name.text : name.getText(source);
}

/** What a reader calls the function: its own name, the name it is bound to, or its class's. */
function nameOf(node: FunctionNode, source: ts.SourceFile): string {
  const owner = ts.isClassLike(node.parent) ? `${node.parent.name?.text ?? "class"}.` : "";
  if (ts.isConstructorDeclaration(node)) return `${owner}constructor`;
  if (node.name !== undefined) return `${owner}${propertyName(node.name, source)}`;
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) {
    return `${ts.isPropertyDeclaration(parent) ? owner : ""}${propertyName(parent.name, source)}`;
  }
  if (ts.isCallExpression(parent)) return `callback of ${parent.expression.getText(source).slice(0, 40)}`;
  return "anonymous function";
}

function lineOf(source: ts.SourceFile, position: number): number {
  return source.getLineAndCharacterOfPosition(position).line + 1;
}

export function functionSpans(fileName: string, text: string): FunctionSpan[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const spans: FunctionSpan[] = [];
  const visit = (node: ts.Node): void => {
    if (isMeasured(node) && node.body !== undefined) {
      const line = lineOf(source, node.getStart(source));
      spans.push({ name: nameOf(node, source), line, lines: lineOf(source, node.getEnd()) - line + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return spans;
}
