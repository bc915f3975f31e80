import { beforeEach, describe, expect, it, vi } from "vitest";
import manifest from "../package.json";
import * as vscode from "./vscode.fake";

// The real language client needs VS Code; activation is tested with the server absent.
vi.mock("../src/languageClient", () => ({
  languageClientFactory: () => () => {
    throw new Error("no client may be created when no server is found");
  },
}));
vi.mock("../src/probes", () => ({
  hasPythonExtension: () => false,
  onInterpreterChange: async () => undefined,
  realProbes: () => ({
    platform: "linux",
    env: { PATH: "/nowhere" },
    isExecutable: async () => false,
    pythonHasServer: async () => false,
    activeInterpreter: async () => undefined,
  }),
}));

const { activate, deactivate } = await import("../src/extension");

function context() {
  return { subscriptions: [] as { dispose(): unknown }[], extensionUri: vscode.Uri.file("/ext") };
}

async function settle() {
  for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 0));
}

describe("activation", () => {
  beforeEach(() => vscode.resetFake());

  it("registers every contributed command and nothing that clashes with the server's own commands", async () => {
    await activate(context() as any);
    const contributed = manifest.contributes.commands.map((c: { command: string }) => c.command).sort();
    expect([...vscode.registeredCommands.keys()].sort()).toEqual(contributed);
    // vscode-languageclient registers the server's executeCommand ids itself.
    const serverCommands = [
      "editFidelity.requestEdit",
      "editFidelity.applyProposal",
      "editFidelity.compareBackends",
      "editFidelity.checkChange",
      "editFidelity.rejectProposal",
      "editFidelity.dismiss",
      "editFidelity.revertHunks",
      "editFidelity.takeSnapshot",
      "editFidelity.listBackends",
      "editFidelity.locateBug",
      "editFidelity.analyzeNecessity",
      "editFidelity.selectProposal",
    ];
    for (const serverCommand of serverCommands) {
      expect(contributed).not.toContain(serverCommand);
    }
    expect(vscode.contentProviders.has("edit-fidelity-proposal")).toBe(true);
    for (const kb of manifest.contributes.keybindings) expect(contributed).toContain(kb.command);
    await deactivate();
  });

  it("a user without the server gets exactly one actionable message, and commands do not throw", async () => {
    vscode.ui.onInputBox = () => "never asked";
    await activate(context() as any);
    await settle();
    expect(vscode.ui.messages).toHaveLength(1);
    expect(vscode.ui.messages[0].actions).toEqual(["How to Install", "Open Settings"]);
    expect(vscode.statusItems[0].visible).toBe(true);
    expect(vscode.statusItems[0].text).toBe("$(error) Fidelity: no server");
    expect(vscode.statusItems[0].command).toBe("editFidelity.restartServer");

    vscode.ui.onMessage = (_l, _m, actions) => (actions.includes("How to Install") ? "How to Install" : undefined);
    vscode.window.activeTextEditor = vscode.makeEditor(vscode.makeDocument("/w/a.py", "x = 1\n"));
    await expect(vscode.commands.executeCommand("editFidelity.editSelection")).resolves.toBeUndefined();
    expect(vscode.ui.calls.some((c) => c.fn === "showInputBox")).toBe(false);
    expect(vscode.ui.messages).toHaveLength(2);
    const help = vscode.ui.calls.find((c) => c.fn === "executeCommand" && c.args[0] === "markdown.showPreview");
    expect((help!.args[1] as vscode.Uri).path).toBe("/ext/README.md");
    await deactivate();
  });

  it("hides the status bar item when the setting says so", async () => {
    await activate(context() as any);
    vscode.changeSettings({ "editFidelity.statusBar.enabled": false });
    expect(vscode.statusItems[0].visible).toBe(false);
    await deactivate();
  });
});
