import type { FidelityReport, Hunk } from "../src/protocol";

export function hunk(over: Partial<Hunk> = {}): Hunk {
  return {
    start_line: 2,
    end_line: 2,
    new_start_line: 2,
    new_end_line: 2,
    kinds: ["logic"],
    tokens_changed: 1,
    unrequested: false,
    message: "changes the comparison",
    ...over,
  };
}

export function report(over: Partial<FidelityReport> = {}): FidelityReport {
  return {
    distance: { raw: { tokens: 9, normalized: 0.25 }, no_comments: { tokens: 6, normalized: 0.125 } },
    excess: null,
    gold_distance: null,
    complexity: {
      paper: { before: 2, after: 4, delta: 2 },
      sonar: { before: 2, after: 5, delta: 3 },
    },
    hunks: [
      hunk(),
      hunk({ start_line: 4, end_line: 5, kinds: ["rename"], unrequested: true, message: "renamed `x` to `value` (not requested)" }),
    ],
    functions: [],
    edits: [],
    parse_errors: { original: null, edited: null },
    identical: false,
    ...over,
  };
}
