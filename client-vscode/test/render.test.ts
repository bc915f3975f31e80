import { describe, expect, it } from "vitest";
import type { CompareRow } from "../src/protocol";
import {
  bugAnswerItems,
  bugAnswerLine,
  bugAnswersMarkdown,
  bugAnswerText,
  hunkItems,
  hunkList,
  necessityMarkdown,
  proposalRow,
  renderMarkdownTable,
  renderRows,
  rowCells,
  statusText,
  statusTooltip,
  summarize,
  summarizeNecessity,
} from "../src/render";
import { bugAnswer, hunk, necessity, report } from "./fixtures";

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
    const items = hunkItems(report().hunks.concat(hunk({ startLine: 9, endLine: 8, message: "" , kinds: ["defensive"], unrequested: true })));
    expect(items.map((i) => [i.label, i.picked, i.index])).toEqual([
      ["$(diff) line 2", true, 0],
      ["$(warning) lines 4–5", false, 1],
      ["$(warning) insert before line 9", false, 2],
    ]);
    expect(items[2].description).toBe("defensive");
  });
});

describe("syntax bug answers", () => {
  const result = {
    answers: [
      bugAnswer(),
      bugAnswer({ backend: "gpt", line: 40, bugType: "missing_comma", inRange: false, raw: "40, missing_comma", latencyMs: 12500 }),
      bugAnswer({ backend: "llama", bugType: "typo", knownType: false, raw: "Answer: 2, typo." }),
      bugAnswer({
        backend: "chatty",
        status: "unparseable",
        line: null,
        bugType: null,
        knownType: false,
        inRange: false,
        raw: "The bug is\n  probably on line two, I think.",
        problem: "no `<line_number>, <bug_type>` answer: prose",
      }),
      bugAnswer({ backend: "down", status: "error", line: null, bugType: null, knownType: false, inRange: false, raw: null, error: "connection refused.", errorKind: "connection", usage: null, attempts: 3 }),
    ],
    uri: "file:///w/clip.py",
    version: 7,
    firstLine: 1,
    lastLine: 4,
    warnings: ["gpt answered line 40, outside the lines it was shown (1-4)"],
  };

  it("says each answer in words", () => {
    expect(result.answers.map(bugAnswerText)).toEqual([
      "line 2, missing_colon",
      "line 40, missing_comma, outside the lines it was shown",
      "line 2, typo, not one of the seven bug types",
      "unparseable answer: no `<line_number>, <bug_type>` answer: prose",
      "failed: connection refused",
    ]);
  });

  it("offers a line to go to only for a parsed answer on a line the model was shown", () => {
    expect(result.answers.map(bugAnswerLine)).toEqual([2, undefined, 2, undefined, undefined]);
    expect(bugAnswerLine(bugAnswer({ line: 0 }))).toBeUndefined();
    expect(bugAnswerLine(bugAnswer({ line: 2.5 }))).toBeUndefined();
    // An older server without inRange: the line counts.
    expect(bugAnswerLine(bugAnswer({ inRange: undefined }))).toBe(2);
  });

  it("renders one quick pick item per backend, in the server's order", () => {
    const items = bugAnswerItems(result);
    expect(items.map((i) => [i.label, i.description, i.detail, i.line])).toEqual([
      ["$(bug) qwen: line 2", "missing_colon · 421 ms", undefined, 2],
      ["$(warning) gpt: line 40", "missing_comma · outside the lines it was shown (1–4) · 12.5 s", undefined, undefined],
      ["$(bug) llama: line 2", "typo · not one of the seven bug types · 421 ms", undefined, 2],
      [
        "$(question) chatty: unparseable answer",
        "no `<line_number>, <bug_type>` answer: prose · 421 ms",
        "answered: The bug is probably on line two, I think.",
        undefined,
      ],
      ["$(error) down: failed", "connection refused. (connection) · 421 ms", undefined, undefined],
    ]);
    expect(bugAnswerItems({ answers: undefined as any })).toEqual([]);
  });

  it("shows every answer as received, fenced so that no answer can break the document", () => {
    const md = bugAnswersMarkdown(
      { ...result, answers: [...result.answers, bugAnswer({ backend: "fence", raw: "```python\nx = 1\n```\n2, missing_colon" })] },
      "clip.py",
    );
    expect(md).toContain("# Where is the syntax bug in clip.py?\n\nLines shown to the models: 1–4.");
    expect(md).toContain("## qwen: line 2, missing_colon\n\nstatus ok · latency 421 ms · tokens 900 prompt, 6 completion\n\n```text\n2, missing_colon\n```");
    expect(md).toContain("## down: failed: connection refused\n\nstatus error · latency 421 ms · 3 attempts · error kind connection\n");
    expect(md).toContain("````text\n```python\nx = 1\n```\n2, missing_colon\n````");
  });
});

describe("which hunks the tests need", () => {
  const hunks = [hunk(), hunk({ startLine: 4, endLine: 5 }), hunk({ startLine: 9, endLine: 8 })];

  it("numbers hunks from 1 and says where they are when the proposal's hunks are known", () => {
    expect(hunkList([0, 2])).toBe("1, 3");
    expect(hunkList([1, 2], hunks)).toBe("2 (lines 4–5), 3 (insert before line 9)");
  });

  it("summarizes a conclusive analysis with the needed hunks, the runs, D_min and the reference-free excess", () => {
    expect(summarizeNecessity(necessity(), hunks)).toEqual({
      text: "the tests need 1 of 3 hunks: 1 (line 2). They pass without hunks 2 (lines 4–5), 3 (insert before line 9). 4 of at most 32 test runs; D_min 0.050, reference-free excess +0.200.",
      conclusive: true,
      dMin: 0.05,
      excess: 0.2,
    });
    expect(summarizeNecessity(necessity({ status: "budget", needed: [0, 1], unnecessary: [2], runs: 32 })).text).toBe(
      "the tests need 2 of 3 hunks: 1, 2. They pass without hunk 3. 32 of at most 32 test runs; D_min 0.050, reference-free excess +0.200. The run budget ran out: the needed hunks may not be minimal.",
    );
    expect(summarizeNecessity(necessity({ needed: [], unnecessary: [0, 1, 2], dMin: null, excessRefFree: null })).text).toBe(
      "the tests pass on the original: none of the 3 hunks is needed. 4 of at most 32 test runs.",
    );
    expect(summarizeNecessity(necessity({ needed: [0, 1, 2], unnecessary: [], excessRefFree: { no_comments: 0 } })).text).toBe(
      "the tests need all 3 hunks. 4 of at most 32 test runs; D_min 0.050, reference-free excess 0.000.",
    );
  });

  it("names the unnecessary hunks nothing in the instruction asks for", () => {
    const flag = { hunk: 2, kinds: ["logic"], severity: 2, message: "not requested: the tests pass without it" };
    expect(summarizeNecessity(necessity({ unrequested: [flag] }), hunks).text).toBe(
      "the tests need 1 of 3 hunks: 1 (line 2). They pass without hunks 2 (lines 4–5), 3 (insert before line 9). Not requested on that evidence (the instruction asks for it neither by kind nor by name): hunk 3 (insert before line 9). 4 of at most 32 test runs; D_min 0.050, reference-free excess +0.200.",
    );
  });

  it("passes on the server's reason when there is nothing to conclude", () => {
    const fails = necessity({
      status: "full_fails",
      message: "`python -m pytest` fails with the whole proposal (failed, exit code 1): nothing to conclude\nE   assert 1 == 2",
      needed: [0, 1, 2],
      unnecessary: [],
      distance: null,
      dMin: null,
      excessRefFree: null,
    });
    expect(summarizeNecessity(fails)).toEqual({
      text: "`python -m pytest` fails with the whole proposal (failed, exit code 1): nothing to conclude.",
      conclusive: false,
      dMin: null,
      excess: null,
    });
    expect(necessityMarkdown(fails)).toContain("```text\n`python -m pytest` fails with the whole proposal (failed, exit code 1): nothing to conclude\nE   assert 1 == 2\n```");
  });

  it("shows the analysis as Markdown: facts, distances per variant and every run", () => {
    const md = necessityMarkdown(necessity(), "qwen proposal").split("\n");
    expect(md[0]).toBe("# Which hunks do the tests need? (qwen proposal)");
    expect(md[2]).toBe(
      "The tests need 1 of 3 hunks: 1. They pass without hunks 2, 3. 4 of at most 32 test runs; D_min 0.050, reference-free excess +0.200.",
    );
    expect(md).toContain("- test command: `python -m pytest -x tests/test_clip.py`");
    expect(md).toContain("- sandbox: bwrap");
    expect(md).toContain("- status: minimal (1-minimal: leaving out any one needed hunk fails the tests)");
    expect(md).toContain("- runs: 4 of at most 32, 1 answered from the cache");
    expect(md).toContain("| no_comments | 0.250 | 0.050 | +0.200 |");
    expect(md).toContain("| 1 | all | pass | ok | 1.3 s |");
    expect(md).toContain("| 2 | none (the original) | fail | failed | 0.5 s |");
    expect(md).toContain("| 4 | 2, 3 | fail | failed | 0.5 s |");
  });
});
