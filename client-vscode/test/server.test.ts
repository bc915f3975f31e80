import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Probes } from "../src/discovery";
import { ServerManager, type ClientLike, type ClientSpec } from "../src/server";
import * as vscode from "./vscode.fake";

class FakeClient implements ClientLike {
  running = false;
  stopped = 0;
  diagnosticsCleared = 0;
  clearDiagnostics(): void {
    this.diagnosticsCleared++;
  }
  requests: { method: string; params: any; token: any }[] = [];
  progress = new Map<string, (m: string | undefined, p: number | undefined) => void>();
  onWorkDoneProgress(token: string, handler: (m: string | undefined, p: number | undefined) => void) {
    this.progress.set(token, handler);
    return new vscode.Disposable(() => this.progress.delete(token));
  }
  constructor(
    readonly spec: ClientSpec,
    private readonly failWith?: Error,
  ) {}
  async start(): Promise<void> {
    if (this.failWith) throw this.failWith;
    this.running = true;
  }
  async stop(): Promise<void> {
    this.running = false;
    this.stopped++;
  }
  async sendRequest<R>(method: string, params: any, token?: unknown): Promise<R> {
    this.requests.push({ method, params, token });
    if (params.workDoneToken) this.progress.get(params.workDoneToken)?.("half way", 50);
    return { ok: true } as R;
  }
  isRunning(): boolean {
    return this.running;
  }
}

let clients: FakeClient[];
let failNext: Error | undefined;
let executables: string[];
let active: string | undefined;
let output: { lines: string[]; appendLine(l: string): void; show(): void };
let installHelp: number;

function manager(pythonExtension = false): ServerManager {
  const probes: Probes = {
    platform: "linux",
    env: { PATH: "/usr/bin" },
    isExecutable: async (f) => executables.includes(f),
    pythonHasServer: async () => false,
    activeInterpreter: async () => active,
  };
  return new ServerManager({
    factory: (spec) => {
      const c = new FakeClient(spec, failNext);
      failNext = undefined;
      clients.push(c);
      return c;
    },
    probes,
    output,
    openInstallHelp: async () => {
      installHelp++;
    },
    hasPythonExtension: () => pythonExtension,
  });
}

beforeEach(() => {
  vscode.resetFake();
  clients = [];
  failNext = undefined;
  executables = ["/usr/bin/edit-fidelity"];
  active = undefined;
  installHelp = 0;
  output = { lines: [], appendLine: (l) => output.lines.push(l), show: () => undefined };
});

afterEach(() => vi.useRealTimers());

describe("starting the server", () => {
  it("starts `edit-fidelity serve` with the settings as initialization options", async () => {
    vscode.settings["editFidelity.backends"] = [{ name: "local", baseUrl: "http://127.0.0.1:8000/v1", model: "m", apiKeyEnv: "K" }];
    const m = manager();
    expect(await m.start()).toBe(true);
    expect(clients).toHaveLength(1);
    expect(clients[0].spec.server).toMatchObject({ command: "/usr/bin/edit-fidelity", args: ["serve"] });
    expect(clients[0].spec.initializationOptions).toMatchObject({
      editFidelity: { backends: [{ name: "local", baseUrl: "http://127.0.0.1:8000/v1", model: "m", apiKeyEnv: "K" }], defaultStyle: "minimal" },
    });
    expect(vscode.ui.messages).toEqual([]);
    // A second start is a no-op while running.
    expect(await m.start()).toBe(true);
    expect(clients).toHaveLength(1);
  });

  it("answers workspace/configuration with the mapped settings", async () => {
    vscode.settings["editFidelity.thresholds.complexityError"] = 0.5;
    vscode.settings["editFidelity.backends"] = [{ name: "x", baseUrl: "http://h/v1", model: "m", apiKey: "secret!" }];
    const m = manager();
    await m.start();
    const cfg = clients[0].spec.configuration("editFidelity", "file:///w") as any;
    expect(cfg.thresholds.complexityError).toBe(0.5);
    expect(JSON.stringify(cfg)).not.toContain("secret!");
    expect(clients[0].spec.configuration("editFidelity.thresholds", undefined)).toMatchObject({ complexityError: 0.5, debounceMs: 300 });
    expect(clients[0].spec.configuration(undefined, undefined)).toHaveProperty("editFidelity.backends");
    // The settings problem is shown once, as a warning, not as an error.
    expect(vscode.ui.messages.map((x) => x.level)).toEqual(["warning"]);
  });

  it("sends commands as workspace/executeCommand with the caller's cancellation token", async () => {
    const m = manager();
    await m.start();
    const token = new vscode.CancellationTokenSource().token;
    await m.executeCommand("editFidelity.checkChange", { uri: "file:///a.py", baseline: "git" }, token as any);
    expect(clients[0].requests).toEqual([
      {
        method: "workspace/executeCommand",
        params: { command: "editFidelity.checkChange", arguments: [{ uri: "file:///a.py", baseline: "git" }] },
        token,
      },
    ]);
  });

  it("gives the request a work-done token of its own and forwards the server's reports", async () => {
    const m = manager();
    await m.start();
    const seen: unknown[] = [];
    await m.executeCommand("editFidelity.requestEdit", { uri: "u" }, undefined, (msg, pct) => seen.push([msg, pct]));
    const token = clients[0].requests[0].params.workDoneToken;
    expect(token).toMatch(/^edit-fidelity-client\/\d+$/);
    expect(seen).toEqual([["half way", 50]]);
    expect(clients[0].progress.size).toBe(0); // unsubscribed afterwards
  });

  it("reports code-lens commands to the flows", async () => {
    const calls: unknown[] = [];
    const m = new ServerManager({
      factory: (spec) => {
        const c = new FakeClient(spec);
        clients.push(c);
        return c;
      },
      probes: { platform: "linux", env: { PATH: "/usr/bin" }, isExecutable: async () => true, pythonHasServer: async () => false, activeInterpreter: async () => undefined },
      output,
      openInstallHelp: async () => undefined,
      hasPythonExtension: () => false,
      onServerCommand: (...a) => calls.push(a),
    });
    await m.start();
    clients[0].spec.onServerCommand("editFidelity.applyProposal", [{ id: "p" }], { applied: true });
    expect(calls).toEqual([["editFidelity.applyProposal", [{ id: "p" }], { applied: true }]]);
  });
});

describe("no server installed", () => {
  it("shows one actionable error (no stack trace) and never starts a client", async () => {
    executables = [];
    active = "/home/u/.venv/bin/python";
    const m = manager(true);
    expect(await m.start()).toBe(false);
    expect(clients).toHaveLength(0);
    expect(vscode.ui.messages).toHaveLength(1);
    const msg = vscode.ui.messages[0];
    expect(msg.level).toBe("error");
    expect(msg.message).toMatch(/^Edit Fidelity: The Edit Fidelity language server \(edit-fidelity\) was not found\. Install it/);
    expect(msg.message).toContain("pip install edit-fidelity");
    expect(msg.message).not.toMatch(/\n\s+at |Error:/);
    expect(msg.actions).toEqual(["How to Install", "Open Settings", "Select Interpreter"]);
    expect(output.lines.join("\n")).toContain("/home/u/.venv/bin/python (edit-fidelity is not installed there)");
    // Restarts for the same settings do not repeat it...
    await m.restart("again");
    expect(vscode.ui.messages).toHaveLength(1);
    // ...but a command the user runs does.
    expect(await m.ready()).toBe(false);
    expect(vscode.ui.messages).toHaveLength(2);
  });

  it("runs the chosen action", async () => {
    executables = [];
    vscode.ui.onMessage = (_l, _m, actions) => actions[0];
    await manager().start();
    expect(installHelp).toBe(1);
    vscode.resetFake();
    vscode.ui.onMessage = () => "Open Settings";
    await manager().start();
    expect(vscode.ui.calls.find((c) => c.fn === "executeCommand")!.args).toEqual(["workbench.action.openSettings", "editFidelity.server"]);
  });

  it("says which setting is wrong when server.path does not exist", async () => {
    vscode.settings["editFidelity.server.path"] = "/opt/missing/edit-fidelity";
    await manager().start();
    expect(vscode.ui.messages[0].message).toContain('editFidelity.server.path points to "/opt/missing/edit-fidelity"');
  });

  it("reports a server that fails to start as one message with the reason", async () => {
    failNext = new Error("spawn /usr/bin/edit-fidelity EACCES");
    const m = manager();
    expect(await m.start()).toBe(false);
    expect(m.isRunning()).toBe(false);
    expect(vscode.ui.messages).toEqual([
      {
        level: "error",
        message:
          "Edit Fidelity: the language server (/usr/bin/edit-fidelity) did not start: spawn /usr/bin/edit-fidelity EACCES. See the output for details.",
        actions: ["Show Output", "Open Settings"],
      },
    ]);
    await expect(m.executeCommand("editFidelity.requestEdit", {})).rejects.toThrow("not running");
  });
});

describe("restarting", () => {
  it("restarts on a server setting change, with the new interpreter", async () => {
    vi.useFakeTimers();
    const m = manager();
    await m.start();
    executables.push("/proj/.venv/bin/edit-fidelity");
    vscode.changeSettings({ "editFidelity.server.pythonPath": "/proj/.venv/bin/python" });
    await vi.runAllTimersAsync();
    expect(clients).toHaveLength(2);
    expect(clients[0].stopped).toBe(1);
    expect(clients[1].spec.server.command).toBe("/proj/.venv/bin/edit-fidelity");
    expect(m.isRunning()).toBe(true);
  });

  it("restarts once for a burst of backend edits and not at all for the status bar", async () => {
    vi.useFakeTimers();
    const m = manager();
    await m.start();
    vscode.changeSettings({ "editFidelity.statusBar.enabled": false });
    await vi.runAllTimersAsync();
    expect(clients).toHaveLength(1);
    for (const model of ["a", "b", "c"]) vscode.changeSettings({ "editFidelity.backends": [{ name: "n", baseUrl: "http://h/v1", model }] });
    await vi.runAllTimersAsync();
    expect(clients).toHaveLength(2);
    expect((clients[1].spec.initializationOptions as any).editFidelity.backends[0].model).toBe("c");
  });

  it("restarts when the Python extension's interpreter changes, unless a server is configured explicitly", async () => {
    vi.useFakeTimers();
    executables = ["/a/bin/edit-fidelity", "/b/bin/edit-fidelity"];
    active = "/a/bin/python";
    const m = manager(true);
    await m.start();
    expect(clients[0].spec.server.command).toBe("/a/bin/edit-fidelity");
    active = "/b/bin/python";
    m.interpreterChanged();
    await vi.runAllTimersAsync();
    expect(clients[1].spec.server.command).toBe("/b/bin/edit-fidelity");
    vscode.settings["editFidelity.server.path"] = "/a/bin/edit-fidelity";
    m.interpreterChanged();
    await vi.runAllTimersAsync();
    expect(clients).toHaveLength(2);
  });

  it("tells the user when the server crashed and the client restarts it, and when it runs again", async () => {
    const states: boolean[] = [];
    const probes: Probes = {
      platform: "linux",
      env: { PATH: "/usr/bin" },
      isExecutable: async (f) => executables.includes(f),
      pythonHasServer: async () => false,
      activeInterpreter: async () => undefined,
    };
    const m = new ServerManager({
      factory: (spec) => {
        const c = new FakeClient(spec);
        clients.push(c);
        return c;
      },
      probes,
      output,
      openInstallHelp: async () => undefined,
      hasPythonExtension: () => false,
      onStateChange: (up) => states.push(up),
    });
    await m.start();
    expect(states).toEqual([true]);
    clients[0].spec.onCrashed();
    expect(vscode.ui.messages).toHaveLength(1);
    expect(vscode.ui.messages[0]).toMatchObject({ level: "warning", actions: ["Show Output"] });
    expect(vscode.ui.messages[0].message).toContain("stopped unexpectedly and is being restarted");
    expect(states).toEqual([true, false]);
    expect(clients[0].diagnosticsCleared).toBe(1); // the dead server's proposals and observations are gone
    clients[0].spec.onRecovered();
    expect(states).toEqual([true, false, true]);
    expect(vscode.ui.statusMessages.at(-1)).toContain("running again");
    // a second crash is told again (each one loses the pending proposals)
    clients[0].spec.onCrashed();
    expect(vscode.ui.messages).toHaveLength(2);
    // a client that was replaced (a restart) no longer speaks for the server
    await m.restart();
    clients[0].spec.onCrashed();
    expect(vscode.ui.messages).toHaveLength(2);
  });
});
