// The language server's command contract (issue 3 / SPEC section 4), as the extension sees it.
// Everything here is plain JSON; the server is the authority, so the types are lenient where the
// contract leaves room (numbers that may arrive as objects, optional fields).

// The command names, arguments, proposals and the fidelity report are the server's (server/protocol,
// generated); the other results below are read leniently.
import type * as protocol from "./protocol.generated";
export { Commands } from "./protocol.generated";

/** The fidelity report and its parts: the server's Structs (server/protocol/report.py), generated. */
export type {
  ComplexityDelta,
  Distance,
  FidelityReport,
  FunctionChange,
  Hunk,
  ParseStatus,
  Position,
  Range,
  TextEdit,
} from "./protocol.generated";
import type { ComplexityDelta, Distance, TextEdit } from "./protocol.generated";

export type RequestEditParams = protocol.RequestEditArgs;

/** A proposal as the server sends it (`ProposalRecord`, generated); the extension also previews one built from a
 * compare row, which has only the first four fields. */
export type Proposal = Pick<protocol.ProposalRecord, "id" | "backend" | "status" | "edits"> & Partial<protocol.ProposalRecord>;

export type SelectProposalParams = protocol.SelectProposalArgs;

export interface SelectProposalResult {
  active: string;
}

export type RequestEditResult = protocol.RequestEditResult;

export type ApplyProposalParams = protocol.ApplyProposalArgs;

export interface ApplyProposalResult {
  applied: boolean;
  /** stale | unknown | error_proposal | closed | rejected | unsupported | nothing */
  reason?: string | null;
  message?: string | null;
  hunks?: number[];
}

export type CompareBackendsParams = protocol.CompareBackendsArgs;

/** One row of `editFidelity.compareBackends`. Numbers may be absent when a backend failed. */
export interface CompareRow {
  backend: string;
  status: "ok" | "error" | string;
  error?: string;
  latencyMs?: number | null;
  tokens?: number | { prompt?: number; completion?: number; total?: number } | null;
  distance?: number | Distance | null;
  excess?: number | null;
  complexityDelta?: number | ComplexityDelta | null;
  flaggedHunks?: number | unknown[] | null;
  wellFormed?: boolean | null;
  syntaxError?: string | boolean | null;
  lazyPlaceholders?: number | boolean | null;
  tests?: unknown;
  hunks?: number;
  distanceTokens?: number | null;
  /** The row's proposal stays pending on the server: applyProposal {id: proposalId} applies it. */
  proposalId?: string;
  /** Preview without asking the backend again, when the server sends the edits with the row. */
  edits?: TextEdit[];
  /** Client side only: rows built from requestEdit proposals. */
  id?: string;
}

export interface CompareBackendsResult {
  rows: CompareRow[];
  warnings?: string[];
}

export type Baseline = "snapshot" | "git" | { text: string };

export type CheckChangeParams = protocol.CheckChangeArgs;

export type CheckChangeResult = protocol.CheckChangeResult;

export type LocateBugParams = protocol.LocateBugArgs;

/** One backend's answer to `editFidelity.locateBug` (server/lsp/handlers/locate_bug.py). */
export interface BugAnswer {
  backend: string;
  /** ok: `line` and `bugType`; unparseable: `problem` says why; error: the backend failed. */
  status: "ok" | "unparseable" | "error" | string;
  /** 1-based document line, as answered. */
  line?: number | null;
  /** Lower-cased, as answered. */
  bugType?: string | null;
  /** One of the seven bug types. */
  knownType?: boolean;
  /** The answer as received (null when the backend failed). */
  raw?: string | null;
  problem?: string | null;
  /** The line is one the model was shown: the server published a diagnostic on it. */
  inRange?: boolean;
  error?: string | null;
  errorKind?: string | null;
  latencyMs?: number | null;
  usage?: { promptTokens?: number | null; completionTokens?: number | null } | null;
  attempts?: number;
}

export interface LocateBugResult {
  answers: BugAnswer[];
  uri?: string;
  version?: number;
  /** The lines the model was shown (1-based, inclusive). */
  firstLine?: number;
  lastLine?: number;
  warnings?: string[];
}

export type AnalyzeNecessityParams = protocol.IdArgs;

/** One run of the test command: the hunks kept, and whether the tests passed (null: could not run). */
export interface NecessityRun {
  hunks: number[];
  passed: boolean | null;
  /** The sandbox's status: ok | failed | timeout | memory | output_limit | error | unknown. */
  status: string;
  wallS?: number;
}

/** The result of `editFidelity.analyzeNecessity` (NecessityRecord in server/lsp/necessity/analysis.py). */
export interface NecessityResult {
  id: string;
  /** minimal | budget | full_fails | unresolved | no_hunks */
  status: "minimal" | "budget" | "full_fails" | "unresolved" | "no_hunks" | string;
  message: string;
  /** Number of hunks in the proposal. */
  hunks: number;
  /** Hunk indices (into report.hunks) the tests need; every hunk when nothing passes. */
  needed: number[];
  /** Hunk indices the tests pass without (all left out at once). */
  unnecessary: number[];
  runs: number;
  maxRuns: number;
  cacheHits?: number;
  oneMinimal?: boolean;
  /** d(proposal, original) per variant. */
  distance?: Record<string, Distance> | null;
  /** d(minimal passing sub-edit, original) per variant. */
  dMin?: Record<string, Distance> | null;
  /** distance - D_min (normalised) per variant: the excess without a reference edit. */
  excessRefFree?: Record<string, number> | null;
  probes?: NecessityRun[];
  testCommand?: string[];
  isolation?: string;
  environment?: string | null;
  /** Workspace files copied into each run. */
  files?: number;
  elapsedMs?: number;
  /** The unnecessary hunks nothing in the instruction asks for, by kind or by name (the proposal's own flags left out). */
  unrequested?: UnneededFlag[];
}

/** A hunk the tests pass without that the instruction asks for neither by kind nor by name. */
export interface UnneededFlag {
  hunk: number;
  kinds: string[];
  /** LSP DiagnosticSeverity (1 error .. 4 hint). */
  severity: number;
  message: string;
}
