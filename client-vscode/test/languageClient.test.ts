import { beforeEach, describe, expect, it, vi } from "vitest";
import * as vscode from "./vscode.fake";

// A stand-in for vscode-languageclient/node that captures what the factory builds.
const created: any[] = [];
vi.mock("vscode-languageclient/node", () => {
  class LanguageClient {
    state = 1;
    sent: any[] = [];
    progress: any[] = [];
    constructor(
      readonly id: string,
      readonly name: string,
      readonly serverOptions: any,
      readonly clientOptions: any,
    ) {
      created.push(this);
    }
    async start() {
      this.state = 2;
    }
    async stop() {
      this.state = 1;
    }
    sendRequest(...args: any[]) {
      this.sent.push(args);
      return Promise.resolve("ok");
    }
    diagnostics = { cleared: 0, clear: () => this.diagnostics.cleared++ };
    stateHandlers: ((e: { oldState: number; newState: number }) => void)[] = [];
    onDidChangeState(handler: (e: { oldState: number; newState: number }) => void) {
      this.stateHandlers.push(handler);
      return new vscode.Disposable();
    }
    onProgress(type: unknown, token: string, handler: (v: any) => void) {
      this.progress.push({ type, token, handler });
      return new vscode.Disposable();
    }
  }
  return {
    LanguageClient,
    State: { Stopped: 1, Running: 2, Starting: 3 },
    ErrorAction: { Continue: 1, Shutdown: 2 },
    CloseAction: { DoNotRestart: 1, Restart: 2 },
    WorkDoneProgress: { type: "$/progress:workDone" },
  };
});

const { languageClientFactory } = await import("../src/languageClient");

function build() {
  const gaveUp: string[] = [];
  const commands: unknown[] = [];
  const events: string[] = [];
  const output = vscode.window.createOutputChannel("o");
  const factory = languageClientFactory(output as any, output as any);
  const client = factory({
    server: { command: "/venv/bin/edit-fidelity", args: ["serve", "--log-level", "INFO"], source: "test" },
    initializationOptions: { editFidelity: { backends: [] } },
    configuration: (section, scope) => ({ section, scope }),
    onGaveUp: (m) => gaveUp.push(m),
    onServerCommand: (...a) => commands.push(a),
    onCrashed: () => events.push("crashed"),
    onRecovered: () => events.push("recovered"),
  });
  return { client, lc: created.at(-1), gaveUp, commands, events };
}

describe("the language client the extension creates", () => {
  beforeEach(() => {
    created.length = 0;
    vscode.resetFake();
  });

  it("runs the discovered command over stdio for Python documents, with the initialization options", () => {
    const { lc } = build();
    expect(lc.id).toBe("editFidelity"); // so editFidelity.trace.server works
    expect(lc.serverOptions).toMatchObject({ command: "/venv/bin/edit-fidelity", args: ["serve", "--log-level", "INFO"] });
    expect(lc.serverOptions.options.env.PYTHONUNBUFFERED).toBe("1");
    expect(lc.clientOptions.documentSelector).toEqual([
      { scheme: "file", language: "python" },
      { scheme: "untitled", language: "python" },
    ]);
    expect(lc.clientOptions.initializationOptions).toEqual({ editFidelity: { backends: [] } });
  });

  it("answers workspace/configuration item by item", async () => {
    const { lc } = build();
    const answer = await lc.clientOptions.middleware.workspace.configuration(
      { items: [{ section: "editFidelity", scopeUri: "file:///w" }, { section: "python" }] },
      undefined,
      () => {
        throw new Error("the default answer must not be used");
      },
    );
    expect(answer).toEqual([
      { section: "editFidelity", scope: "file:///w" },
      { section: "python", scope: undefined },
    ]);
  });

  it("reports server commands run from code lenses after they ran", async () => {
    const { lc, commands } = build();
    const result = await lc.clientOptions.middleware.executeCommand("editFidelity.applyProposal", [{ id: "p" }], async () => ({ applied: true }));
    expect(result).toEqual({ applied: true });
    expect(commands).toEqual([["editFidelity.applyProposal", [{ id: "p" }], { applied: true }]]);
  });

  it("restarts a crashing server 4 times, telling the manager each time, then gives up with one message of its own", () => {
    const { lc, gaveUp, events } = build();
    const handler = lc.clientOptions.errorHandler;
    const changeState = (newState: number) => lc.stateHandlers.forEach((h: any) => h({ oldState: 0, newState }));
    changeState(2); // the first start: not a recovery
    expect(events).toEqual([]);
    handler.closed();
    expect(events).toEqual(["crashed"]);
    changeState(3);
    changeState(2);
    expect(events).toEqual(["crashed", "recovered"]);
    changeState(2);
    expect(events).toEqual(["crashed", "recovered"]);
    const actions = [2, 3, 4, 5].map(() => handler.closed());
    expect(actions.map((a: any) => [a.action, a.handled])).toEqual([
      [2, true],
      [2, true],
      [2, true],
      [1, true],
    ]);
    expect(events.filter((e) => e === "crashed")).toHaveLength(4);
    expect(gaveUp).toHaveLength(1);
    expect(gaveUp[0]).toMatch(/stopped 5 times in 3 minutes/);
    expect(handler.error(new Error("x"), undefined, 1)).toEqual({ action: 1, handled: true });
  });

  it("clears the diagnostics the client keeps across a restart", () => {
    const { client, lc } = build();
    client.clearDiagnostics!();
    expect(lc.diagnostics.cleared).toBe(1);
  });

  it("passes the cancellation token to sendRequest and forwards progress reports but not the end", async () => {
    const { client, lc } = build();
    const token = new vscode.CancellationTokenSource().token;
    await client.sendRequest("workspace/executeCommand", { command: "c" }, token as any);
    expect(lc.sent[0]).toEqual(["workspace/executeCommand", { command: "c" }, token]);
    const seen: unknown[] = [];
    client.onWorkDoneProgress!("tok-1", (m, p) => seen.push([m, p]));
    const { token: t, handler } = lc.progress[0];
    expect(t).toBe("tok-1");
    handler({ kind: "begin", title: "Requesting edit", message: "2 backends", percentage: 0 });
    handler({ kind: "report", message: "qwen done", percentage: 50 });
    handler({ kind: "end" });
    expect(seen).toEqual([
      ["2 backends", 0],
      ["qwen done", 50],
    ]);
  });
});
