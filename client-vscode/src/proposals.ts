// The proposed text as a virtual document (scheme `edit-fidelity-proposal`), so a proposal can be
// shown in a diff editor before anything touches the buffer.
import * as vscode from "vscode";
import type { Proposal, TextEdit } from "./protocol";

export const PROPOSAL_SCHEME = "edit-fidelity-proposal";

/** Offsets of line starts; LSP characters are UTF-16 code units, as JavaScript string indices are. */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === 13 /* \r */) {
      if (text.charCodeAt(i + 1) === 10) i++;
      starts.push(i + 1);
    } else if (ch === 10) starts.push(i + 1);
  }
  return starts;
}

function offsetAt(text: string, starts: number[], line: number, character: number): number {
  if (line < 0) return 0;
  if (line >= starts.length) return text.length;
  const start = starts[line];
  const next = line + 1 < starts.length ? starts[line + 1] : text.length;
  // The end of a line is before its line break.
  let lineEnd = next;
  if (line + 1 < starts.length) {
    lineEnd = next - 1;
    if (lineEnd > start && text.charCodeAt(lineEnd - 1) === 13 && text.charCodeAt(lineEnd) === 10) lineEnd--;
  }
  return Math.min(start + Math.max(0, character), lineEnd);
}

/** Apply LSP text edits (all against the same original text, non-overlapping) to `text`. */
export function applyTextEdits(text: string, edits: TextEdit[]): string {
  const starts = lineStarts(text);
  const spans = edits.map((e, i) => ({
    start: offsetAt(text, starts, e.range.start.line, e.range.start.character),
    end: offsetAt(text, starts, e.range.end.line, e.range.end.character),
    text: e.newText,
    i,
  }));
  spans.sort((a, b) => a.start - b.start || a.end - b.end || a.i - b.i);
  for (let k = 1; k < spans.length; k++) {
    if (spans[k].start < spans[k - 1].end) throw new Error("overlapping text edits");
  }
  let out = "";
  let pos = 0;
  for (const s of spans) {
    out += text.slice(pos, s.start) + s.text;
    pos = Math.max(pos, s.end);
  }
  return out + text.slice(pos);
}

export interface StoredProposal {
  proposal: Proposal;
  documentUri: string;
  documentVersion: number;
  proposedText: string;
  instruction: string;
}

export class ProposalDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly store = new Map<string, StoredProposal>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  /** Remember a proposal against the text it was computed on; returns the virtual document's uri. */
  add(proposal: Proposal, document: { uri: vscode.Uri; version: number; getText(): string }, instruction: string): vscode.Uri {
    const proposedText = applyTextEdits(document.getText(), proposal.edits ?? []);
    this.store.set(proposal.id, {
      proposal,
      documentUri: document.uri.toString(),
      documentVersion: document.version,
      proposedText,
      instruction,
    });
    const uri = this.uriFor(proposal.id, document.uri);
    this.changed.fire(uri);
    return uri;
  }

  uriFor(id: string, documentUri: vscode.Uri): vscode.Uri {
    // Keep the original path (so the language and file icon match) and carry the id in the query.
    const base = documentUri.path.split("/").pop() || "proposal";
    return vscode.Uri.from({
      scheme: PROPOSAL_SCHEME,
      path: `/${encodeURIComponent(id)}/${base}`,
      query: `id=${encodeURIComponent(id)}`,
    });
  }

  idOf(uri: vscode.Uri): string | undefined {
    if (uri.scheme !== PROPOSAL_SCHEME) return undefined;
    const m = /(?:^|&)id=([^&]*)/.exec(uri.query);
    return m ? decodeURIComponent(m[1]) : undefined;
  }

  get(id: string): StoredProposal | undefined {
    return this.store.get(id);
  }

  /** The stored proposals of a document, in the order they were added. */
  forDocument(documentUri: string): StoredProposal[] {
    return [...this.store.values()].filter((p) => p.documentUri === documentUri);
  }

  forget(id: string): void {
    this.store.delete(id);
  }

  forgetDocument(documentUri: string): void {
    for (const [id, p] of this.store) if (p.documentUri === documentUri) this.store.delete(id);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const id = this.idOf(uri);
    const stored = id === undefined ? undefined : this.store.get(id);
    if (!stored) return "# This proposal is no longer available (accepted, rejected or the server restarted).\n";
    return stored.proposedText;
  }

  dispose(): void {
    this.store.clear();
    this.changed.dispose();
  }
}
