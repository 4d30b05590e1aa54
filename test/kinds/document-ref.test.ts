/**
 * Attached documents held by reference: every hash, diff, comparison and serialisation must be
 * what it would be with the parsed document in memory, and a file changed after validation is
 * refused, never sent.
 */
import { readdirSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { isDeepStrictEqual } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { withExtensionId } from "../../src/kinds/api-definition.js";
import { canonical, contentHash } from "../../src/kinds/canonical.js";
import { DocumentRef, documentMember, materialize, summarise } from "../../src/kinds/document-ref.js";
import { readDocumentSync, textDigest } from "../../src/load/read-file.js";
import { parseYaml } from "../../src/load/yaml-reader.js";
import { diffValues } from "../../src/plan/diff.js";
import { planDigest } from "../../src/plan/plan.js";
import type { PlannedChange } from "../../src/plan/plan-change.js";
import { showValue } from "../../src/plan/render/render-shared.js";
import { removeTempRepos, sharedRoot, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

const corpus = ["3.0/pass", "3.1/pass"].flatMap((dir) =>
  readdirSync(path.join(sharedRoot, "corpus/oas", dir))
    .filter((f) => /\.ya?ml$|\.json$/.test(f))
    .map((f) => path.join(sharedRoot, "corpus/oas", dir, f)),
);

function parsed(file: string): Record<string, unknown> | undefined {
  const value = parseYaml(readFileSync(file, "utf8"), file).documents[0]?.value;
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function refOf(file: string, held: readonly string[] = ["x-gw-api-gateway", "security"]): { ref: DocumentRef; tree: Record<string, unknown> } {
  const tree = parsed(file)!;
  return { ref: new DocumentRef({ file, read: () => readDocumentSync(file, file, 0) }, summarise(tree, held)), tree };
}

describe("a document held by reference", () => {
  const documents = corpus.filter((f) => parsed(f) !== undefined);

  it("hashes, serialises and compares as the document itself, for every corpus document", () => {
    expect(documents.length).toBeGreaterThan(20);
    for (const file of documents) {
      const { ref, tree } = refOf(file);
      expect(canonical(ref), file).toBe(canonical(tree));
      expect(contentHash({ query: { a: "1" }, definition: ref }), file).toBe(contentHash({ query: { a: "1" }, definition: tree }));
      expect(JSON.parse(JSON.stringify({ definition: ref })), file).toEqual(JSON.parse(JSON.stringify({ definition: tree })));
      expect(diffValues(tree, ref), file).toEqual([]);
      expect(materialize({ spec: { definition: ref } }), file).toEqual({ spec: { definition: tree } });
      const change = (definition: unknown): PlannedChange => ({
        id: "ApiDefinition/a",
        kind: "ApiDefinition",
        name: "a",
        action: "update",
        wave: 0,
        fields: [{ path: "definition", op: "add", after: definition }],
        notes: [],
      });
      expect(planDigest([change(ref)]), file).toBe(planDigest([change(tree)]));
    }
  });

  it("completes the gateway extension's id as the in-memory document would, hash included", () => {
    const { ref, tree } = refOf(documents[0]!);
    const withExt = { ...tree, "x-gw-api-gateway": { server: { listenPath: { value: "/pets/" } } } };
    const file = documents[0]!;
    const extRef = new DocumentRef({ file, read: () => tree }, summarise(withExt, ["x-gw-api-gateway"]));
    const sent = withExtensionId(extRef, "api-1");
    expect(sent).toBeInstanceOf(DocumentRef);
    expect(documentMember(sent, "x-gw-api-gateway")).toEqual({ server: { listenPath: { value: "/pets/" } }, info: { id: "api-1" } });
    const inMemory = withExtensionId(withExt, "api-1");
    expect(contentHash(sent)).toBe(contentHash(inMemory));
    expect(contentHash(sent)).not.toBe(contentHash(extRef));
    // a document without the extension is sent as it is
    expect(withExtensionId(ref, "api-1")).toBe(ref);
  });

  it("tells two references apart by content in deep equality, diff and hash", () => {
    const [a, b] = [refOf(documents[0]!), refOf(documents[1]!)];
    expect(isDeepStrictEqual({ definition: a.ref }, { definition: b.ref })).toBe(false);
    expect(isDeepStrictEqual({ definition: a.ref }, { definition: refOf(documents[0]!).ref })).toBe(true);
    const fields = diffValues({ definition: a.ref }, { definition: b.ref });
    expect(fields.length).toBeGreaterThan(0);
    expect(fields).toEqual(diffValues({ definition: a.tree }, { definition: b.tree }));
  });

  it("refuses to give a member it does not hold, big or small, and gives held ones without reading", () => {
    const file = documents.find((f) => canonical(parsed(f)!.paths).startsWith("#"))!;
    let reads = 0;
    const tree = parsed(file)!;
    const ref = new DocumentRef({ file, read: () => (reads++, tree) }, summarise(tree, ["info"]));
    expect(documentMember(ref, "info")).toEqual(tree.info);
    expect(documentMember(ref, "absent")).toBeUndefined();
    expect(() => documentMember(ref, "paths")).toThrow(/read without loading/);
    // small members are kept as their canonical text only: the tree is not held for them
    expect(() => documentMember(ref, "openapi")).toThrow(/read without loading/);
    expect(reads).toBe(0);
    expect(ref.read()).toEqual(tree);
    expect(reads).toBe(1);
    // a plan shows it by its file, without reading it
    expect(showValue(ref)).toBe(`(the document in ${file})`);
    expect(reads).toBe(1);
  });

  it("is refused with SOURCE_CHANGED when its file changed or went away after validation", async () => {
    const root = await tempRepo({ "api.yaml": "openapi: 3.0.0\ninfo: { title: t, version: '1' }\npaths: {}\n" });
    const file = path.join(root, "api.yaml");
    const tree = readDocumentSync(file, "api.yaml", 0) as Record<string, unknown>;
    const ref = new DocumentRef({ file: "api.yaml", read: () => readDocumentSync(file, "api.yaml", 0) }, summarise(tree, []));
    expect(ref.read()).toEqual(tree);
    await writeFile(file, "openapi: 3.0.0\ninfo: { title: changed, version: '1' }\npaths: {}\n");
    expect(() => ref.read()).toThrow(expect.objectContaining({ code: "SOURCE_CHANGED", message: "api.yaml changed after it was validated" }));
    expect(() => JSON.stringify(ref)).toThrow(expect.objectContaining({ code: "SOURCE_CHANGED" }));
    await writeFile(file, "not: [valid");
    expect(() => ref.read()).toThrow(expect.objectContaining({ code: "SOURCE_CHANGED" }));
  });
});

describe("a document held by reference with the digest of its file's text", () => {
  async function held(text: string): Promise<{ ref: DocumentRef; file: string; tree: Record<string, unknown> }> {
    const root = await tempRepo({ "api.yaml": text });
    const file = path.join(root, "api.yaml");
    const tree = readDocumentSync(file, "api.yaml", 0) as Record<string, unknown>;
    const source = {
      file: "api.yaml",
      read: () => readDocumentSync(file, "api.yaml", 0),
      readIfUnchanged: (d: string) => readDocumentSync(file, "api.yaml", 0, d),
    };
    return { ref: new DocumentRef(source, summarise(tree, [], textDigest(text))), file, tree };
  }
  const text = "openapi: 3.0.0\ninfo: { title: t, version: '1' }\npaths: {}\n";

  it("reads the same document while the text is the same, and one whose text changed but not its content", async () => {
    const { ref, file, tree } = await held(text);
    expect(ref.read()).toEqual(tree);
    await writeFile(file, `# a comment, the same document\n${text}`);
    expect(ref.read()).toEqual(tree);
  });

  it("is refused with SOURCE_CHANGED when the content changed", async () => {
    const { ref, file } = await held(text);
    await writeFile(file, text.replace("title: t", "title: changed"));
    expect(() => ref.read()).toThrow(expect.objectContaining({ code: "SOURCE_CHANGED" }));
  });
});
