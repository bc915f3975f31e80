// Text for tables, status bar and messages. Pure (no `vscode` import).
import type {
  BugAnswer,
  CompareRow,
  ComplexityDelta,
  Distance,
  FidelityReport,
  Hunk,
  LocateBugResult,
  NecessityResult,
  Proposal,
} from "./protocol";

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
    parseError: report.parseErrors?.edited ?? null,
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
/** The server's name for a proposal: its backend, and which sample when the backend gave several. */
export function proposalLabel(p: Proposal): string {
  return p.label || p.backend;
}

export function proposalRow(p: Proposal): CompareRow {
  const s = summarize(p.report ?? undefined, p.flaggedHunks);
  return {
    backend: proposalLabel(p),
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

/** Where a hunk sits in the original text: "line 3", "lines 4–5", "insert before line 9". */
export function hunkLines(h: Hunk): string {
  return h.endLine < h.startLine
    ? `insert before line ${h.startLine}`
    : h.endLine === h.startLine
      ? `line ${h.startLine}`
      : `lines ${h.startLine}–${h.endLine}`;
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
    const lines = hunkLines(h);
    const bad = isFlagged(h, index);
    return {
      label: `${bad ? "$(warning)" : "$(diff)"} ${lines}`,
      description: messages?.[index] || h.message || h.kinds.join(", "),
      picked: !bad,
      index,
    };
  });
}

// ---- Locating a syntax bug (editFidelity.locateBug) ------------------------------------------------

function oneLine(text: string, max = 160): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** The 1-based line of an answer in the expected format, or undefined. */
function answeredLine(a: BugAnswer): number | undefined {
  return a.status === "ok" && typeof a.line === "number" && Number.isInteger(a.line) && a.line >= 1 ? a.line : undefined;
}

/**
 * The line to go to for an answer: an answer in the expected format on a line the model was shown
 * (one outside them cannot be right, and the server gives it no diagnostic).
 */
export function bugAnswerLine(a: BugAnswer): number | undefined {
  return a.inRange === false ? undefined : answeredLine(a);
}

/** One answer in words: "line 3, missing_colon", "unparseable answer: …", "failed: …". */
export function bugAnswerText(a: BugAnswer): string {
  if (a.status === "ok") {
    const line = answeredLine(a);
    const parts = [line === undefined ? "no line" : `line ${line}`, a.bugType || "no bug type"];
    if (a.knownType === false && a.bugType) parts.push("not one of the seven bug types");
    if (a.inRange === false) parts.push("outside the lines it was shown");
    return parts.join(", ");
  }
  if (a.status === "unparseable") return `unparseable answer${a.problem ? `: ${a.problem.replace(/\.$/, "")}` : ""}`;
  if (a.status === "error") return `failed: ${(a.error || "no answer").replace(/\.$/, "")}`;
  return String(a.status);
}

export interface BugAnswerItem {
  label: string;
  description: string;
  detail?: string;
  answer: BugAnswer;
  /** The 1-based line to reveal, when there is one (see bugAnswerLine). */
  line?: number;
}

/** QuickPick items, one per backend, in the server's order (the configured backends' order). */
export function bugAnswerItems(result: LocateBugResult): BugAnswerItem[] {
  const answers = Array.isArray(result.answers) ? result.answers : [];
  const shown =
    typeof result.firstLine === "number" && typeof result.lastLine === "number" ? ` (${result.firstLine}–${result.lastLine})` : "";
  return answers.map((a) => {
    const latency = fmtLatency(a.latencyMs);
    if (a.status === "ok") {
      const line = bugAnswerLine(a);
      const notes = [a.bugType || "no bug type"];
      if (a.knownType === false && a.bugType) notes.push("not one of the seven bug types");
      if (a.inRange === false) notes.push(`outside the lines it was shown${shown}`);
      notes.push(latency);
      return {
        label: `${line !== undefined ? "$(bug)" : "$(warning)"} ${a.backend}: line ${answeredLine(a) ?? "?"}`,
        description: notes.join(" · "),
        answer: a,
        line,
      };
    }
    if (a.status === "unparseable") {
      return {
        label: `$(question) ${a.backend}: unparseable answer`,
        description: `${a.problem || "not in the format <line_number>, <bug_type>"} · ${latency}`,
        detail: a.raw ? `answered: ${oneLine(a.raw)}` : undefined,
        answer: a,
      };
    }
    return {
      label: `$(error) ${a.backend}: ${a.status === "error" ? "failed" : a.status}`,
      description: `${a.error || "no answer"}${a.errorKind ? ` (${a.errorKind})` : ""} · ${latency}`,
      answer: a,
    };
  });
}

/** A fenced block that no backtick run inside `text` can close early. */
function fenced(text: string, info = "text"): string {
  const longest = Math.max(2, ...Array.from(text.matchAll(/`+/g), (m) => m[0].length));
  const fence = "`".repeat(longest + 1);
  return `${fence}${info}\n${text.replace(/\n$/, "")}\n${fence}`;
}

/** Every answer as received, for "Show the Answers": the parse and the raw text of each backend. */
export function bugAnswersMarkdown(result: LocateBugResult, documentName?: string): string {
  const answers = Array.isArray(result.answers) ? result.answers : [];
  const out = [`# Where is the syntax bug${documentName ? ` in ${documentName}` : ""}?`, ""];
  if (typeof result.firstLine === "number" && typeof result.lastLine === "number") {
    out.push(`Lines shown to the models: ${result.firstLine}–${result.lastLine}.`, "");
  }
  for (const a of answers) {
    out.push(`## ${a.backend}: ${bugAnswerText(a)}`, "");
    const facts = [`status ${a.status}`, `latency ${fmtLatency(a.latencyMs)}`];
    if (a.usage && (typeof a.usage.promptTokens === "number" || typeof a.usage.completionTokens === "number")) {
      facts.push(`tokens ${a.usage.promptTokens ?? DASH} prompt, ${a.usage.completionTokens ?? DASH} completion`);
    }
    if (typeof a.attempts === "number" && a.attempts > 1) facts.push(`${a.attempts} attempts`);
    if (a.errorKind) facts.push(`error kind ${a.errorKind}`);
    out.push(facts.join(" · "), "");
    if (typeof a.raw === "string") out.push(fenced(a.raw), "");
  }
  return out.join("\n");
}

// ---- Which hunks do the tests need (editFidelity.analyzeNecessity) ---------------------------------

/** 1-based hunk numbers, with where each hunk is when the proposal's hunks are known. */
export function hunkList(indices: number[], hunks?: Hunk[] | null): string {
  return indices.map((i) => (hunks?.[i] ? `${i + 1} (${hunkLines(hunks[i])})` : String(i + 1))).join(", ");
}

export interface NecessitySummary {
  /** One sentence or two, for a message. */
  text: string;
  /** minimal or budget: the analysis says which hunks the tests need. */
  conclusive: boolean;
  /** D_min (normalised, no_comments variant first) and the reference-free excess. */
  dMin: number | null;
  excess: number | null;
}

export function summarizeNecessity(r: NecessityResult, hunks?: Hunk[] | null): NecessitySummary {
  const dMin = pick(r.dMin ?? undefined, VARIANT_ORDER);
  const e = pick(r.excessRefFree ?? undefined, VARIANT_ORDER);
  const base = { dMin: dMin && typeof dMin.normalized === "number" ? dMin.normalized : null, excess: typeof e === "number" ? e : null };
  const conclusive = r.status === "minimal" || r.status === "budget";
  if (!conclusive) {
    // The server's own words: why there is nothing to conclude (its first line; the rest is output).
    const why = (r.message || r.status).split("\n")[0].replace(/\.$/, "");
    return { text: `${why}.`, conclusive, ...base };
  }
  const n = r.hunks;
  const needed = Array.isArray(r.needed) ? r.needed : [];
  const unnecessary = Array.isArray(r.unnecessary) ? r.unnecessary : [];
  const runs = `${r.runs} of at most ${r.maxRuns} test run${r.maxRuns === 1 ? "" : "s"}`;
  let text: string;
  if (needed.length === 0) text = `the tests pass on the original: none of the ${n} hunk${n === 1 ? " is" : "s is"} needed.`;
  else if (unnecessary.length === 0) text = `the tests need ${n === 1 ? "the only hunk" : `all ${n} hunks`}.`;
  else {
    text =
      `the tests need ${needed.length} of ${n} hunks: ${hunkList(needed, hunks)}. ` +
      `They pass without ${unnecessary.length === 1 ? "hunk" : "hunks"} ${hunkList(unnecessary, hunks)}.`;
  }
  const unrequested = Array.isArray(r.unrequested) ? r.unrequested : [];
  if (unrequested.length) {
    const which = hunkList(unrequested.map((f) => f.hunk), hunks);
    text += ` Not requested on that evidence (the instruction asks for ${unrequested.length === 1 ? "it" : "them"} neither by kind nor by name): ${unrequested.length === 1 ? "hunk" : "hunks"} ${which}.`;
  }
  text += ` ${runs}`;
  if (base.dMin !== null || base.excess !== null) {
    text += `; D_min ${fmtDistance(base.dMin)}, reference-free excess ${fmtSigned(base.excess, 3)}`;
  }
  text += ".";
  if (r.status === "budget") text += " The run budget ran out: the needed hunks may not be minimal.";
  return { text, conclusive, ...base };
}

const RUN_RESULT: Record<string, string> = { true: "pass", false: "fail", null: "could not run" };

/** The whole analysis as Markdown: the verdict, the distances per variant and every test run. */
export function necessityMarkdown(r: NecessityResult, title?: string, hunks?: Hunk[] | null): string {
  const s = summarizeNecessity(r, hunks);
  const out = [`# Which hunks do the tests need?${title ? ` (${title})` : ""}`, "", s.text.replace(/^./, (c) => c.toUpperCase()), ""];
  if (r.message && r.message.includes("\n")) out.push(fenced(r.message), "");
  const facts: string[] = [];
  if (Array.isArray(r.testCommand) && r.testCommand.length) facts.push(`- test command: \`${r.testCommand.join(" ")}\``);
  if (r.isolation) facts.push(`- sandbox: ${r.isolation}${r.environment ? `, environment ${r.environment}` : ""}`);
  if (typeof r.files === "number") facts.push(`- workspace files copied into each run: ${r.files}`);
  facts.push(`- status: ${r.status}${r.oneMinimal ? " (1-minimal: leaving out any one needed hunk fails the tests)" : ""}`);
  facts.push(`- runs: ${r.runs} of at most ${r.maxRuns}${r.cacheHits ? `, ${r.cacheHits} answered from the cache` : ""}`);
  if (typeof r.elapsedMs === "number") facts.push(`- time: ${fmtLatency(r.elapsedMs)}`);
  out.push(...facts, "");
  const variants = Object.keys(r.distance ?? r.dMin ?? {});
  if (variants.length) {
    out.push("| variant | distance | D_min | reference-free excess |", "| --- | ---: | ---: | ---: |");
    for (const v of variants) {
      out.push(`| ${v} | ${fmtDistance(r.distance?.[v])} | ${fmtDistance(r.dMin?.[v])} | ${fmtSigned(r.excessRefFree?.[v], 3)} |`);
    }
    out.push("");
  }
  const probes = Array.isArray(r.probes) ? r.probes : [];
  if (probes.length) {
    out.push("| run | hunks kept | tests | sandbox status | time |", "| ---: | --- | --- | --- | ---: |");
    probes.forEach((p, i) => {
      const kept = p.hunks.length === 0 ? "none (the original)" : p.hunks.length === r.hunks ? "all" : hunkList(p.hunks);
      const wall = typeof p.wallS === "number" ? `${p.wallS.toFixed(1)} s` : DASH;
      out.push(`| ${i + 1} | ${kept} | ${RUN_RESULT[String(p.passed)] ?? DASH} | ${p.status} | ${wall} |`);
    });
    out.push("");
  }
  return out.join("\n");
}
