// Entry point: wires the server manager, the proposal documents, the status bar and the commands.
import * as vscode from "vscode";
import { SECTION } from "./config";
import { Flows } from "./flows";
import { languageClientFactory } from "./languageClient";
import { hasPythonExtension, onInterpreterChange, realProbes } from "./probes";
import { PROPOSAL_SCHEME, ProposalDocuments } from "./proposals";
import { ServerManager } from "./server";
import { FidelityStatus } from "./status";

let manager: ServerManager | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel("Edit Fidelity");
  const trace = vscode.window.createOutputChannel("Edit Fidelity (trace)");
  const docs = new ProposalDocuments();
  const status = new FidelityStatus("editFidelity.showLastReport");
  status.setEnabled(vscode.workspace.getConfiguration(SECTION).get<boolean>("statusBar.enabled") !== false);

  let flows: Flows | undefined;
  manager = new ServerManager({
    factory: languageClientFactory(output, trace),
    probes: realProbes(),
    output,
    openInstallHelp: () =>
      vscode.commands.executeCommand("markdown.showPreview", vscode.Uri.joinPath(context.extensionUri, "README.md")),
    hasPythonExtension,
    onStateChange: (running) => {
      status.setServerRunning(running);
      if (!running) flows?.reset();
    },
    onServerCommand: (command, args, result) => flows?.serverCommandDone(command, args, result),
  });
  flows = new Flows(manager, docs, status);
  const f = flows;
  const m = manager;

  context.subscriptions.push(
    output,
    trace,
    docs,
    status,
    m,
    vscode.workspace.registerTextDocumentContentProvider(PROPOSAL_SCHEME, docs),
    vscode.commands.registerCommand("editFidelity.editSelection", () => f.editSelection()),
    vscode.commands.registerCommand("editFidelity.compareBackendsForEdit", () => f.compareBackends()),
    vscode.commands.registerCommand("editFidelity.checkAgainstHead", () => f.checkChange("git")),
    vscode.commands.registerCommand("editFidelity.checkAgainstSnapshot", () => f.checkChange("snapshot")),
    vscode.commands.registerCommand("editFidelity.findSyntaxBug", () => f.findSyntaxBug()),
    vscode.commands.registerCommand("editFidelity.acceptProposal", (arg?: unknown) => f.accept(arg)),
    vscode.commands.registerCommand("editFidelity.acceptHunks", (arg?: unknown) => f.acceptHunks(arg)),
    vscode.commands.registerCommand("editFidelity.discardProposal", (arg?: unknown) => f.reject(arg)),
    vscode.commands.registerCommand("editFidelity.findNeededHunks", (arg?: unknown) => f.findNeededHunks(arg)),
    vscode.commands.registerCommand("editFidelity.switchProposal", () => f.switchProposal()),
    vscode.commands.registerCommand("editFidelity.snapshotNow", () => f.takeSnapshot()),
    vscode.commands.registerCommand("editFidelity.revertFlaggedHunks", () => f.revertFlagged()),
    vscode.commands.registerCommand("editFidelity.showLastReport", () => f.showLastReport()),
    vscode.commands.registerCommand("editFidelity.restartServer", () => m.restart("restart requested")),
    vscode.commands.registerCommand("editFidelity.showOutput", () => output.show(true)),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration("editFidelity.statusBar")) {
        status.setEnabled(vscode.workspace.getConfiguration(SECTION).get<boolean>("statusBar.enabled") !== false);
      }
    }),
    vscode.workspace.onDidCloseTextDocument((d) => {
      if (d.uri.scheme !== PROPOSAL_SCHEME) docs.forgetDocument(d.uri.toString());
    }),
  );

  // Start in the background: activation never waits for (or fails because of) the server or the
  // Python extension.
  void m.start();
  void onInterpreterChange(() => m.interpreterChanged()).then(
    (sub) => sub && context.subscriptions.push(sub),
    () => undefined,
  );
}

export async function deactivate(): Promise<void> {
  if (manager) await manager.stop();
  manager = undefined;
}
