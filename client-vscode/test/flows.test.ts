import { beforeEach, describe, expect, it } from "vitest";
import { Flows, raceCancellation, type ProgressSink, type ServerApi } from "../src/flows";
import { PROPOSAL_SCHEME, ProposalDocuments } from "../src/proposals";
import type { Proposal } from "../src/protocol";
import { FidelityStatus } from "../src/status";
import { bugAnswer, necessity, report } from "./fixtures";
import * as vscode from "./vscode.fake";

interface Sent {
  command: string;
  arg: any;
  token: any;
}

/** A scripted language server: one handler per command; records every request with its token. */
class ScriptedServer implements ServerApi {
  sent: Sent[] = [];
  running = true;
  handlers: Record<string, (arg: any, token: any, onProgress?: ProgressSink) => unknown> = {};
  async ready(): Promise<boolean> {
    return this.running;
  }
  async executeCommand<T>(command: string, arg: unknown, token?: any, onProgress?: ProgressSink): Promise<T> {
    this.sent.push({ command, arg, token });
    const h = this.handlers[command];
    if (!h) throw new Error(`unexpected command ${command}`);
    return (await h(arg, token, onProgress)) as T;
  }
}

const SRC = "def clip(x):\n    if x < 0:\n        return 0\n    return x\n";
const FIX = { range: { start: { line: 1, character: 9 }, end: { line: 1, character: 10 } }, newText: "<=" };
const RENAME = { range: { start: { line: 0, character: 9 }, end: { line: 0, character: 10 } }, newText: "value" };

function proposal(id: string, backend: string, edits = [FIX], over: Partial<Proposal> = {}): Proposal {
  return { id, backend, status: "ok", edits, report: report(), latencyMs: 100, ...over };
}

let server: ScriptedServer;
let docs: ProposalDocuments;
let status: FidelityStatus;
let flows: Flows;
let doc: vscode.FakeDocument;

function select(l1: number, c1: number, l2: number, c2: number) {
  vscode.window.activeTextEditor = vscode.makeEditor(doc, new vscode.Selection(l1, c1, l2, c2));
}

function diffCalls() {
  return vscode.ui.calls.filter((c) => c.fn === "executeCommand" && c.args[0] === "vscode.diff");
}

beforeEach(() => {
  vscode.resetFake();
  server = new ScriptedServer();
  docs = new ProposalDocuments();
  status = new FidelityStatus("editFidelity.showLastReport");
  flows = new Flows(server, docs, status);
  doc = vscode.makeDocument("/w/clip.py", SRC, 7);
  vscode.textDocuments.push(doc);
  select(1, 4, 2, 16);
  vscode.ui.onInputBox = () => "  fix the boundary  ";
});

describe("edit selection with instruction", () => {
  it("sends the selection, version and instruction, previews the proposal as a diff and applies it on Accept", async () => {
    server.handlers["editFidelity.requestEdit"] = () => ({ proposals: [proposal("p1", "qwen")] });
    server.handlers["editFidelity.applyProposal"] = () => ({ applied: true });
    let previewed = "";
    vscode.ui.onMessage = (level, _msg, actions) => {
      // What the diff editor shows while the user decides.
      previewed = docs.provideTextDocumentContent(diffCalls()[0].args[2] as any);
      return level === "info" && actions.includes("Accept") ? "Accept" : undefined;
    };

    await flows.editSelection();

    expect(server.sent[0].command).toBe("editFidelity.requestEdit");
    expect(server.sent[0].arg).toEqual({
      uri: "file:///w/clip.py",
      version: 7,
      instruction: "fix the boundary",
      range: { start: { line: 1, character: 4 }, end: { line: 2, character: 16 } },
    });
    // The progress notification is cancellable and its token reaches the request.
    expect(vscode.ui.progress[0].opts).toMatchObject({ location: vscode.ProgressLocation.Notification, cancellable: true });
    expect(server.sent[0].token).toBe(vscode.ui.progress[0].source.token);

    const [diff] = diffCalls();
    expect(diff.args[1]).toBe(doc.uri);
    const right = diff.args[2] as vscode.Uri;
    expect(right.scheme).toBe(PROPOSAL_SCHEME);
    expect(diff.args[3]).toBe("clip.py ↔ qwen proposal");
    // The preview shows the proposed text; nothing touched the buffer.
    expect(previewed).toBe(SRC.replace("x < 0", "x <= 0"));
    expect(doc.getText()).toBe(SRC);
    // Once applied, the virtual document is released.
    expect(docs.provideTextDocumentContent(right as any)).toMatch(/no longer available/);

    expect(vscode.ui.messages[0].message).toBe(
      "Edit Fidelity: qwen proposal: distance 0.125, excess –, Δ complexity +2, 1 flagged hunk.",
    );
    expect(server.sent[1]).toMatchObject({ command: "editFidelity.applyProposal", arg: { id: "p1" } });
    expect(status.text).toBe("$(warning) Fidelity d 0.125 · CC +2 · 1 flagged");
    expect(flows.pendingId).toBeUndefined();
    expect(vscode.ui.contexts["editFidelity.hasPendingProposal"]).toBe(false);
    expect(docs.get("p1")).toBeUndefined();
  });

  it("asks about the whole file when nothing is selected, and keeps the proposal pending when the message is dismissed", async () => {
    select(3, 2, 3, 2);
    server.handlers["editFidelity.requestEdit"] = () => ({ proposals: [proposal("p1", "qwen")] });
    await flows.editSelection();
    expect(server.sent[0].arg.range).toBeUndefined();
    expect(server.sent).toHaveLength(1);
    expect(flows.pendingId).toBe("p1");
    expect(vscode.ui.contexts["editFidelity.hasPendingProposal"]).toBe(true);
  });

  it("does nothing when the instruction box is dismissed", async () => {
    vscode.ui.onInputBox = () => undefined;
    await flows.editSelection();
    expect(server.sent).toEqual([]);
  });

  it("does not ask for an instruction when there is no server", async () => {
    server.running = false;
    await flows.editSelection();
    expect(vscode.ui.calls.some((c) => c.fn === "showInputBox")).toBe(false);
  });

  it("cancelling the notification cancels the request's token and ends quietly even if the server never answers", async () => {
    let seenToken: any;
    server.handlers["editFidelity.requestEdit"] = (_arg, token) => {
      seenToken = token;
      return new Promise(() => undefined); // a backend that hangs
    };
    vscode.ui.onProgress = (_opts, source) => setTimeout(() => source.cancel(), 5);

    await flows.editSelection();

    expect(seenToken.isCancellationRequested).toBe(true);
    expect(diffCalls()).toEqual([]);
    expect(vscode.ui.messages.filter((m) => m.level === "error")).toEqual([]);
    expect(vscode.ui.statusMessages).toContain("Edit Fidelity: request cancelled");
  });

  it("shows the server's progress reports in the notification and its warnings afterwards", async () => {
    server.handlers["editFidelity.requestEdit"] = (_a, _t, onProgress) => {
      onProgress!("qwen: waiting", 10);
      onProgress!("qwen: answered", 60);
      onProgress!("measuring", undefined);
      return { proposals: [proposal("p1", "qwen")], warnings: ["backend 'x' ignored: unknown"] };
    };
    await flows.editSelection();
    expect(vscode.ui.progress[0].reports).toEqual([
      { message: "qwen: waiting", increment: 10 },
      { message: "qwen: answered", increment: 50 },
      { message: "measuring", increment: undefined },
    ]);
    expect(vscode.ui.messages[0]).toMatchObject({ level: "warning", message: "Edit Fidelity: backend 'x' ignored: unknown" });
  });

  it("uses the server's flagged hunks over the report's marks", async () => {
    server.handlers["editFidelity.requestEdit"] = () => ({ proposals: [proposal("p1", "qwen", [FIX], { flaggedHunks: [0, 1] })] });
    await flows.editSelection();
    expect(status.text).toBe("$(warning) Fidelity d 0.125 · CC +2 · 2 flagged");
  });

  it("shows one error with the server's message when the request fails", async () => {
    server.handlers["editFidelity.requestEdit"] = () => {
      throw new Error("unknown backend 'gpt5'");
    };
    await flows.editSelection();
    expect(vscode.ui.messages).toEqual([{ level: "error", message: "Edit Fidelity: unknown backend 'gpt5'", actions: [] }]);
  });

  it("reports every backend's error when no proposal is usable", async () => {
    server.handlers["editFidelity.requestEdit"] = () => ({
      proposals: [
        proposal("a", "qwen", [], { status: "error", error: "HTTP 500" }),
        proposal("b", "gpt", [], { status: "error", error: "answer has no code" }),
      ],
    });
    await flows.editSelection();
    expect(vscode.ui.messages[0].message).toBe("Edit Fidelity: no usable proposal (qwen: HTTP 500; gpt: answer has no code).");
    expect(diffCalls()).toEqual([]);
  });

  it("lets the user choose among several proposals, best first", async () => {
    const over = proposal("p-gpt", "gpt", [FIX, RENAME]);
    const minimal = proposal("p-qwen", "qwen", [FIX], { report: report({ hunks: [] }) });
    server.handlers["editFidelity.requestEdit"] = () => ({ proposals: [over, minimal, proposal("p-x", "down", [], { status: "error", error: "timeout" })] });
    let offered: string[] = [];
    vscode.ui.onQuickPick = (items) => {
      offered = items.map((i) => i.label);
      return items.find((i) => i.row.backend === "gpt");
    };
    await flows.editSelection();
    expect(offered).toEqual(["$(pass) qwen", "$(warning) gpt", "$(error) down"]);
    const right = diffCalls()[0].args[2] as vscode.Uri;
    expect(docs.idOf(right as any)).toBe("p-gpt");
    expect(docs.provideTextDocumentContent(right as any)).toContain("def clip(value):");
  });
});

describe("several samples: the server shows one proposal at a time", () => {
  const samples = () => [
    proposal("s1", "qwen", [FIX, RENAME], { sample: 0, label: "qwen, sample 1 of 2" }),
    proposal("s2", "qwen", [FIX], { sample: 1, label: "qwen, sample 2 of 2" }),
  ];

  it("labels each sample, and makes the server show the one chosen for the preview", async () => {
    server.handlers["editFidelity.requestEdit"] = () => ({ proposals: samples() });
    server.handlers["editFidelity.selectProposal"] = (arg) => ({ active: arg.id });
    let offered: string[] = [];
    vscode.ui.onQuickPick = (items) => {
      offered = items.map((i) => i.label);
      return items.find((i) => i.row.id === "s2");
    };
    await flows.editSelection();
    expect(offered.sort()).toEqual(["$(warning) qwen, sample 1 of 2", "$(warning) qwen, sample 2 of 2"]);
    expect(server.sent[1]).toMatchObject({ command: "editFidelity.selectProposal", arg: { uri: "file:///w/clip.py", id: "s2" } });
    expect(diffCalls()[0].args[3]).toBe("clip.py ↔ qwen, sample 2 of 2 proposal");
    expect(flows.pendingId).toBe("s2");
    // the other sample is kept, to switch to
    expect(docs.get("s1")?.proposal.label).toBe("qwen, sample 1 of 2");
  });

  it("follows a code lens that shows another sample, and switches with its own quick pick", async () => {
    server.handlers["editFidelity.requestEdit"] = () => ({ proposals: samples() });
    server.handlers["editFidelity.selectProposal"] = (arg) => ({ active: arg.id });
    vscode.ui.onQuickPick = (items) => items.find((i) => i.row.id === "s1");
    await flows.editSelection();
    expect(flows.pendingId).toBe("s1");
    expect(server.sent.filter((c) => c.command === "editFidelity.selectProposal")).toEqual([]); // the server's default
    // the server's "Show proposal 2 of 2" lens ran selectProposal through the language client
    flows.serverCommandDone("editFidelity.selectProposal", [{ uri: "file:///w/clip.py", id: "s2" }], { active: "s2" });
    expect(flows.pendingId).toBe("s2");
    expect(status.text).toContain("Fidelity");
    // the palette command: a quick pick of the file's pending proposals
    let offered: string[] = [];
    vscode.ui.onQuickPick = (items) => {
      offered = items.map((i) => i.label);
      return items.find((i) => i.row.id === "s1");
    };
    await flows.switchProposal();
    expect(offered).toContain("$(warning) qwen, sample 2 of 2 (shown)");
    expect(server.sent.at(-1)).toMatchObject({ command: "editFidelity.selectProposal", arg: { uri: "file:///w/clip.py", id: "s1" } });
    expect(flows.pendingId).toBe("s1");
    expect(docs.idOf(diffCalls().at(-1)!.args[2] as any)).toBe("s1");
  });

  it("says so when the file has no other proposal", async () => {
    server.handlers["editFidelity.requestEdit"] = () => ({ proposals: [proposal("p1", "qwen")] });
    await flows.editSelection();
    vscode.ui.messages.length = 0;
    await flows.switchProposal();
    expect(vscode.ui.messages[0].message).toBe("Edit Fidelity: there is no other pending proposal for this file.");
  });
});

describe("accept, accept some hunks, reject", () => {
  beforeEach(async () => {
    server.handlers["editFidelity.requestEdit"] = () => ({ proposals: [proposal("p1", "qwen", [FIX, RENAME])] });
    await flows.editSelection();
    vscode.ui.messages.length = 0;
  });

  it("sends only the chosen hunks", async () => {
    server.handlers["editFidelity.applyProposal"] = () => ({ applied: true });
    let offered: any[] = [];
    vscode.ui.onQuickPick = (items, opts) => {
      offered = items;
      expect(opts.canPickMany).toBe(true);
      return [items[0]];
    };
    expect(await flows.acceptHunks()).toBe(true);
    expect(offered.map((i) => i.picked)).toEqual([true, false]);
    expect(server.sent.at(-1)).toMatchObject({ command: "editFidelity.applyProposal", arg: { id: "p1", hunks: [0] } });
  });

  it("explains a stale proposal and asks the same backend again on request", async () => {
    server.handlers["editFidelity.applyProposal"] = () => ({ applied: false, reason: "stale: document version 9, proposal for 7" });
    server.handlers["editFidelity.requestEdit"] = () => ({ proposals: [proposal("p2", "qwen")] });
    vscode.ui.onMessage = (level, _msg, actions) => (level === "warning" && actions.includes("Ask Again") ? "Ask Again" : undefined);
    doc.setText(SRC + "\n");
    expect(await flows.accept()).toBe(false);
    expect(vscode.ui.messages[0]).toMatchObject({
      level: "warning",
      message: "Edit Fidelity: the document changed since this proposal was computed, so nothing was applied.",
    });
    const again = server.sent.at(-1)!;
    expect(again.command).toBe("editFidelity.requestEdit");
    expect(again.arg).toMatchObject({ version: 8, instruction: "fix the boundary", backends: ["qwen"] });
    expect(again.arg.range).toBeUndefined();
    expect(flows.pendingId).toBe("p2");
    expect(docs.get("p1")).toBeUndefined();
  });

  it("accepts a proposal named by its preview document or by a code lens argument", async () => {
    server.handlers["editFidelity.applyProposal"] = () => ({ applied: true });
    const uri = docs.uriFor("p1", doc.uri as any);
    expect(flows.resolveId(uri)).toBe("p1");
    expect(flows.resolveId({ id: "p9" })).toBe("p9");
    expect(await flows.accept({ id: "p1" })).toBe(true);
    expect(server.sent.at(-1)!.arg).toEqual({ id: "p1" });
  });

  it("rejects: closes the preview tab and tells the server (whose failure does not matter)", async () => {
    vscode.tabs.push({ input: { original: doc.uri, modified: docs.uriFor("p1", doc.uri as any) } }, { input: { uri: doc.uri } });
    await flows.reject();
    expect(server.sent.at(-1)).toMatchObject({ command: "editFidelity.rejectProposal", arg: { id: "p1" } });
    expect(vscode.ui.messages).toEqual([]);
    expect(flows.pendingId).toBeUndefined();
    expect(vscode.tabs).toHaveLength(1);
    expect(docs.get("p1")).toBeUndefined();
  });

  it("keeps in step when a code lens applies or rejects through the server", async () => {
    flows.serverCommandDone("editFidelity.applyProposal", [{ id: "p1", hunks: [0] }], { applied: false, reason: "stale" });
    expect(flows.pendingId).toBe("p1");
    flows.serverCommandDone("editFidelity.rejectProposal", [{ id: "p1" }], { rejected: true });
    expect(flows.pendingId).toBeUndefined();
    expect(docs.get("p1")).toBeUndefined();
  });

  it("shows the server's message when it refuses for another reason", async () => {
    server.handlers["editFidelity.applyProposal"] = () => ({ applied: false, reason: "closed", message: "proposal p1 was already applied or rejected" });
    expect(await flows.accept()).toBe(false);
    expect(vscode.ui.messages.at(-1)!.message).toBe("Edit Fidelity: nothing was applied: proposal p1 was already applied or rejected.");
  });

  it("says so when there is nothing to accept", async () => {
    server.handlers["editFidelity.rejectProposal"] = () => ({ rejected: true });
    await flows.reject();
    vscode.window.activeTextEditor = vscode.makeEditor(doc);
    expect(await flows.accept()).toBe(false);
    expect(vscode.ui.messages.at(-1)!.message).toBe("Edit Fidelity: there is no pending proposal.");
  });
});

describe("compare backends", () => {
  const rows = [
    { backend: "gpt", status: "ok", latencyMs: 900, tokens: 50, distance: 0.08, excess: 0.05, complexityDelta: 2, flaggedHunks: 2 },
    { backend: "qwen", status: "ok", latencyMs: 300, tokens: 40, distance: 0.01, excess: 0, complexityDelta: 0, flaggedHunks: 0 },
  ];

  it("shows the table and previews the chosen backend by asking it alone", async () => {
    server.handlers["editFidelity.compareBackends"] = () => ({ rows });
    server.handlers["editFidelity.requestEdit"] = () => ({ proposals: [proposal("g1", "gpt", [FIX, RENAME])] });
    let items: any[] = [];
    vscode.ui.onQuickPick = (its) => {
      items = its;
      return its.find((i) => i.row?.row.backend === "gpt");
    };
    await flows.compareBackends();
    expect(server.sent[0]).toMatchObject({
      command: "editFidelity.compareBackends",
      arg: { uri: "file:///w/clip.py", version: 7, instruction: "fix the boundary", range: { start: { line: 1, character: 4 } } },
    });
    expect(items.map((i) => i.label)).toEqual(["$(pass) qwen", "$(warning) gpt", "", "$(markdown) Open this table as Markdown"]);
    expect(items[1].description).toBe("900 ms · distance 0.080 · excess +0.050 · Δ complexity +2 · 2 flagged");
    expect(server.sent[1]).toMatchObject({ command: "editFidelity.requestEdit", arg: { backends: ["gpt"] } });
    expect(docs.idOf(diffCalls()[0].args[2] as any)).toBe("g1");
  });

  it("previews without a second model call when the row carries the proposal", async () => {
    server.handlers["editFidelity.compareBackends"] = () => ({ rows: [{ ...rows[1], proposalId: "q1", edits: [FIX] }] });
    server.handlers["editFidelity.applyProposal"] = () => ({ applied: true });
    vscode.ui.onQuickPick = (its) => its[0];
    let previewed = "";
    vscode.ui.onMessage = (_l, _m, actions) => {
      previewed = docs.provideTextDocumentContent(diffCalls()[0].args[2] as any);
      return actions.includes("Accept") ? "Accept" : undefined;
    };
    await flows.compareBackends();
    expect(server.sent.map((x) => x.command)).toEqual(["editFidelity.compareBackends", "editFidelity.applyProposal"]);
    expect(server.sent[1].arg).toEqual({ id: "q1" });
    expect(previewed).toBe(SRC.replace("x < 0", "x <= 0"));
  });

  it("opens the table as Markdown", async () => {
    server.handlers["editFidelity.compareBackends"] = () => ({ rows });
    vscode.ui.onQuickPick = (its) => its.at(-1);
    await flows.compareBackends();
    expect(vscode.ui.shownDocuments[0].language).toBe("markdown");
    expect(vscode.ui.shownDocuments[0].content).toContain("| qwen | 300 ms | 0.010 | 0.000 | 0 | 0 |");
  });

  it("points to the settings when no backend is configured", async () => {
    server.handlers["editFidelity.compareBackends"] = () => ({ rows: [] });
    vscode.ui.onMessage = () => "Open Settings";
    await flows.compareBackends();
    expect(vscode.ui.calls.some((c) => c.fn === "executeCommand" && c.args[0] === "workbench.action.openSettings" && c.args[1] === "editFidelity.backends")).toBe(true);
  });
});

describe("check a change", () => {
  it("checks against HEAD and puts the result in the status bar", async () => {
    server.handlers["editFidelity.checkChange"] = () => ({ report: report() });
    await flows.checkChange("git");
    expect(server.sent[0]).toMatchObject({ command: "editFidelity.checkChange", arg: { uri: "file:///w/clip.py", baseline: "git" } });
    expect(status.text).toBe("$(warning) Fidelity d 0.125 · CC +2 · 1 flagged");
    expect(vscode.ui.messages[0].message).toBe("Edit Fidelity: against HEAD: distance 0.125, Δ complexity +2, 1 of 2 hunks flagged.");
  });

  it("shows the last report as JSON", async () => {
    server.handlers["editFidelity.checkChange"] = () => ({ report: report({ identical: true }) });
    vscode.ui.onMessage = () => "Show Report";
    await flows.checkChange("snapshot");
    expect(server.sent[0].arg.baseline).toBe("snapshot");
    const shown = JSON.parse(vscode.ui.shownDocuments[0].content!);
    expect(shown.origin).toBe("this change against the snapshot");
    expect(shown.report.identical).toBe(true);
  });
});

describe("revert flagged hunks of a measured change", () => {
  it("asks the server for the current version and reports what it did", async () => {
    server.handlers["editFidelity.revertHunks"] = () => ({ applied: true, hunks: [0, 2] });
    expect(await flows.revertFlagged()).toBe(true);
    expect(server.sent[0]).toMatchObject({ command: "editFidelity.revertHunks", arg: { uri: "file:///w/clip.py", version: 7 } });
    expect(vscode.ui.statusMessages).toContain("Edit Fidelity: reverted 2 flagged hunks");
  });

  it("explains when there is nothing to revert", async () => {
    server.handlers["editFidelity.revertHunks"] = () => ({ applied: false, reason: "nothing", message: "no observed change" });
    expect(await flows.revertFlagged()).toBe(false);
    expect(vscode.ui.messages[0].message).toBe("Edit Fidelity: there is no measured change with flagged hunks in this file.");
  });
});

describe("find the syntax bug", () => {
  function reveals() {
    return vscode.ui.calls.filter((c) => c.fn === "showTextDocument" && c.args[0] === doc);
  }

  it("sends the selection under a cancellable progress and goes to the answered line on request", async () => {
    server.handlers["editFidelity.locateBug"] = (_a, _t, onProgress) => {
      onProgress!("asking 1 backend", 0);
      onProgress!("qwen: line 2, missing_colon (1/1)", 100);
      return { answers: [bugAnswer()], uri: "file:///w/clip.py", version: 7, firstLine: 2, lastLine: 3, warnings: [] };
    };
    vscode.ui.onMessage = (_l, _m, actions) => actions[0];

    await flows.findSyntaxBug();

    expect(server.sent).toHaveLength(1);
    expect(server.sent[0].command).toBe("editFidelity.locateBug");
    expect(server.sent[0].arg).toEqual({
      uri: "file:///w/clip.py",
      version: 7,
      range: { start: { line: 1, character: 4 }, end: { line: 2, character: 16 } },
    });
    expect(vscode.ui.progress[0].opts).toMatchObject({ location: vscode.ProgressLocation.Notification, cancellable: true });
    expect(vscode.ui.progress[0].opts.title).toBe("Edit Fidelity: asking where the syntax bug in the selected lines is…");
    expect(server.sent[0].token).toBe(vscode.ui.progress[0].source.token);
    expect(vscode.ui.progress[0].reports.map((r) => r.message)).toEqual(["asking 1 backend", "qwen: line 2, missing_colon (1/1)"]);
    expect(vscode.ui.messages).toEqual([
      { level: "info", message: "Edit Fidelity: qwen: line 2, missing_colon.", actions: ["Go to Line 2", "Show the Answers"] },
    ]);
    const [reveal] = reveals();
    const opts = reveal.args[1] as { selection: vscode.Range; preview: boolean };
    expect(opts.selection.start).toEqual(new vscode.Position(1, 0));
    expect(opts.selection.isEmpty).toBe(true);
    expect(opts.preview).toBe(false);
    // The server publishes the diagnostic; the client changes nothing in the buffer.
    expect(doc.getText()).toBe(SRC);
  });

  it("asks about the whole file when nothing is selected, and offers only the answers for an unparseable one", async () => {
    select(0, 0, 0, 0);
    server.handlers["editFidelity.locateBug"] = () => ({
      answers: [bugAnswer({ status: "unparseable", line: null, bugType: null, inRange: false, raw: "No bug.", problem: "no line number" })],
      firstLine: 1,
      lastLine: 4,
    });
    vscode.ui.onMessage = (_l, _m, actions) => actions[0];
    await flows.findSyntaxBug();
    expect(server.sent[0].arg).toEqual({ uri: "file:///w/clip.py", version: 7 });
    expect(vscode.ui.messages[0]).toEqual({
      level: "warning",
      message: "Edit Fidelity: qwen: unparseable answer: no line number.",
      actions: ["Show the Answers"],
    });
    expect(reveals()).toEqual([]);
    expect(vscode.ui.shownDocuments[0].language).toBe("markdown");
    expect(vscode.ui.shownDocuments[0].content).toContain("## qwen: unparseable answer: no line number\n\nstatus unparseable");
    expect(vscode.ui.shownDocuments[0].content).toContain("```text\nNo bug.\n```");
  });

  it("lists several backends' answers, goes to the chosen line, and shows the server's warnings", async () => {
    server.handlers["editFidelity.locateBug"] = () => ({
      answers: [
        bugAnswer(),
        bugAnswer({ backend: "gpt", line: 40, inRange: false }),
        bugAnswer({ backend: "down", status: "error", line: null, bugType: null, raw: null, error: "timeout", errorKind: "timeout" }),
        bugAnswer({ backend: "llama", line: 3, bugType: "missing_parenthesis" }),
      ],
      firstLine: 2,
      lastLine: 3,
      warnings: ["gpt answered line 40, outside the lines it was shown (2-3)"],
    });
    let offered: any[] = [];
    let title = "";
    vscode.ui.onQuickPick = (items, opts) => {
      offered = items;
      title = opts.title;
      return items.find((i) => i.answer?.answer.backend === "llama");
    };
    await flows.findSyntaxBug();
    expect(vscode.ui.messages[0]).toMatchObject({ level: "warning", message: "Edit Fidelity: gpt answered line 40, outside the lines it was shown (2-3)" });
    expect(title).toBe("Edit Fidelity: 2 of 4 backends named a line; choose one to go to it");
    expect(offered.map((i) => i.label)).toEqual([
      "$(bug) qwen: line 2",
      "$(warning) gpt: line 40",
      "$(error) down: failed",
      "$(bug) llama: line 3",
      "",
      "$(markdown) Show the answers as received",
    ]);
    expect((reveals()[0].args[1] as any).selection.start).toEqual(new vscode.Position(2, 0));
  });

  it("shows the answers as received when a backend without a usable line is picked", async () => {
    server.handlers["editFidelity.locateBug"] = () => ({
      answers: [bugAnswer(), bugAnswer({ backend: "gpt", line: 40, inRange: false, raw: "40, missing_comma" })],
    });
    vscode.ui.onQuickPick = (items) => items[1];
    await flows.findSyntaxBug();
    expect(reveals()).toEqual([]);
    expect(vscode.ui.shownDocuments[0].content).toContain("## gpt: line 40, missing_colon, outside the lines it was shown");
  });

  it("cancelling the notification cancels the request quietly", async () => {
    let seenToken: any;
    server.handlers["editFidelity.locateBug"] = (_a, token) => {
      seenToken = token;
      return new Promise(() => undefined);
    };
    vscode.ui.onProgress = (_opts, source) => setTimeout(() => source.cancel(), 5);
    await flows.findSyntaxBug();
    expect(seenToken.isCancellationRequested).toBe(true);
    expect(vscode.ui.messages).toEqual([]);
    expect(vscode.ui.statusMessages).toContain("Edit Fidelity: request cancelled");
  });

  it("shows the server's refusal as one error", async () => {
    server.handlers["editFidelity.locateBug"] = () => {
      throw new Error("editFidelity.locateBug: no backends configured (settings: editFidelity.backends)");
    };
    await flows.findSyntaxBug();
    expect(vscode.ui.messages).toEqual([
      { level: "error", message: "Edit Fidelity: editFidelity.locateBug: no backends configured (settings: editFidelity.backends)", actions: [] },
    ]);
  });

  it("needs a file editor and a server", async () => {
    vscode.window.activeTextEditor = undefined;
    await flows.findSyntaxBug();
    server.running = false;
    select(0, 0, 0, 0);
    await flows.findSyntaxBug();
    expect(server.sent).toEqual([]);
  });
});

describe("which hunks do the tests need", () => {
  beforeEach(async () => {
    server.handlers["editFidelity.requestEdit"] = () => ({
      proposals: [proposal("p1", "qwen", [FIX, RENAME], { report: report({ hunks: [...report().hunks, report().hunks[0]] }) })],
    });
    await flows.editSelection();
    vscode.ui.messages.length = 0;
    vscode.ui.progress.length = 0;
  });

  it("analyses the pending proposal under a cancellable progress and shows the verdict", async () => {
    server.handlers["editFidelity.analyzeNecessity"] = (_a, _t, onProgress) => {
      onProgress!("3 hunks, at most 32 runs of `python -m pytest`", 0);
      onProgress!("run 1/32: 3 of 3 hunks: pass", 3);
      return necessity();
    };
    vscode.ui.onMessage = () => "Show Details";

    const result = await flows.findNeededHunks();

    expect(result?.needed).toEqual([0]);
    expect(server.sent.at(-1)!.command).toBe("editFidelity.analyzeNecessity");
    expect(server.sent.at(-1)!.arg).toEqual({ id: "p1" });
    expect(vscode.ui.progress[0].opts).toMatchObject({ location: vscode.ProgressLocation.Notification, cancellable: true });
    expect(server.sent.at(-1)!.token).toBe(vscode.ui.progress[0].source.token);
    expect(vscode.ui.progress[0].reports).toEqual([
      { message: "3 hunks, at most 32 runs of `python -m pytest`", increment: undefined },
      { message: "run 1/32: 3 of 3 hunks: pass", increment: 3 },
    ]);
    expect(vscode.ui.messages).toEqual([
      {
        level: "info",
        message:
          "Edit Fidelity: qwen proposal: the tests need 1 of 3 hunks: 1 (line 2). They pass without hunks 2 (lines 4–5), 3 (line 2). " +
          "4 of at most 32 test runs; D_min 0.050, reference-free excess +0.200.",
        actions: ["Show Details"],
      },
    ]);
    expect(vscode.ui.shownDocuments[0].language).toBe("markdown");
    expect(vscode.ui.shownDocuments[0].content).toMatch(/^# Which hunks do the tests need\? \(qwen proposal\)/);
    expect(vscode.ui.shownDocuments[0].content).toContain("| 3 | 1 | pass | ok | 0.8 s |");
    // The proposal stays pending: the server's code action keeps only the needed hunks.
    expect(flows.pendingId).toBe("p1");
    expect(server.sent.filter((x) => x.command === "editFidelity.applyProposal")).toEqual([]);
  });

  it("analyses the proposal of the preview it is run from (editor title button)", async () => {
    server.handlers["editFidelity.analyzeNecessity"] = () => necessity({ id: "p7" });
    await flows.findNeededHunks(docs.uriFor("p7", doc.uri as any));
    expect(server.sent.at(-1)!.arg).toEqual({ id: "p7" });
    // Unknown to the client: no backend name, no hunk lines.
    expect(vscode.ui.messages[0].message).toMatch(/^Edit Fidelity: the proposal: the tests need 1 of 3 hunks: 1\. They pass without hunks 2, 3\./);
  });

  it("cancelling the notification cancels the analysis", async () => {
    let seenToken: any;
    server.handlers["editFidelity.analyzeNecessity"] = (_a, token) => {
      seenToken = token;
      return new Promise(() => undefined); // the tests are still running
    };
    vscode.ui.onProgress = (_opts, source) => setTimeout(() => source.cancel(), 5);
    expect(await flows.findNeededHunks()).toBeUndefined();
    expect(seenToken.isCancellationRequested).toBe(true);
    expect(vscode.ui.messages).toEqual([]);
    expect(vscode.ui.statusMessages).toContain("Edit Fidelity: request cancelled");
    expect(flows.pendingId).toBe("p1");
  });

  it("warns with the server's reason when the analysis is not conclusive", async () => {
    server.handlers["editFidelity.analyzeNecessity"] = () =>
      necessity({ status: "unresolved", message: "the sandbox could not run `pytest`: no module named pytest", needed: [0, 1, 2], unnecessary: [], dMin: null, excessRefFree: null });
    await flows.findNeededHunks();
    expect(vscode.ui.messages[0]).toEqual({
      level: "warning",
      message: "Edit Fidelity: qwen proposal: the sandbox could not run `pytest`: no module named pytest.",
      actions: ["Show Details"],
    });
  });

  it("shows the server's refusal (no test command) as one error", async () => {
    server.handlers["editFidelity.analyzeNecessity"] = () => {
      throw new Error('editFidelity.analyzeNecessity: no test command: set editFidelity.testCommand (for example "python -m pytest -x tests/test_x.py")');
    };
    expect(await flows.findNeededHunks()).toBeUndefined();
    expect(vscode.ui.messages).toHaveLength(1);
    expect(vscode.ui.messages[0].level).toBe("error");
    expect(vscode.ui.messages[0].message).toMatch(/^Edit Fidelity: editFidelity.analyzeNecessity: no test command/);
  });

  it("says so when there is no pending proposal", async () => {
    server.handlers["editFidelity.rejectProposal"] = () => ({ rejected: true });
    await flows.reject();
    vscode.window.activeTextEditor = vscode.makeEditor(doc);
    const before = server.sent.length;
    expect(await flows.findNeededHunks()).toBeUndefined();
    expect(server.sent).toHaveLength(before);
    expect(vscode.ui.messages.at(-1)!.message).toBe("Edit Fidelity: there is no pending proposal.");
  });
});

describe("raceCancellation", () => {
  it("passes results through and rejects at once when already cancelled", async () => {
    const src = new vscode.CancellationTokenSource();
    await expect(raceCancellation(Promise.resolve(3), src.token as any)).resolves.toBe(3);
    src.cancel();
    await expect(raceCancellation(Promise.resolve(3), src.token as any)).rejects.toThrow("cancelled");
  });
});
