// The command flows: input -> server command (with progress and cancellation) -> preview -> apply.
// They talk to the server only through `ServerApi`, so tests drive them with a scripted server.
import * as vscode from "vscode";
import {
  Commands,
  type AnalyzeNecessityParams,
  type ApplyProposalResult,
  type Baseline,
  type CheckChangeResult,
  type CompareBackendsResult,
  type CompareRow,
  type LocateBugParams,
  type LocateBugResult,
  type NecessityResult,
  type Proposal,
  type RequestEditParams,
  type RequestEditResult,
  type SelectProposalResult,
} from "./protocol";
import { Cancelled, errorText, raceCancellation, toLspRange } from "./cancel";
import { PROPOSAL_SCHEME, ProposalDocuments } from "./proposals";
import {
  bugAnswerItems,
  bugAnswersMarkdown,
  bugAnswerText,
  fmtDistance,
  fmtSigned,
  hunkItems,
  necessityMarkdown,
  proposalLabel,
  proposalRow,
  renderMarkdownTable,
  renderRows,
  summarizeNecessity,
  type BugAnswerItem,
  type RowItem,
} from "./render";
import type { FidelityStatus } from "./status";

export { Cancelled, errorText, raceCancellation, toLspRange } from "./cancel";

export interface ServerApi {
  /** Start the server if needed; false (after telling the user why) when there is none. */
  ready(): Promise<boolean>;
  /**
   * `workspace/executeCommand` with one JSON argument. The token goes to the language client's
   * sendRequest, which turns its cancellation into `$/cancelRequest`.
   */
  executeCommand<T>(command: string, arg: unknown, token?: vscode.CancellationToken, onProgress?: ProgressSink): Promise<T>;
}

/** Work-done progress the server reports for a request (message, percentage 0-100). */
export type ProgressSink = (message: string | undefined, percentage: number | undefined) => void;

interface Snapshot {
  uri: vscode.Uri;
  version: number;
  text: string;
  getText(): string;
}

function snapshot(doc: vscode.TextDocument): Snapshot {
  const text = doc.getText();
  return { uri: doc.uri, version: doc.version, text, getText: () => text };
}

const PENDING_CONTEXT = "editFidelity.hasPendingProposal";
const MSG = "Edit Fidelity";
const SHOW_ANSWERS = "Show the Answers";
const SHOW_DETAILS = "Show Details";

export class Flows {
  pendingId: string | undefined;
  lastInstruction = "";

  constructor(
    private readonly api: ServerApi,
    private readonly docs: ProposalDocuments,
    private readonly status: FidelityStatus,
  ) {}

  private editor(): vscode.TextEditor | undefined {
    const editor = vscode.window.activeTextEditor;
    if (!editor || editor.document.uri.scheme === PROPOSAL_SCHEME) {
      void vscode.window.showInformationMessage(`${MSG}: open the file to edit and select the code first.`);
      return undefined;
    }
    return editor;
  }

  private async askInstruction(title: string): Promise<string | undefined> {
    const instruction = await vscode.window.showInputBox({
      title,
      prompt: "What should change? (the selection, or the whole file when nothing is selected)",
      placeHolder: "e.g. fix the off-by-one error in the loop",
      value: this.lastInstruction,
      ignoreFocusOut: true,
      validateInput: (v) => (v.trim() ? undefined : "Write an instruction."),
    });
    if (!instruction || !instruction.trim()) return undefined;
    this.lastInstruction = instruction.trim();
    return this.lastInstruction;
  }

  /**
   * Run a server command under a cancellable notification that shows the server's own progress
   * reports. undefined when cancelled or failed; the result's warnings are shown.
   */
  private async withServer<T>(title: string, command: string, arg: unknown, cancellable = true): Promise<T | undefined> {
    try {
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title, cancellable },
        (progress, token) => {
          let last = 0;
          const sink: ProgressSink = (message, percentage) => {
            const increment = typeof percentage === "number" && percentage > last ? percentage - last : undefined;
            if (increment !== undefined) last = percentage as number;
            progress.report({ message, increment });
          };
          return raceCancellation(this.api.executeCommand<T>(command, arg, token, sink), token);
        },
      );
      const warnings = (result as { warnings?: unknown } | undefined)?.warnings;
      if (Array.isArray(warnings) && warnings.length) {
        void vscode.window.showWarningMessage(`${MSG}: ${warnings.map(String).join("; ")}`);
      }
      return result;
    } catch (e) {
      if (e instanceof Cancelled || (e instanceof Error && e.name === "Canceled")) {
        vscode.window.setStatusBarMessage(`${MSG}: request cancelled`, 4000);
        return undefined;
      }
      void vscode.window.showErrorMessage(`${MSG}: ${errorText(e)}`);
      return undefined;
    }
  }

  private setPending(id: string | undefined): void {
    this.pendingId = id;
    void vscode.commands.executeCommand("setContext", PENDING_CONTEXT, id !== undefined);
  }

  // ---- Edit selection with instruction --------------------------------------------------------

  async editSelection(): Promise<void> {
    const editor = this.editor();
    if (!editor || !(await this.api.ready())) return;
    const instruction = await this.askInstruction("Edit Fidelity: edit with instruction");
    if (!instruction) return;
    await this.requestAndPreview(editor.document, editor.selection, instruction, undefined);
  }

  private async requestAndPreview(
    doc: vscode.TextDocument,
    selection: vscode.Selection | vscode.Range | undefined,
    instruction: string,
    backends: string[] | undefined,
  ): Promise<Proposal | undefined> {
    const snap = snapshot(doc);
    const params: RequestEditParams = { uri: snap.uri.toString(), version: snap.version, instruction };
    if (selection && !selection.isEmpty) params.range = toLspRange(selection);
    if (backends) params.backends = backends;
    const who = backends && backends.length === 1 ? backends[0] : "the configured backends";
    const result = await this.withServer<RequestEditResult>(`${MSG}: asking ${who}…`, Commands.requestEdit, params);
    if (!result) return undefined;
    const proposals = Array.isArray(result.proposals) ? result.proposals : [];
    const ok = proposals.filter((p) => p.status === "ok");
    if (ok.length === 0) {
      const why = proposals.map((p) => `${p.backend}: ${p.error ?? "no answer"}`).join("; ");
      void vscode.window.showErrorMessage(`${MSG}: no usable proposal${why ? ` (${why})` : ""}.`);
      return undefined;
    }
    let chosen: Proposal | undefined = ok[0];
    if (proposals.length > 1) {
      const items = renderRows(proposals.map(proposalRow));
      const pick = await vscode.window.showQuickPick(items, {
        title: `${MSG}: ${ok.length} proposals (best first); choose one to preview`,
        matchOnDescription: true,
      });
      if (!pick) return undefined;
      if (!pick.previewable) {
        void vscode.window.showErrorMessage(`${MSG}: ${pick.row.backend} failed: ${pick.row.error ?? "no answer"}`);
        return undefined;
      }
      chosen = ok.find((p) => p.id === pick.row.id);
    }
    if (!chosen) return undefined;
    // Every answer stays pending on the server, which shows one at a time (the first): keep the
    // others to switch to, and make the server show the one previewed.
    for (const p of ok) if (p !== chosen) this.docs.add(p, snap, instruction);
    if (ok.length > 1 && chosen !== ok[0]) await this.selectOnServer(snap.uri.toString(), chosen.id);
    await this.preview(chosen, snap, doc, instruction);
    return chosen;
  }

  /** Diff editor: the buffer on the left, the proposed text (virtual document) on the right. */
  async preview(proposal: Proposal, snap: Snapshot, doc: vscode.TextDocument, instruction: string): Promise<void> {
    const uri = this.docs.add(proposal, snap, instruction);
    const who = proposalLabel(proposal);
    const summary = this.status.update(proposal.report, `proposal from ${who}`, proposal.flaggedHunks);
    this.setPending(proposal.id);
    const name = doc.uri.path.split("/").pop();
    await vscode.commands.executeCommand("vscode.diff", doc.uri, uri, `${name} ↔ ${who} proposal`, { preview: true });
    if (doc.version !== snap.version) {
      void vscode.window.showWarningMessage(
        `${MSG}: the document changed while the model was answering; this proposal is for the older text and will be refused.`,
      );
    }
    const facts = summary
      ? `distance ${fmtDistance(summary.distance)}, excess ${fmtSigned(summary.excess, 3)}, Δ complexity ${fmtSigned(summary.complexityDelta)}, ${summary.flagged} flagged hunk${summary.flagged === 1 ? "" : "s"}`
      : "no fidelity report";
    const actions = ["Accept", "Accept Hunks…", "Reject"];
    const choice = await vscode.window.showInformationMessage(`${MSG}: ${who} proposal: ${facts}.`, ...actions);
    if (choice === "Accept") await this.accept(proposal.id);
    else if (choice === "Accept Hunks…") await this.acceptHunks(proposal.id);
    else if (choice === "Reject") await this.reject(proposal.id);
  }

  // ---- Compare backends -----------------------------------------------------------------------

  async compareBackends(): Promise<void> {
    const editor = this.editor();
    if (!editor || !(await this.api.ready())) return;
    const instruction = await this.askInstruction("Edit Fidelity: compare backends for this edit");
    if (!instruction) return;
    const doc = editor.document;
    const selection = editor.selection;
    const params: Record<string, unknown> = { uri: doc.uri.toString(), version: doc.version, instruction };
    if (!selection.isEmpty) params.range = toLspRange(selection);
    const snap = snapshot(doc);
    const result = await this.withServer<CompareBackendsResult>(`${MSG}: asking every backend…`, Commands.compareBackends, params);
    if (!result) return;
    const rows: CompareRow[] = Array.isArray(result.rows) ? result.rows : [];
    if (rows.length === 0) {
      const choice = await vscode.window.showWarningMessage(`${MSG}: no backends are configured.`, "Open Settings");
      if (choice) await vscode.commands.executeCommand("workbench.action.openSettings", "editFidelity.backends");
      return;
    }
    type Item = vscode.QuickPickItem & { row?: RowItem; markdown?: boolean };
    const items: Item[] = renderRows(rows).map((r) => ({ label: r.label, description: r.description, detail: r.detail, row: r }));
    items.push({ label: "", kind: vscode.QuickPickItemKind.Separator });
    items.push({ label: "$(markdown) Open this table as Markdown", markdown: true });
    const pick = await vscode.window.showQuickPick<Item>(items, {
      title: `${MSG}: backends compared (best first) — choose one to preview`,
      matchOnDescription: true,
      matchOnDetail: true,
    });
    if (!pick) return;
    if (pick.markdown) {
      const content = `# Backends for: ${instruction}\n\n${renderMarkdownTable(rows)}\n`;
      const md = await vscode.workspace.openTextDocument({ language: "markdown", content });
      await vscode.window.showTextDocument(md, { preview: true });
      return;
    }
    const row = pick.row!;
    if (!row.previewable) {
      void vscode.window.showErrorMessage(`${MSG}: ${row.row.backend} failed: ${row.row.error ?? "no answer"}`);
      return;
    }
    const id = row.row.proposalId ?? row.row.id;
    if (id && Array.isArray(row.row.edits)) {
      // The server sent the proposal's edits with its row: preview it without asking the model again.
      const proposal: Proposal = { id, backend: row.row.backend, status: "ok", edits: row.row.edits, latencyMs: row.row.latencyMs ?? undefined };
      await this.preview(proposal, snap, doc, instruction);
      return;
    }
    await this.requestAndPreview(doc, selection, instruction, [row.row.backend]);
  }

  // ---- Check a change against a baseline --------------------------------------------------------

  async checkChange(baseline: Baseline): Promise<void> {
    const editor = this.editor();
    if (!editor || !(await this.api.ready())) return;
    const label = baseline === "git" ? "HEAD" : baseline === "snapshot" ? "the snapshot" : "the given text";
    const result = await this.withServer<CheckChangeResult>(
      `${MSG}: checking against ${label}…`,
      Commands.checkChange,
      { uri: editor.document.uri.toString(), baseline },
      true,
    );
    if (!result || !result.report) return;
    const s = this.status.update(result.report, `this change against ${label}`, result.flaggedHunks);
    const text = !s
      ? "no report"
      : s.identical
        ? `no change against ${label}.`
        : `against ${label}: distance ${fmtDistance(s.distance)}, Δ complexity ${fmtSigned(s.complexityDelta)}, ${s.flagged} of ${s.hunks} hunks flagged.`;
    const choice = await vscode.window.showInformationMessage(`${MSG}: ${text}`, "Show Report");
    if (choice) await this.showLastReport();
  }

  async showLastReport(): Promise<void> {
    if (!this.status.lastReport) {
      void vscode.window.showInformationMessage(`${MSG}: no edit has been measured yet.`);
      return;
    }
    const content = JSON.stringify({ origin: this.status.lastOrigin, report: this.status.lastReport }, null, 2);
    const doc = await vscode.workspace.openTextDocument({ language: "json", content });
    await vscode.window.showTextDocument(doc, { preview: true });
  }

  // ---- Find the syntax bug (ask the models) ----------------------------------------------------

  /**
   * editFidelity.locateBug on the file (or the selected lines): each backend names a line and a bug
   * type. The server publishes the answered lines as diagnostics; this shows the answers and goes to
   * the line the user picks.
   */
  async findSyntaxBug(): Promise<void> {
    const editor = this.editor();
    if (!editor || !(await this.api.ready())) return;
    const doc = editor.document;
    const params: LocateBugParams = { uri: doc.uri.toString(), version: doc.version };
    if (!editor.selection.isEmpty) params.range = toLspRange(editor.selection);
    const where = params.range ? "the selected lines" : "this file";
    const result = await this.withServer<LocateBugResult>(
      `${MSG}: asking where the syntax bug in ${where} is…`,
      Commands.locateBug,
      params,
    );
    if (!result) return;
    const items = bugAnswerItems(result);
    const name = doc.uri.path.split("/").pop();
    if (items.length === 0) {
      void vscode.window.showInformationMessage(`${MSG}: no backend answered.`);
      return;
    }
    if (items.length === 1) {
      const [item] = items;
      const goTo = item.line !== undefined ? `Go to Line ${item.line}` : undefined;
      const show = item.line !== undefined ? vscode.window.showInformationMessage : vscode.window.showWarningMessage;
      const choice = await show(`${MSG}: ${item.answer.backend}: ${bugAnswerText(item.answer)}.`, ...(goTo ? [goTo] : []), SHOW_ANSWERS);
      if (choice === goTo && item.line !== undefined) await this.revealLine(editor, item.line);
      else if (choice === SHOW_ANSWERS) await this.openMarkdown(bugAnswersMarkdown(result, name));
      return;
    }
    type Item = vscode.QuickPickItem & { answer?: BugAnswerItem; markdown?: boolean };
    const picks: Item[] = items.map((i) => ({ label: i.label, description: i.description, detail: i.detail, answer: i }));
    picks.push({ label: "", kind: vscode.QuickPickItemKind.Separator });
    picks.push({ label: "$(markdown) Show the answers as received", markdown: true });
    const located = items.filter((i) => i.line !== undefined).length;
    const pick = await vscode.window.showQuickPick<Item>(picks, {
      title: `${MSG}: ${located} of ${items.length} backends named a line; choose one to go to it`,
      matchOnDescription: true,
      matchOnDetail: true,
    });
    if (!pick) return;
    if (pick.answer?.line !== undefined) await this.revealLine(editor, pick.answer.line);
    else await this.openMarkdown(bugAnswersMarkdown(result, name));
  }

  /** Put the cursor at the start of a (1-based) line and scroll to it. */
  private async revealLine(editor: vscode.TextEditor, line: number): Promise<void> {
    const at = new vscode.Position(line - 1, 0);
    await vscode.window.showTextDocument(editor.document, { viewColumn: editor.viewColumn, selection: new vscode.Range(at, at), preview: false });
  }

  private async openMarkdown(content: string): Promise<void> {
    const md = await vscode.workspace.openTextDocument({ language: "markdown", content });
    await vscode.window.showTextDocument(md, { preview: true });
  }

  // ---- Which hunks do the tests need? --------------------------------------------------------------

  /**
   * editFidelity.analyzeNecessity on a pending proposal: the server runs the workspace's test command
   * in its sandbox on subsets of the hunks. Its progress fills the notification, and cancelling it
   * cancels the analysis (and kills the runs in flight). The server marks the hunks the tests pass
   * without and offers "Keep only the needed hunks" as a code action; this shows the verdict.
   */
  async findNeededHunks(arg?: unknown): Promise<NecessityResult | undefined> {
    const id = this.resolveId(arg);
    if (!id) {
      void vscode.window.showInformationMessage(`${MSG}: there is no pending proposal.`);
      return undefined;
    }
    if (!(await this.api.ready())) return undefined;
    const proposal = this.docs.get(id)?.proposal;
    const who = proposal ? `${proposal.backend} proposal` : "the proposal";
    const params: AnalyzeNecessityParams = { id };
    const result = await this.withServer<NecessityResult>(
      `${MSG}: which hunks of the ${who} do the tests need? Running them…`,
      Commands.analyzeNecessity,
      params,
    );
    if (!result) return undefined;
    const hunks = proposal?.report?.hunks;
    const s = summarizeNecessity(result, hunks);
    const show = s.conclusive ? vscode.window.showInformationMessage : vscode.window.showWarningMessage;
    const choice = await show(`${MSG}: ${who}: ${s.text}`, SHOW_DETAILS);
    if (choice === SHOW_DETAILS) await this.openMarkdown(necessityMarkdown(result, who, hunks));
    return result;
  }

  // ---- Accept / reject ----------------------------------------------------------------------------

  /** A proposal id from a command argument: a string, {id}, a proposal document uri, or the pending one. */
  resolveId(arg: unknown): string | undefined {
    if (typeof arg === "string" && arg) return arg;
    if (arg && typeof arg === "object") {
      if ("scheme" in arg && (arg as vscode.Uri).scheme === PROPOSAL_SCHEME) return this.docs.idOf(arg as vscode.Uri);
      const id = (arg as { id?: unknown }).id;
      if (typeof id === "string" && id) return id;
    }
    const active = vscode.window.activeTextEditor?.document.uri;
    if (active && active.scheme === PROPOSAL_SCHEME) return this.docs.idOf(active);
    return this.pendingId;
  }

  private async apply(id: string, hunks?: number[]): Promise<boolean> {
    if (!(await this.api.ready())) return false;
    const arg: { id: string; hunks?: number[] } = { id };
    if (hunks) arg.hunks = hunks;
    let result: ApplyProposalResult | undefined;
    try {
      result = await this.api.executeCommand<ApplyProposalResult>(Commands.applyProposal, arg);
    } catch (e) {
      void vscode.window.showErrorMessage(`${MSG}: could not apply the proposal: ${errorText(e)}`);
      return false;
    }
    if (result && result.applied) {
      this.done(id);
      vscode.window.setStatusBarMessage(`${MSG}: proposal applied`, 4000);
      return true;
    }
    const reason = result?.reason ?? "";
    if (/stale/i.test(reason)) {
      const stored = this.docs.get(id);
      const choice = await vscode.window.showWarningMessage(
        `${MSG}: the document changed since this proposal was computed, so nothing was applied.`,
        ...(stored ? ["Ask Again"] : []),
      );
      if (choice === "Ask Again" && stored) {
        this.done(id);
        const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === stored.documentUri);
        if (doc) await this.requestAndPreview(doc, undefined, stored.instruction, [stored.proposal.backend]);
      }
    } else {
      const why = result?.message || reason || "the server did not apply it";
      void vscode.window.showWarningMessage(`${MSG}: nothing was applied: ${why.replace(/\.$/, "")}.`);
    }
    return false;
  }

  async accept(arg?: unknown): Promise<boolean> {
    const id = this.resolveId(arg);
    if (!id) {
      void vscode.window.showInformationMessage(`${MSG}: there is no pending proposal.`);
      return false;
    }
    return this.apply(id);
  }

  async acceptHunks(arg?: unknown): Promise<boolean> {
    const id = this.resolveId(arg);
    if (!id) {
      void vscode.window.showInformationMessage(`${MSG}: there is no pending proposal.`);
      return false;
    }
    const proposal = this.docs.get(id)?.proposal;
    const hunks = proposal?.report?.hunks ?? [];
    if (hunks.length === 0) return this.apply(id);
    const picks = await vscode.window.showQuickPick(hunkItems(hunks, proposal?.flaggedHunks, proposal?.hunkMessages), {
      title: `${MSG}: hunks to accept (flagged ones are not preselected)`,
      canPickMany: true,
    });
    if (!picks || picks.length === 0) return false;
    return this.apply(
      id,
      picks.map((p) => p.index).sort((a, b) => a - b),
    );
  }

  async reject(arg?: unknown): Promise<void> {
    const id = this.resolveId(arg);
    if (!id) return;
    this.done(id);
    vscode.window.setStatusBarMessage(`${MSG}: proposal rejected`, 4000);
    // The server drops its diagnostics and code lenses for the proposal; best effort.
    try {
      await this.api.executeCommand(Commands.rejectProposal, { id });
    } catch {
      /* an older server without the command: nothing to clean up there */
    }
  }

  /** Revert the flagged hunks of the last observed or checked change (the server computes them). */
  async revertFlagged(): Promise<boolean> {
    const editor = this.editor();
    if (!editor || !(await this.api.ready())) return false;
    const doc = editor.document;
    let result: ApplyProposalResult | undefined;
    try {
      result = await this.api.executeCommand<ApplyProposalResult>(Commands.revertHunks, { uri: doc.uri.toString(), version: doc.version });
    } catch (e) {
      void vscode.window.showErrorMessage(`${MSG}: ${errorText(e)}`);
      return false;
    }
    if (result?.applied) {
      const n = result.hunks?.length ?? 0;
      vscode.window.setStatusBarMessage(`${MSG}: reverted ${n} flagged hunk${n === 1 ? "" : "s"}`, 4000);
      return true;
    }
    const why = result?.reason === "nothing" ? "there is no measured change with flagged hunks in this file" : result?.message || result?.reason || "not applied";
    void vscode.window.showInformationMessage(`${MSG}: ${why.replace(/\.$/, "")}.`);
    return false;
  }

  /** Make the current buffer the baseline of "check against the snapshot". */
  async takeSnapshot(): Promise<void> {
    const editor = this.editor();
    if (!editor || !(await this.api.ready())) return;
    try {
      await this.api.executeCommand(Commands.takeSnapshot, { uri: editor.document.uri.toString() });
      vscode.window.setStatusBarMessage(`${MSG}: snapshot taken`, 4000);
    } catch (e) {
      void vscode.window.showErrorMessage(`${MSG}: ${errorText(e)}`);
    }
  }

  private done(id: string): void {
    this.docs.forget(id);
    if (this.pendingId === id) this.setPending(undefined);
    void this.closePreview(id);
  }

  private async closePreview(id: string): Promise<void> {
    const groups = vscode.window.tabGroups;
    if (!groups) return;
    const tabs = groups.all
      .flatMap((g) => g.tabs)
      .filter((tab) => {
        const input = tab.input as { modified?: vscode.Uri; uri?: vscode.Uri } | undefined;
        const uri = input?.modified ?? input?.uri;
        return uri !== undefined && uri.scheme === PROPOSAL_SCHEME && this.docs.idOf(uri) === id;
      });
    if (tabs.length) await groups.close(tabs);
  }

  /** Tell the server which pending proposal to show (its diagnostics, lenses); best effort. */
  private async selectOnServer(uri: string, id: string): Promise<boolean> {
    try {
      await this.api.executeCommand<SelectProposalResult>(Commands.selectProposal, { uri, id });
      return true;
    } catch (e) {
      void vscode.window.showWarningMessage(`${MSG}: could not show that proposal: ${errorText(e)}`);
      return false;
    }
  }

  /** The pending proposal the server shows changed (a "Show proposal …" lens, or our quick pick). */
  private followActive(id: string): void {
    const stored = this.docs.get(id);
    if (!stored) return;
    this.setPending(id);
    this.status.update(stored.proposal.report, `proposal from ${proposalLabel(stored.proposal)}`, stored.proposal.flaggedHunks);
  }

  /** Quick pick of the active file's pending proposals; the chosen one is shown (diagnostics, diff). */
  async switchProposal(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const uri = editor?.document.uri.scheme === PROPOSAL_SCHEME ? this.docs.get(this.docs.idOf(editor.document.uri) ?? "")?.documentUri : editor?.document.uri.toString();
    const stored = uri ? this.docs.forDocument(uri) : [];
    if (stored.length < 2) {
      void vscode.window.showInformationMessage(`${MSG}: there is no other pending proposal for this file.`);
      return;
    }
    const items = renderRows(stored.map((s) => proposalRow(s.proposal))).map((r) => ({ ...r, label: r.row.id === this.pendingId ? `${r.label} (shown)` : r.label }));
    const pick = await vscode.window.showQuickPick(items, { title: `${MSG}: ${stored.length} pending proposals; choose the one to show` });
    const id = pick?.row.id;
    if (!id || !uri || !(await this.api.ready()) || !(await this.selectOnServer(uri, id))) return;
    this.followActive(id);
    const name = vscode.Uri.parse(uri).path.split("/").pop();
    await vscode.commands.executeCommand("vscode.diff", vscode.Uri.parse(uri), this.docs.uriFor(id, vscode.Uri.parse(uri)), `${name} ↔ ${proposalLabel(this.docs.get(id)!.proposal)} proposal`, { preview: true });
  }

  /** A code lens or code action ran a server command: keep the pending state in step. */
  serverCommandDone(command: string, args: unknown[], result: unknown): void {
    const id = (args?.[0] as { id?: unknown } | undefined)?.id;
    if (typeof id !== "string") return;
    if (command === Commands.selectProposal) {
      const active = (result as SelectProposalResult | undefined)?.active;
      if (typeof active === "string") this.followActive(active);
      return;
    }
    const r = result as { applied?: boolean; rejected?: boolean } | undefined;
    if ((command === Commands.applyProposal && r?.applied) || (command === Commands.rejectProposal && r?.rejected)) {
      this.done(id);
    }
  }

  /** Server restarted: its proposals are gone. */
  reset(): void {
    if (this.pendingId) this.done(this.pendingId);
  }
}
