// The extension's tests in a real VS Code: code-server's extension host runs this module (a
// test-electron style `run()`), next to the installed .vsix, while the driver (driver.ts) holds the
// page. What a user does at the page (typing an instruction, clicking a notification button or a
// code lens) and what only the page shows (status bar, Problems panel, notifications) go through the
// driver; the rest is VS Code's own API. Every wait is for a condition, with a generous limit.
import * as cp from "child_process";
import * as fs from "fs";
import * as path from "path";
import * as vscode from "vscode";
import { DRIVER_ENV, SETUP_ENV, type Action, type RealSetup, type Reply, type UiFacts } from "./rpc";
import { ASSISTANT_BRANCH, FIXED, FUNCTION_LINES, INSTRUCTION, REWRITTEN, SAMPLE } from "./texts";

const EXTENSION_ID = "edit-fidelity.edit-fidelity";
const SOURCE = "edit-fidelity";
const PROPOSAL_SCHEME = "edit-fidelity-proposal";
const OBSERVED = "[observed change]";
const WAIT_MS = 90_000;

const setup = JSON.parse(process.env[SETUP_ENV] ?? "{}") as RealSetup;

async function act(action: Action): Promise<UiFacts> {
  const url = process.env[DRIVER_ENV];
  if (!url) throw new Error(`${DRIVER_ENV} is not set: run this through scripts/test-vscode-real`);
  const res = await fetch(`${url}/rpc`, { method: "POST", body: JSON.stringify(action) });
  const reply = (await res.json()) as Reply;
  if (!reply.ok) throw new Error(`the page: ${action.op} ${JSON.stringify(action).slice(0, 120)}: ${reply.error}`);
  return reply.facts;
}

const shot = (name: string) => act({ op: "shot", name });

function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

type Probe<T> = () => T | undefined | null | false | Promise<T | undefined | null | false>;

async function waitFor<T>(what: string, probe: Probe<T>, describe?: () => string): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${WAIT_MS / 1000} s waiting for ${what}${describe ? `; ${describe()}` : ""}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

/** Wait until the page shows something; returns what `pick` found. */
async function onPage<T>(what: string, pick: (f: UiFacts) => T | undefined | null | false): Promise<T> {
  let last: UiFacts | undefined;
  return waitFor(
    what,
    async () => {
      last = await act({ op: "facts" });
      return pick(last);
    },
    () => `the page showed ${JSON.stringify(last).slice(0, 1500)}`,
  );
}

const uriOf = (name: string) => vscode.Uri.file(path.join(setup.workspace, name));

async function open(name: string): Promise<vscode.TextEditor> {
  const doc = await vscode.workspace.openTextDocument(uriOf(name));
  return vscode.window.showTextDocument(doc, { preview: false });
}

function selectFunction(editor: vscode.TextEditor): void {
  editor.selection = new vscode.Selection(FUNCTION_LINES.start, 0, FUNCTION_LINES.end, 0);
}

/** The extension's diagnostics on a file. */
const ours = (uri: vscode.Uri) => vscode.languages.getDiagnostics(uri).filter((d) => d.source === SOURCE);
const observed = (uri: vscode.Uri) => ours(uri).filter((d) => d.message.includes(OBSERVED));
const flagged = (d: vscode.Diagnostic) => d.severity <= vscode.DiagnosticSeverity.Warning;

/** The open diff preview of a proposal, if any. */
function previewTab(): vscode.TabInputTextDiff | undefined {
  for (const tab of vscode.window.tabGroups.all.flatMap((g) => g.tabs)) {
    if (tab.input instanceof vscode.TabInputTextDiff && tab.input.modified.scheme === PROPOSAL_SCHEME) return tab.input;
  }
  return undefined;
}

async function previewText(): Promise<string | undefined> {
  const tab = previewTab();
  return tab && (await vscode.workspace.openTextDocument(tab.modified)).getText();
}

/** The `edit-fidelity serve` processes this extension host started (their parent is this process). */
function serverPids(): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid !== process.pid) continue;
      const argv = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      if (argv.includes(setup.serverPath) && argv.includes("serve")) pids.push(Number(entry));
    } catch {
      /* gone meanwhile */
    }
  }
  return pids;
}

const oneServer = () => {
  const pids = serverPids();
  return pids.length === 1 ? pids[0] : undefined;
};

const alive = (pid: number) => fs.existsSync(`/proc/${pid}`);

/**
 * A notification, as a user sees it in the notification center (the bell): with code-server's
 * smoke-test driver on (which the test module needs) VS Code shows no toasts.
 */
async function notification(what: string, match: (message: string) => boolean) {
  let last: UiFacts | undefined;
  return waitFor(
    what,
    async () => {
      await vscode.commands.executeCommand("notifications.showList"); // the center closes when it is empty
      last = await act({ op: "facts" });
      return last.notifications.find((n) => match(n.message));
    },
    () => `the page showed ${JSON.stringify(last).slice(0, 1500)}`,
  );
}

/** The status bar item of the extension, once it shows a running server. */
const statusRunning = (f: UiFacts) => f.statusBar.find((t) => /Fidelity/.test(t) && !/no server/.test(t));

/** Commands left running while the test answers their questions; what they throw fails the test. */
const backgroundErrors: string[] = [];

function inBackground(command: string): void {
  vscode.commands.executeCommand(command).then(undefined, (e: unknown) => backgroundErrors.push(`${command}: ${e instanceof Error ? e.message : String(e)}`));
}

/** Ask for an edit of the selected function through the UI; resolves when the request is sent. */
async function requestEdit(command: string): Promise<void> {
  inBackground(command); // it ends when its last question is answered
  await onPage("the instruction box", (f) => f.quickInput);
  await act({ op: "type", text: INSTRUCTION });
}

interface Test {
  name: string;
  needs?: string[];
  run(notes: string[]): Promise<void>;
}

const ACTIVATION = "the extension activates on a Python file";
const SERVER = "the server starts from editFidelity.server.path in the User settings of a remote window";
const REQUEST = "requestEdit opens the diff preview";
const OBSERVE = "another extension's whole-file edit is observed";
const RESTART = "a settings change restarts the server";

const tests: Test[] = [
  {
    name: ACTIVATION,
    async run(notes) {
      assert(vscode.env.remoteName, "this is not a remote window");
      notes.push(`VS Code ${vscode.version}, remote window ${vscode.env.remoteName}, extension host on Node ${process.version}`);
      const ext = vscode.extensions.getExtension(EXTENSION_ID);
      assert(ext, `${EXTENSION_ID} is not installed`);
      assert(!ext.isActive, "the extension was active before a Python file was opened");
      await open("sample.py");
      await waitFor("the extension to activate", () => ext.isActive);
      await shot("activated");
    },
  },
  {
    name: SERVER,
    needs: [ACTIVATION],
    async run(notes) {
      // VS Code parses the User settings again when they change; in a remote window it then drops
      // machine-scoped values from them: the server path must survive that
      let reread = false;
      const sub = vscode.workspace.onDidChangeConfiguration((e) => (reread ||= e.affectsConfiguration("editor.hover.delay")));
      await vscode.workspace.getConfiguration("editor").update("hover.delay", 350, vscode.ConfigurationTarget.Global);
      await waitFor("VS Code to read the User settings again", () => reread);
      sub.dispose();
      const inspected = vscode.workspace.getConfiguration("editFidelity").inspect<string>("server.path");
      assert(inspected?.globalValue === setup.serverPath, `the User setting reads ${JSON.stringify(inspected)}`);
      const pid = await waitFor("edit-fidelity serve to run", oneServer, () => `servers: ${serverPids().join(", ") || "none"}`);
      notes.push(`server pid ${pid}: ${fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim()}`);
      await onPage("the status bar item of a running server", statusRunning);
      await shot("server-started");
    },
  },
  {
    name: REQUEST,
    needs: [SERVER],
    async run() {
      const editor = await open("accept.py");
      selectFunction(editor);
      await requestEdit("editFidelity.editSelection");
      const proposed = await waitFor("the diff preview", previewText);
      assert(previewTab()!.original.toString() === uriOf("accept.py").toString(), "the preview compares another file");
      for (const part of ["if value > limit:", "for value in values:", "raise ValueError"]) {
        assert(proposed.includes(part), `the proposal lacks ${part}: ${proposed}`);
      }
      assert(editor.document.getText() === SAMPLE, "the buffer changed before anything was accepted");
      const note = await notification("the proposal's notification", (m) => m.includes("overeditor proposal"));
      assert(["Accept", "Reject"].every((b) => note.buttons.includes(b)), `its buttons: ${note.buttons.join(", ")}`);
      await shot("diff-preview");
    },
  },
  {
    name: "the proposal's diagnostics are in the Problems panel",
    needs: [REQUEST],
    async run(notes) {
      const uri = uriOf("accept.py");
      const diags = await waitFor("the proposal's diagnostics", () => ours(uri).length > 0 && ours(uri));
      assert(diags.some(flagged), `diagnostics: ${diags.map((d) => d.message).join(" | ")}`);
      await vscode.commands.executeCommand("notifications.hideList");
      await vscode.commands.executeCommand("workbench.actions.view.problems");
      // the panel lists errors, warnings and information (hints only mark the text)
      const listed = diags.filter((d) => d.severity !== vscode.DiagnosticSeverity.Hint);
      assert(listed.length > 0, "no diagnostic above a hint");
      const key = (d: vscode.Diagnostic) => d.message.slice(0, 40);
      const rows = await onPage("the Problems panel to list them", (f) => f.problems && listed.every((d) => f.problems!.some((r) => r.includes(key(d)))) && f.problems);
      notes.push(`${diags.length} diagnostics (${listed.length} above a hint); a row: "${rows.find((r) => r.includes(key(listed[0])))}"`);
      await shot("problems-panel");
    },
  },
  {
    name: "the status bar shows the proposal's fidelity",
    needs: [REQUEST],
    async run(notes) {
      const text = await onPage("the status bar to show a measured proposal", (f) => f.statusBar.find((t) => /^Fidelity d \d\.\d{3}/.test(t)));
      const note = await notification("the proposal's notification", (m) => m.includes("overeditor proposal"));
      const inBar = /· (\d+) flagged/.exec(text);
      const inNote = note && /, (\d+) flagged hunks?/.exec(note.message);
      assert(inBar && inNote && inBar[1] === inNote[1] && Number(inBar[1]) > 0, `status bar "${text}" against "${note?.message}"`);
      notes.push(`status bar: "${text}"`);
      await vscode.commands.executeCommand("notifications.hideList");
      await shot("status-bar");
    },
  },
  {
    name: "Accept minimal applies only the requested change and clears the diagnostics",
    needs: [REQUEST],
    async run(notes) {
      const uri = uriOf("accept.py");
      const doc = (await open("accept.py")).document;
      await onPage("the Accept minimal lens", (f) => f.codeLenses.some((l) => l.includes("Accept minimal")));
      // what the server flagged (not requested) must stay out, the requested fix must go in
      const unrequested = ours(uri).filter(flagged).map((d) => d.message);
      await act({ op: "clickLens", label: "Accept minimal" });
      const text = await waitFor("the buffer to change", () => doc.getText() !== SAMPLE && doc.getText());
      assert(text.includes("> limit:") && !text.includes("< limit:"), `the requested fix is missing: ${text}`);
      const kept: [RegExp, boolean][] = [
        [/renamed `v` to `value`/, !/\bvalue\b/.test(text)],
        [/raise|validation/, !text.includes("raise ValueError")],
        [/comment/, text.includes("# only the large ones")],
      ];
      for (const [kind, ok] of kept) {
        if (unrequested.some((m) => kind.test(m))) assert(ok, `a flagged change (${kind}) was applied: ${text}`);
      }
      notes.push(`flagged and left out: ${unrequested.join(" | ")}`, text === FIXED ? "the buffer holds exactly the requested fix" : `the buffer: ${text}`);
      await waitFor("the accepted proposal's diagnostics to go", () => ours(uri).length === 0, () => ours(uri).map((d) => d.message).join(" | "));
      await waitFor("the preview to close", () => !previewTab());
      // web VS Code saves by itself (files.autoSave "afterDelay" unless the user changed it)
      const autoSave = vscode.workspace.getConfiguration("files").get<string>("autoSave");
      notes.push(`files.autoSave is "${autoSave}"`);
      if (autoSave !== "off") await waitFor("auto-save to write the accepted edit", () => !doc.isDirty && fs.readFileSync(uri.fsPath, "utf8") === text);
      await shot("accepted-minimal");
      await vscode.commands.executeCommand("notifications.clearAll");
    },
  },
  {
    name: "Accept applies the whole proposal, clears its diagnostics and is one undo step",
    needs: [SERVER],
    async run() {
      const editor = await open("accept_all.py");
      const uri = editor.document.uri;
      selectFunction(editor);
      await requestEdit("editFidelity.editSelection");
      const proposed = await waitFor("the diff preview", previewText);
      await waitFor("the proposal's diagnostics", () => ours(uri).some(flagged));
      await notification("the proposal's notification", (m) => m.includes("overeditor proposal"));
      await act({ op: "clickNotification", message: "overeditor proposal", button: "Accept" });
      await waitFor("the buffer to hold the proposal", () => editor.document.getText() === proposed, () => editor.document.getText());
      // VS Code answers the server's workspace/applyEdit before it sends the didChange
      await waitFor("the accepted proposal's diagnostics to go", () => ours(uri).length === 0, () => ours(uri).map((d) => d.message).join(" | "));
      await waitFor("the preview to close", () => !previewTab());
      await shot("accepted-all");
      // one undo step takes the whole proposal back
      await vscode.window.showTextDocument(editor.document, { preview: false });
      await vscode.commands.executeCommand("undo");
      await waitFor("Undo to restore the text before the proposal", () => editor.document.getText() === SAMPLE, () => editor.document.getText());
    },
  },
  {
    name: OBSERVE,
    needs: [SERVER],
    async run(notes) {
      const doc = (await open("observe.py")).document;
      let events = 0;
      let changes = 0;
      const sub = vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.document === doc && e.contentChanges.length) {
          events++;
          changes += e.contentChanges.length;
        }
      });
      const edit = new vscode.WorkspaceEdit();
      edit.replace(doc.uri, new vscode.Range(0, 0, doc.lineCount, 0), REWRITTEN);
      const applied = await vscode.workspace.applyEdit(edit);
      sub.dispose();
      assert(applied && doc.getText() === REWRITTEN, "the whole-file edit was not applied");
      notes.push(`VS Code reported the edit as ${changes} content change(s) in ${events} event(s)`);
      const diags = await waitFor("the observation's diagnostics", () => observed(doc.uri).length > 0 && observed(doc.uri));
      assert(diags.some((d) => /renamed/.test(d.message)), `observed: ${diags.map((d) => d.message).join(" | ")}`);
      await shot("observed-edit");
    },
  },
  {
    name: "reverting the unrequested changes keeps the requested one",
    needs: [OBSERVE],
    async run() {
      const doc = (await open("observe.py")).document;
      await onPage("the revert lens", (f) => f.codeLenses.some((l) => l.includes("unrequested change")));
      await act({ op: "clickLens", label: "unrequested change" });
      await waitFor("the buffer to keep only the requested change", () => doc.getText() === FIXED, () => doc.getText());
      await waitFor("the flagged observations to go", () => !observed(doc.uri).some(flagged), () => observed(doc.uri).map((d) => d.message).join(" | "));
      await shot("reverted-unrequested");
    },
  },
  {
    name: "a git checkout of the open file is observed",
    needs: [SERVER],
    async run() {
      const doc = (await open("checkout.py")).document;
      const git = cp.spawnSync("git", ["checkout", ASSISTANT_BRANCH, "--", "checkout.py"], { cwd: setup.workspace, encoding: "utf8" });
      assert(git.status === 0, `git checkout failed: ${git.stderr}`);
      await waitFor("VS Code to load the checked-out file", () => doc.getText() === REWRITTEN);
      const diags = await waitFor("the observation's diagnostics", () => observed(doc.uri).length > 0 && observed(doc.uri));
      assert(diags.some((d) => /renamed/.test(d.message)), `observed: ${diags.map((d) => d.message).join(" | ")}`);
      await shot("git-checkout-observed");
    },
  },
  {
    name: RESTART,
    needs: [SERVER],
    async run(notes) {
      const before = await waitFor("the server", oneServer);
      const cfg = vscode.workspace.getConfiguration("editFidelity");
      const backends = cfg.get<object[]>("backends") ?? [];
      await cfg.update("backends", [...backends, { name: "careful", baseUrl: setup.baseUrl, model: "careful", timeoutS: 120 }], vscode.ConfigurationTarget.Global);
      await waitFor(`the old server (pid ${before}) to exit`, () => !alive(before));
      const after = await waitFor("a new server", () => {
        const pid = oneServer();
        return pid !== before && pid;
      });
      notes.push(`server pid ${before} -> ${after}`);
      await onPage("the status bar item of a running server", statusRunning);
      await shot("settings-restarted-server");
    },
  },
  {
    name: "switching between pending proposals changes the preview and the diagnostics",
    needs: [RESTART],
    async run() {
      const editor = await open("switch.py");
      const uri = editor.document.uri;
      selectFunction(editor);
      await requestEdit("editFidelity.editSelection");
      await onPage("both proposals to choose from", (f) => f.quickInput && ["overeditor", "careful"].every((b) => f.quickInput!.rows.some((r) => r.includes(b))));
      await shot("two-proposals");
      await act({ op: "pick", label: "overeditor" });
      await waitFor("overeditor's preview", async () => (await previewText())?.includes("for value in values:"));
      await waitFor("overeditor's diagnostics", () => ours(uri).some((d) => /renamed/.test(d.message)));
      await notification("overeditor's notification", (m) => m.includes("overeditor proposal"));
      await vscode.commands.executeCommand("notifications.clearAll"); // answers it (nothing chosen)
      inBackground("editFidelity.switchProposal");
      await onPage("the pending proposals", (f) => f.quickInput?.rows.some((r) => r.includes("careful")));
      await act({ op: "pick", label: "careful" });
      await waitFor("careful's preview", async () => (await previewText()) === FIXED);
      await waitFor("overeditor's diagnostics to go", () => !ours(uri).some(flagged), () => ours(uri).map((d) => d.message).join(" | "));
      await onPage("the status bar to show careful's proposal", (f) => f.statusBar.some((t) => /^Fidelity d \d/.test(t) && !/flagged/.test(t)));
      await shot("switched-proposal");
      await vscode.commands.executeCommand("editFidelity.discardProposal");
      await waitFor("the preview to close", () => !previewTab());
    },
  },
  {
    name: "compare backends lists both backends and opens the table",
    needs: [RESTART],
    async run(notes) {
      selectFunction(await open("compare.py"));
      await requestEdit("editFidelity.compareBackendsForEdit");
      const rows = await onPage("the comparison", (f) => f.quickInput && ["overeditor", "careful"].every((b) => f.quickInput!.rows.some((r) => r.includes(b))) && f.quickInput.rows);
      notes.push(...rows.slice(0, 2).map((r) => `row: ${r}`));
      await shot("compare-backends");
      await act({ op: "pick", label: "Open this table as Markdown" });
      const table = await waitFor("the table as Markdown", () => {
        const doc = vscode.window.activeTextEditor?.document;
        return doc?.languageId === "markdown" && doc.getText();
      });
      assert(table.includes("overeditor") && table.includes("careful") && table.includes(INSTRUCTION), `the table: ${table}`);
      await shot("compare-table");
    },
  },
  {
    name: "a server crash is shown to the user and the server recovers",
    needs: [RESTART], // two backends: the edit request asks which proposal to show
    async run(notes) {
      const uri = (await open("crash.py")).document.uri;
      // a pending proposal on it: its diagnostics must go with the server that made it
      selectFunction(vscode.window.activeTextEditor!);
      await requestEdit("editFidelity.editSelection");
      await onPage("the proposals to choose from", (f) => f.quickInput?.rows.some((r) => r.includes("overeditor")));
      await act({ op: "pick", label: "overeditor" });
      await waitFor("the proposal's diagnostics", () => ours(uri).some(flagged));
      await notification("the proposal's notification", (m) => m.includes("overeditor proposal"));
      await vscode.commands.executeCommand("notifications.clearAll");
      const before = await waitFor("the server", oneServer);
      process.kill(before, "SIGKILL");
      const note = await notification("the crash notification", (m) => m.includes("stopped unexpectedly"));
      notes.push(`shown: "${note.message}"`);
      await waitFor("the dead server's diagnostics to go", () => ours(uri).length === 0, () => ours(uri).map((d) => d.message).join(" | "));
      await shot("server-crashed");
      const after = await waitFor("the restarted server", () => {
        const pid = oneServer();
        return pid !== before && pid;
      });
      await onPage("the status bar item of a running server", statusRunning);
      // it answers again: the file against its snapshot (the server's command, which the language
      // client registers again once the new server announced it)
      await waitFor("the server's commands", async () => (await vscode.commands.getCommands(true)).includes("editFidelity.checkChange"));
      const result = await vscode.commands.executeCommand<{ report?: { identical?: boolean } }>("editFidelity.checkChange", {
        uri: uri.toString(),
        baseline: "snapshot",
      });
      assert(result?.report?.identical === true, `checkChange after the restart answered ${JSON.stringify(result).slice(0, 300)}`);
      notes.push(`server pid ${before} killed, ${after} answers`);
      await shot("server-recovered");
    },
  },
];

export async function run(): Promise<void> {
  const only = process.env.EDIT_FIDELITY_REAL_ONLY ? new RegExp(process.env.EDIT_FIDELITY_REAL_ONLY) : undefined;
  const passed = new Set<string>();
  if (only) for (const t of tests) if (!only.test(t.name)) passed.add(t.name); // a subset, while writing tests
  await act({ op: "plan", tests: tests.filter((t) => !passed.has(t.name)).map((t) => t.name) });
  let failures = 0;
  for (const test of tests) {
    if (only && !only.test(test.name)) continue;
    const started = Date.now();
    const notes: string[] = [];
    const missing = (test.needs ?? []).filter((n) => !passed.has(n));
    let error: string | undefined;
    if (missing.length) error = `not run: it needs "${missing.join('", "')}", which failed`;
    else {
      try {
        await test.run(notes);
        if (backgroundErrors.length) throw new Error(backgroundErrors.splice(0).join("; "));
        passed.add(test.name);
      } catch (e) {
        error = e instanceof Error ? e.message : String(e);
        backgroundErrors.length = 0;
        await shot(`FAILED-${test.name.slice(0, 40)}`).catch(() => undefined);
      }
    }
    if (error) failures++;
    await act({ op: "report", test: test.name, ok: !error, error, seconds: (Date.now() - started) / 1000, notes });
  }
  if (failures) throw new Error(`${failures} of ${tests.length} tests failed`);
}
