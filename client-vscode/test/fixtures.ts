import type { BugAnswer, FidelityReport, Hunk, NecessityResult } from "../src/protocol";

export function hunk(over: Partial<Hunk> = {}): Hunk {
  return {
    startLine: 2,
    endLine: 2,
    newStartLine: 2,
    newEndLine: 2,
    kinds: ["logic"],
    tokensChanged: 1,
    unrequested: false,
    message: "changes the comparison",
    renames: {},
    edits: [],
    names: [],
    functions: [],
    tokenSpans: [],
    ...over,
  };
}

export function report(over: Partial<FidelityReport> = {}): FidelityReport {
  return {
    distance: { raw: { tokens: 9, normalized: 0.25 }, no_comments: { tokens: 6, normalized: 0.125 } },
    excess: null,
    goldDistance: null,
    complexity: {
      paper: { before: 2, after: 4, delta: 2 },
      sonar: { before: 2, after: 5, delta: 3 },
    },
    hunks: [
      hunk(),
      hunk({ startLine: 4, endLine: 5, kinds: ["rename"], unrequested: true, message: "renamed `x` to `value` (not requested)" }),
    ],
    functions: [],
    edits: [],
    parseErrors: { original: null, edited: null },
    identical: false,
    localizedDistance: null,
    goldComplexity: null,
    language: "python",
    ...over,
  };
}

/** An `editFidelity.locateBug` answer as the server sends it (msgspec, camelCase, every field). */
export function bugAnswer(over: Partial<BugAnswer> = {}): BugAnswer {
  return {
    backend: "qwen",
    status: "ok",
    line: 2,
    bugType: "missing_colon",
    knownType: true,
    raw: "2, missing_colon",
    problem: null,
    inRange: true,
    error: null,
    errorKind: null,
    latencyMs: 420.5,
    usage: { promptTokens: 900, completionTokens: 6 },
    attempts: 1,
    ...over,
  };
}

/** An `editFidelity.analyzeNecessity` result as the server sends it: 1 of 3 hunks needed. */
export function necessity(over: Partial<NecessityResult> = {}): NecessityResult {
  return {
    id: "p1",
    status: "minimal",
    message: "1 of 3 hunks needed; the tests pass without hunk(s) 2, 3 (4 runs)",
    hunks: 3,
    needed: [0],
    unnecessary: [1, 2],
    runs: 4,
    maxRuns: 32,
    cacheHits: 1,
    oneMinimal: true,
    distance: { raw: { tokens: 12, normalized: 0.3 }, no_comments: { tokens: 10, normalized: 0.25 } },
    dMin: { raw: { tokens: 2, normalized: 0.05 }, no_comments: { tokens: 2, normalized: 0.05 } },
    excessRefFree: { raw: 0.25, no_comments: 0.2 },
    probes: [
      { hunks: [0, 1, 2], passed: true, status: "ok", wallS: 1.25 },
      { hunks: [], passed: false, status: "failed", wallS: 0.5 },
      { hunks: [0], passed: true, status: "ok", wallS: 0.75 },
      { hunks: [1, 2], passed: false, status: "failed", wallS: 0.5 },
    ],
    testCommand: ["python", "-m", "pytest", "-x", "tests/test_clip.py"],
    isolation: "bwrap",
    environment: null,
    files: 14,
    elapsedMs: 3120.4,
    ...over,
  };
}
