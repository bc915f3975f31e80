import { beforeEach, describe, expect, it } from "vitest";
import { applyTextEdits, PROPOSAL_SCHEME, ProposalDocuments } from "../src/proposals";
import type { TextEdit } from "../src/protocol";
import * as vscode from "./vscode.fake";

const e = (l1: number, c1: number, l2: number, c2: number, newText: string): TextEdit => ({
  range: { start: { line: l1, character: c1 }, end: { line: l2, character: c2 } },
  newText,
});

describe("applyTextEdits", () => {
  const src = "def f(x):\n    if x < 0:\n        return 0\n    return x\n";

  it("applies several edits given in any order against the original text", () => {
    const out = applyTextEdits(src, [e(3, 11, 3, 12, "x + 1"), e(1, 9, 1, 10, "<="), e(0, 0, 0, 0, "# fixed\n")]);
    expect(out).toBe("# fixed\ndef f(x):\n    if x <= 0:\n        return 0\n    return x + 1\n");
  });

  it("replaces and deletes whole lines, inserts at the end of the file", () => {
    expect(applyTextEdits(src, [e(1, 0, 3, 0, "")])).toBe("def f(x):\n    return x\n");
    expect(applyTextEdits(src, [e(4, 0, 4, 0, "print(f(1))\n")])).toBe(src + "print(f(1))\n");
    // Positions past the end clamp to the end of the text or line.
    expect(applyTextEdits("a\nb", [e(1, 99, 7, 0, "c")])).toBe("a\nbc");
  });

  it("keeps CRLF line breaks and counts UTF-16 code units", () => {
    expect(applyTextEdits("a = 1\r\nb = 2\r\n", [e(1, 4, 1, 5, "3")])).toBe("a = 1\r\nb = 3\r\n");
    // A character past the end of a CRLF line stops before the \r\n, as in an editor.
    expect(applyTextEdits("ab\r\ncd\r\n", [e(0, 1, 0, 99, "X")])).toBe("aX\r\ncd\r\n");
    expect(applyTextEdits("ab\ncd", [e(0, 1, 0, 99, "X")])).toBe("aX\ncd");
    // "😀" is two UTF-16 code units: character 7 is right after it.
    expect(applyTextEdits('s = "😀x"\n', [e(0, 7, 0, 8, "y")])).toBe('s = "😀y"\n');
  });

  it("refuses overlapping edits", () => {
    expect(() => applyTextEdits(src, [e(0, 0, 1, 5, "a"), e(1, 0, 1, 2, "b")])).toThrow(/overlapping/);
  });
});

describe("proposal documents", () => {
  beforeEach(() => vscode.resetFake());

  it("serves the proposed text under its own scheme and forgets it on request", () => {
    const docs = new ProposalDocuments();
    const changed: string[] = [];
    docs.onDidChange((u) => changed.push(u.toString()));
    const doc = vscode.makeDocument("/w/src/calc.py", "x = 1\ny = 2\n", 4);
    const uri = docs.add({ id: "p/7 x", backend: "b", status: "ok", edits: [e(1, 4, 1, 5, "3")] }, doc as any, "fix y");
    expect(uri.scheme).toBe(PROPOSAL_SCHEME);
    expect(uri.path.endsWith("/calc.py")).toBe(true); // same extension: same language in the diff editor
    expect(docs.idOf(uri)).toBe("p/7 x");
    expect(docs.idOf(vscode.Uri.parse(uri.toString()) as any)).toBe("p/7 x");
    expect(changed).toEqual([uri.toString()]);
    expect(docs.provideTextDocumentContent(uri)).toBe("x = 1\ny = 3\n");
    expect(docs.get("p/7 x")).toMatchObject({ documentUri: "file:///w/src/calc.py", documentVersion: 4, instruction: "fix y" });
    // The buffer moving on does not change the proposal: it is against the text it was computed on.
    doc.setText("totally different\n");
    expect(docs.provideTextDocumentContent(uri)).toBe("x = 1\ny = 3\n");
    docs.forget("p/7 x");
    expect(docs.provideTextDocumentContent(uri)).toMatch(/no longer available/);
  });

  it("drops the proposals of a closed document only", () => {
    const docs = new ProposalDocuments();
    const a = vscode.makeDocument("/w/a.py", "a\n");
    const b = vscode.makeDocument("/w/b.py", "b\n");
    docs.add({ id: "1", backend: "x", status: "ok", edits: [] }, a as any, "i");
    docs.add({ id: "2", backend: "x", status: "ok", edits: [] }, b as any, "i");
    docs.forgetDocument(a.uri.toString());
    expect(docs.get("1")).toBeUndefined();
    expect(docs.get("2")).toBeDefined();
  });
});
