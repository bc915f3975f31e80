// Text for tables, status bar and messages. Pure (no `vscode` import).
import type { CompareRow, ComplexityDelta, Distance, FidelityReport, Hunk, Proposal } from "./protocol";

/** The numbers the UI shows for one report (the paper-compatible `no_comments` variant first). */
export interface Summary {
  distance: number | null;
  distanceTokens: number | null;
  excess: number | null;
  complexityDelta: number | null;
  flagged: number;
  hunks: number;
  identical: boolean;
  parseError: string | null;
}

const VARIANT_ORDER = ["no_comments", "raw", "body_no_comments"];
const COMPLEXITY_ORDER = ["paper", "sonar", "cyclomatic"];

function pick<T>(record: Record<string, T> | null | undefined, order: string[]): T | undefined {
  if (!record) return undefined;
  for (const key of order) if (record[key] !== undefined && record[key] !== null) return record[key];
  const first = Object.keys(record)[0];
  return first === undefined ? undefined : record[first];
}

/**
 * `flagged`: the server's own verdict (indices into report.hunks, by its thresholds) when it sent
 * one; otherwise the report's `unrequested` marks.
 */
export function summarize(report: FidelityReport | null | undefined, flagged?: number[] | null): Summary | undefined {
  if (!report) return undefined;
  const d = pick(report.distance, VARIANT_ORDER);
  const e = pick(report.excess ?? undefined, VARIANT_ORDER);
  const c = pick(report.complexity, COMPLEXITY_ORDER);
  const hunks = report.hunks ?? [];
  return {
    distance: d ? d.normalized : null,
    distanceTokens: d ? d.tokens : null,
    excess: typeof e === "number" ? e : null,
    complexityDelta: c && typeof c.delta === "number" ? c.delta : null,
    flagged: Array.isArray(flagged) ? flagged.length : hunks.filter((h) => h.unrequested).length,
    hunks: hunks.length,
    identical: report.identical === true,
    parseError: report.parse_errors?.edited ?? null,
  };
}

const DASH = "–";

export function fmtDistance(v: number | Distance | null | undefined): string {
  if (v === null || v === undefined) return DASH;
  const n = typeof v === "number" ? v : v.normalized;
  return typeof n === "number" && Number.isFinite(n) ? n.toFixed(3) : DASH;
}

export function fmtSigned(v: number | null | undefined, digits = 0): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return DASH;
  const s = v.toFixed(digits);
  if (Number(s) === 0) return (0).toFixed(digits); // no "+0.000" or "-0.000"
  return v > 0 ? `+${s}` : s;
}

export function fmtLatency(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return DASH;
  return ms >= 10000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`;
}

function complexityOf(v: number | ComplexityDelta | null | undefined): number | null {
  if (v === null || v === undefined) return null;
  if (typeof v === "number") return v;
  return typeof v.delta === "number" ? v.delta : null;
}

function countOf(v: number | unknown[] | null | undefined): number | null {
  if (v === null || v === undefined) return null;
  return Array.isArray(v) ? v.length : typeof v === "number" ? v : null;
}

function tokensOf(v: CompareRow["tokens"]): number | null {
  if (v === null || v === undefined) return null;
  if (typeof v === "number") return v;
  if (typeof v.total === "number") return v.total;
  const sum = (v.prompt ?? 0) + (v.completion ?? 0);
  return sum || null;
}

export const TABLE_COLUMNS = ["backend", "latency", "distance", "excess", "Δ complexity", "flagged hunks"] as const;

/** One table row as cells, in TABLE_COLUMNS order. */
export function rowCells(row: CompareRow): string[] {
  if (row.status !== "ok") {
    return [row.backend, fmtLatency(row.latencyMs), DASH, DASH, DASH, DASH];
  }
  const flagged = countOf(row.flaggedHunks);
  return [
    row.backend,
    fmtLatency(row.latencyMs),
    fmtDistance(row.distance),
    typeof row.excess === "number" ? fmtSigned(row.excess, 3) : DASH,
    fmtSigned(complexityOf(row.complexityDelta)),
    flagged === null ? DASH : String(flagged),
  ];
}

export interface RowItem {
  label: string;
  description: string;
  detail?: string;
  row: CompareRow;
  /** An errored row can be shown but not previewed. */
  previewable: boolean;
}

function rowNotes(row: CompareRow): string[] {
  const notes: string[] = [];
  const tokens = tokensOf(row.tokens);
  if (tokens !== null) notes.push(`${tokens} tokens`);
  if (row.wellFormed === false) notes.push("answer not well formed");
  if (row.syntaxError) notes.push(typeof row.syntaxError === "string" ? `syntax error: ${row.syntaxError}` : "syntax error");
  const lazy = row.lazyPlaceholders;
  if (lazy === true || (typeof lazy === "number" && lazy > 0)) {
    notes.push(typeof lazy === "number" ? `${lazy} lazy placeholder${lazy === 1 ? "" : "s"}` : "lazy placeholders");
  }
  if (row.tests !== undefined && row.tests !== null) notes.push(`tests: ${typeof row.tests === "string" ? row.tests : JSON.stringify(row.tests)}`);
  return notes;
}

/** Sort key: ok rows first, then fewer flagged hunks, smaller excess, smaller distance. */
function rank(row: CompareRow): number[] {
  const ok = row.status === "ok" ? 0 : 1;
  const flagged = countOf(row.flaggedHunks) ?? 1e9;
  const excess = typeof row.excess === "number" ? row.excess : 1e9;
  const d = row.distance === null || row.distance === undefined ? 1e9 : typeof row.distance === "number" ? row.distance : row.distance.normalized;
  return [ok, flagged, excess, d];
}

export function sortRows(rows: CompareRow[]): CompareRow[] {
  return [...rows].sort((a, b) => {
    const ra = rank(a);
    const rb = rank(b);
    for (let i = 0; i < ra.length; i++) if (ra[i] !== rb[i]) return ra[i] - rb[i];
    return a.backend.localeCompare(b.backend);
  });
}

/** QuickPick rows of the comparison table, best first. */
export function renderRows(rows: CompareRow[]): RowItem[] {
  return sortRows(rows).map((row) => {
    const [backend, latency, distance, excess, complexity, flagged] = rowCells(row);
    if (row.status !== "ok") {
      return {
        label: `$(error) ${backend}`,
        description: `failed after ${latency}`,
        detail: row.error ?? "no answer",
        row,
        previewable: false,
      };
    }
    const notes = rowNotes(row);
    const flaggedN = countOf(row.flaggedHunks) ?? 0;
    return {
      label: `${flaggedN > 0 ? "$(warning)" : "$(pass)"} ${backend}`,
      description: `${latency} · distance ${distance} · excess ${excess} · Δ complexity ${complexity} · ${flagged} flagged`,
      detail: notes.length ? notes.join(" · ") : undefined,
      row,
      previewable: true,
    };
  });
}

/** The same table as Markdown (the "copy table" / report view). */
export function renderMarkdownTable(rows: CompareRow[]): string {
  const header = `| ${TABLE_COLUMNS.join(" | ")} |`;
  const sep = `|${TABLE_COLUMNS.map((_, i) => (i === 0 ? " --- " : " ---: ")).join("|")}|`;
  const body = sortRows(rows).map((r) => `| ${rowCells(r).map((c) => c.replace(/\|/g, "\\|")).join(" | ")} |`);
  return [header, sep, ...body].join("\n");
}

/** A compare row built from a requestEdit proposal, so several proposals share the table. */
export function proposalRow(p: Proposal): CompareRow {
  const s = summarize(p.report ?? undefined, p.flaggedHunks);
  return {
    backend: p.backend,
    status: p.status,
    error: p.error ?? undefined,
    latencyMs: p.latencyMs ?? null,
    distance: s ? s.distance : null,
    excess: s ? s.excess : null,
    complexityDelta: s ? s.complexityDelta : null,
    flaggedHunks: s ? s.flagged : null,
    id: p.id,
    edits: p.edits,
  };
}

export function statusText(s: Summary | undefined): string {
  if (!s) return "$(circle-slash) Fidelity";
  if (s.identical) return "$(pass) Fidelity: no change";
  const icon = s.flagged > 0 ? "$(warning)" : "$(pass)";
  const parts = [`d ${fmtDistance(s.distance)}`];
  if (s.excess !== null) parts.push(`excess ${fmtSigned(s.excess, 3)}`);
  if (s.complexityDelta !== null && s.complexityDelta !== 0) parts.push(`CC ${fmtSigned(s.complexityDelta)}`);
  if (s.flagged > 0) parts.push(`${s.flagged} flagged`);
  return `${icon} Fidelity ${parts.join(" · ")}`;
}

export function statusTooltip(s: Summary | undefined, origin: string): string {
  if (!s) return "Edit Fidelity: no edit measured yet";
  const lines = [
    `Edit Fidelity: ${origin}`,
    `token distance: ${fmtDistance(s.distance)}${s.distanceTokens !== null ? ` (${s.distanceTokens} tokens)` : ""}`,
    `excess over minimal edit: ${s.excess === null ? "n/a (no gold edit)" : fmtSigned(s.excess, 3)}`,
    `cognitive complexity delta: ${fmtSigned(s.complexityDelta)}`,
    `hunks: ${s.hunks}, flagged as not requested: ${s.flagged}`,
  ];
  if (s.parseError) lines.push(`edited code does not parse: ${s.parseError}`);
  return lines.join("\n");
}

export interface HunkItem {
  label: string;
  description: string;
  picked: boolean;
  index: number;
}

/** Multi-select items for "accept some hunks": requested hunks preselected, flagged ones not. */
export function hunkItems(hunks: Hunk[], flagged?: number[] | null, messages?: string[] | null): HunkItem[] {
  const isFlagged = (h: Hunk, i: number) => (Array.isArray(flagged) ? flagged.includes(i) : h.unrequested);
  return hunks.map((h, index) => {
    const lines =
      h.end_line < h.start_line
        ? `insert before line ${h.start_line}`
        : h.end_line === h.start_line
          ? `line ${h.start_line}`
          : `lines ${h.start_line}–${h.end_line}`;
    const bad = isFlagged(h, index);
    return {
      label: `${bad ? "$(warning)" : "$(diff)"} ${lines}`,
      description: messages?.[index] || h.message || h.kinds.join(", "),
      picked: !bad,
      index,
    };
  });
}
