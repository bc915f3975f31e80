import { describe, expect, it } from "vitest";
import type { CompareRow } from "../src/protocol";
import {
  hunkItems,
  proposalRow,
  renderMarkdownTable,
  renderRows,
  rowCells,
  statusText,
  statusTooltip,
  summarize,
} from "../src/render";
import { hunk, report } from "./fixtures";

const rows: CompareRow[] = [
  {
    backend: "gpt",
    status: "ok",
    latencyMs: 1840.4,
    tokens: 512,
    distance: 0.0842,
    excess: 0.061,
    complexityDelta: 3,
    flaggedHunks: 2,
    wellFormed: true,
    syntaxError: null,
    lazyPlaceholders: 0,
  },
  {
    backend: "qwen-local",
    status: "ok",
    latencyMs: 312,
    tokens: { prompt: 300, completion: 40 },
    distance: { tokens: 1, normalized: 0.0111 },
    excess: 0,
    complexityDelta: { before: 4, after: 4, delta: 0 },
    flaggedHunks: [],
    wellFormed: true,
    syntaxError: null,
    lazyPlaceholders: 0,
  },
  { backend: "ollama", status: "error", error: "connection refused", latencyMs: 12000 },
  {
    backend: "llama",
    status: "ok",
    latencyMs: 950,
    tokens: 200,
    distance: 0.2,
    excess: -0.004,
    complexityDelta: -1,
    flaggedHunks: 1,
    wellFormed: false,
    syntaxError: "invalid syntax (line 3)",
    lazyPlaceholders: 2,
  },
];

describe("comparison table", () => {
  it("renders each field of a row as its cell", () => {
    expect(rowCells(rows[0])).toEqual(["gpt", "1840 ms", "0.084", "+0.061", "+3", "2"]);
    expect(rowCells(rows[1])).toEqual(["qwen-local", "312 ms", "0.011", "0.000", "0", "0"]);
    expect(rowCells(rows[2])).toEqual(["ollama", "12.0 s", "–", "–", "–", "–"]);
    expect(rowCells(rows[3])).toEqual(["llama", "950 ms", "0.200", "-0.004", "-1", "1"]);
  });

  it("puts the most faithful backend first and failed ones last", () => {
    expect(renderRows(rows).map((r) => r.row.backend)).toEqual(["qwen-local", "llama", "gpt", "ollama"]);
  });

  it("shows latency, distance, excess, complexity delta and flagged hunks in each item", () => {
    const items = renderRows(rows);
    expect(items[0]).toMatchObject({
      label: "$(pass) qwen-local",
      description: "312 ms · distance 0.011 · excess 0.000 · Δ complexity 0 · 0 flagged",
      detail: "340 tokens",
      previewable: true,
    });
    expect(items[1].label).toBe("$(warning) llama");
    expect(items[1].detail).toBe("200 tokens · answer not well formed · syntax error: invalid syntax (line 3) · 2 lazy placeholders");
    expect(items[2].description).toBe("1840 ms · distance 0.084 · excess +0.061 · Δ complexity +3 · 2 flagged");
    expect(items[3]).toMatchObject({ label: "$(error) ollama", description: "failed after 12.0 s", detail: "connection refused", previewable: false });
  });

  it("renders the same table as Markdown with one line per backend", () => {
    const md = renderMarkdownTable(rows).split("\n");
    expect(md[0]).toBe("| backend | latency | distance | excess | Δ complexity | flagged hunks |");
    expect(md).toHaveLength(6);
    expect(md[2]).toBe("| qwen-local | 312 ms | 0.011 | 0.000 | 0 | 0 |");
    expect(md[5]).toBe("| ollama | 12.0 s | – | – | – | – |");
  });

  it("never shows a signed zero", () => {
    expect(rowCells({ ...rows[0], excess: -0.0001, complexityDelta: 0.2 }).slice(3, 5)).toEqual(["0.000", "0"]);
  });

  it("turns a requestEdit proposal into a row from its report", () => {
    const row = proposalRow({ id: "p1", backend: "b", status: "ok", edits: [], report: report(), latencyMs: 90 });
    expect(rowCells(row)).toEqual(["b", "90 ms", "0.125", "–", "+2", "1"]);
    expect(row.id).toBe("p1");
  });
});

describe("report summary and status bar", () => {
  it("uses the paper-compatible variant and paper complexity", () => {
    expect(summarize(report({ excess: { raw: 0.3, no_comments: 0.01 } }))).toEqual({
      distance: 0.125,
      distanceTokens: 6,
      excess: 0.01,
      complexityDelta: 2,
      flagged: 1,
      hunks: 2,
      identical: false,
      parseError: null,
    });
    expect(summarize(undefined)).toBeUndefined();
  });

  it("says what the last edit did", () => {
    expect(statusText(summarize(report()))).toBe("$(warning) Fidelity d 0.125 · CC +2 · 1 flagged");
    expect(statusText(summarize(report({ hunks: [hunk()], complexity: {} })))).toBe("$(pass) Fidelity d 0.125");
    expect(statusText(summarize(report({ identical: true })))).toBe("$(pass) Fidelity: no change");
    expect(statusText(undefined)).toBe("$(circle-slash) Fidelity");
    expect(statusTooltip(summarize(report()), "proposal from gpt")).toContain("excess over minimal edit: n/a (no gold edit)");
  });

  it("preselects requested hunks only", () => {
    const items = hunkItems(report().hunks.concat(hunk({ start_line: 9, end_line: 8, message: "" , kinds: ["defensive"], unrequested: true })));
    expect(items.map((i) => [i.label, i.picked, i.index])).toEqual([
      ["$(diff) line 2", true, 0],
      ["$(warning) lines 4–5", false, 1],
      ["$(warning) insert before line 9", false, 2],
    ]);
    expect(items[2].description).toBe("defensive");
  });
});
