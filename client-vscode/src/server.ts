// The language server's lifecycle: discovery, start, restart on settings or interpreter change,
// one actionable message when there is no server, and the ServerApi used by the command flows.
// The language client itself is created by an injected factory (languageClient.ts in the
// extension, a fake in tests).
import * as vscode from "vscode";
import { SECTION, initializationOptions, launchSettings, mapSettings, needsRestart } from "./config";
import { discoverServer, type Discovery, type Probes, type ServerCommand } from "./discovery";
import { errorText, type ProgressSink, type ServerApi } from "./flows";

/** The part of vscode-languageclient's LanguageClient this module uses. */
export interface ClientLike {
  start(): Promise<void>;
  stop(timeout?: number): Promise<void>;
  sendRequest<R>(method: string, params: unknown, token?: vscode.CancellationToken): Promise<R>;
  isRunning(): boolean;
  /** Drop the diagnostics the server published (the client keeps them across its own restarts). */
  clearDiagnostics?(): void;
  /** Listen to `$/progress` for a work-done token this client created. */
  onWorkDoneProgress?(token: string, handler: ProgressSink): vscode.Disposable;
}

export interface ClientSpec {
  server: ServerCommand;
  initializationOptions: unknown;
  /** Answers `workspace/configuration` for one item (section + optional scope uri). */
  configuration(section: string | undefined, scopeUri: string | undefined): unknown;
  /** Called by the client's error handler when the server exits for good. */
  onGaveUp(message: string): void;
  /** The server exited unexpectedly and the client is starting it again. */
  onCrashed(): void;
  /** The client is connected again after a crash. */
  onRecovered(): void;
  /** A server command ran through VS Code's command system (a code lens or code action). */
  onServerCommand(command: string, args: unknown[], result: unknown): void;
}

export type ClientFactory = (spec: ClientSpec) => ClientLike;

export const INSTALL_HELP = "How to Install";
export const OPEN_SETTINGS = "Open Settings";
export const SELECT_INTERPRETER = "Select Interpreter";
export const SHOW_OUTPUT = "Show Output";
export const CRASHED = "Edit Fidelity: the language server stopped unexpectedly and is being restarted.";

export interface ManagerDeps {
  factory: ClientFactory;
  probes: Probes;
  output: { appendLine(line: string): void; show(preserveFocus?: boolean): void };
  /** Opens the install instructions (the extension README). */
  openInstallHelp(): Thenable<unknown> | Promise<unknown>;
  hasPythonExtension(): boolean;
  /** Called after every (re)start attempt with the new state. */
  onStateChange?(running: boolean): void;
  onServerCommand?(command: string, args: unknown[], result: unknown): void;
}

/** The single, actionable message for "no server". Exported for tests. */
export function notFoundMessage(d: Extract<Discovery, { ok: false }>): string {
  return (
    `Edit Fidelity: ${d.problem} Install it into the Python environment you use ` +
    "(pip install edit-fidelity, or pip install -e . in its repository), then pick that interpreter " +
    'or set "editFidelity.server.path".'
  );
}

export class ServerManager implements ServerApi, vscode.Disposable {
  private client: ClientLike | undefined;
  private starting: Promise<boolean> | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private restartTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  /** Messages already shown for the current settings, so a restart loop never spams. */
  private shown = new Set<string>();
  current: ServerCommand | undefined;
  startCount = 0;

  constructor(private readonly deps: ManagerDeps) {
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (needsRestart((s) => e.affectsConfiguration(s))) {
          this.shown.clear();
          this.scheduleRestart("settings changed");
        }
      }),
    );
  }

  /** Restart after the Python extension's interpreter changed (only matters when it is our source). */
  interpreterChanged(): void {
    const settings = launchSettings(vscode.workspace.getConfiguration(SECTION));
    if (settings.path || settings.pythonPath) return;
    this.shown.clear();
    this.scheduleRestart("interpreter changed");
  }

  scheduleRestart(why: string, delayMs = 300): void {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      void this.restart(why);
    }, delayMs);
  }

  isRunning(): boolean {
    return this.client !== undefined && this.client.isRunning();
  }

  /** Serialize start/stop so that two quick setting changes never race. */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => undefined);
    return next;
  }

  start(): Promise<boolean> {
    if (this.isRunning()) return Promise.resolve(true);
    if (!this.starting) {
      this.starting = this.serial(() => this.doStart()).finally(() => {
        this.starting = undefined;
      });
    }
    return this.starting;
  }

  restart(why = "restart requested"): Promise<boolean> {
    // Asked for explicitly (or settings changed): say again why it cannot start, if it cannot.
    if (why === "restart requested") this.shown.clear();
    return this.serial(async () => {
      this.deps.output.appendLine(`[edit-fidelity] restarting the server: ${why}`);
      await this.doStop();
      return this.doStart();
    });
  }

  stop(): Promise<void> {
    return this.serial(() => this.doStop());
  }

  private async doStop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      try {
        await client.stop(2000);
      } catch (e) {
        this.deps.output.appendLine(`[edit-fidelity] stopping the server: ${errorText(e)}`);
      }
    }
    this.deps.onStateChange?.(false);
  }

  private async doStart(): Promise<boolean> {
    if (this.isRunning()) return true;
    const cfg = vscode.workspace.getConfiguration(SECTION);
    const discovery = await discoverServer(launchSettings(cfg), this.deps.probes);
    for (const line of discovery.tried) this.deps.output.appendLine(`[edit-fidelity] looked at ${line}`);
    if (!discovery.ok) {
      await this.tellNotFound(discovery);
      this.deps.onStateChange?.(false);
      return false;
    }
    const { problems } = mapSettings(cfg);
    if (problems.length) this.tellOnce(`Edit Fidelity settings: ${problems.join(" ")}`, "warning");
    this.current = discovery.server;
    this.deps.output.appendLine(
      `[edit-fidelity] starting ${discovery.server.command} ${discovery.server.args.join(" ")} (from ${discovery.server.source})`,
    );
    const client = this.deps.factory({
      server: discovery.server,
      initializationOptions: initializationOptions(cfg),
      configuration: (section, scopeUri) => this.configurationFor(section, scopeUri),
      onGaveUp: (message) => {
        this.deps.onStateChange?.(false);
        void this.tellOnce(message, "error", SHOW_OUTPUT);
      },
      onCrashed: () => this.crashed(client),
      onRecovered: () => this.recovered(client),
      onServerCommand: (command, args, result) => this.deps.onServerCommand?.(command, args, result),
    });
    this.client = client;
    this.startCount++;
    try {
      await client.start();
    } catch (e) {
      this.client = undefined;
      this.deps.output.appendLine(`[edit-fidelity] the server did not start: ${errorText(e)}`);
      try {
        await client.stop(1000);
      } catch {
        /* already down */
      }
      this.tellOnce(
        `Edit Fidelity: the language server (${discovery.server.command}) did not start: ${errorText(e)}. See the output for details.`,
        "error",
        SHOW_OUTPUT,
        OPEN_SETTINGS,
      );
      this.deps.onStateChange?.(false);
      return false;
    }
    this.deps.onStateChange?.(true);
    return true;
  }

  /** The server died under the client, which restarts it: its proposals are gone; say so, once per crash. */
  private crashed(client: ClientLike): void {
    if (client !== this.client) return;
    // what the dead server published belongs to proposals and observations that are gone with it
    client.clearDiagnostics?.();
    this.deps.onStateChange?.(false);
    const message = `${CRASHED} The pending proposals are gone. See the output for its last messages.`;
    this.deps.output.appendLine(`[edit-fidelity] ${message}`);
    void vscode.window.showWarningMessage(message, SHOW_OUTPUT).then((choice) => {
      if (choice === SHOW_OUTPUT) this.deps.output.show(true);
    });
  }

  private recovered(client: ClientLike): void {
    if (client !== this.client) return;
    this.deps.output.appendLine("[edit-fidelity] the language server is running again");
    this.deps.onStateChange?.(true);
    vscode.window.setStatusBarMessage("Edit Fidelity: the language server is running again", 8000);
  }

  /** What the server gets for `workspace/configuration`: the mapped settings for section editFidelity. */
  configurationFor(section: string | undefined, scopeUri: string | undefined): unknown {
    const scope = scopeUri ? vscode.Uri.parse(scopeUri) : undefined;
    if (section === SECTION || section === undefined) {
      const mapped = mapSettings(vscode.workspace.getConfiguration(SECTION, scope)).config;
      return section === undefined ? { [SECTION]: mapped } : mapped;
    }
    if (section.startsWith(`${SECTION}.`)) {
      const mapped = mapSettings(vscode.workspace.getConfiguration(SECTION, scope)).config as unknown as Record<string, unknown>;
      return section
        .slice(SECTION.length + 1)
        .split(".")
        .reduce<unknown>((o, k) => (o && typeof o === "object" ? (o as Record<string, unknown>)[k] : undefined), mapped);
    }
    return vscode.workspace.getConfiguration(undefined, scope).get(section) ?? null;
  }

  private async tellNotFound(d: Extract<Discovery, { ok: false }>): Promise<void> {
    const actions = [INSTALL_HELP, OPEN_SETTINGS];
    if (this.deps.hasPythonExtension()) actions.push(SELECT_INTERPRETER);
    await this.tellOnce(notFoundMessage(d), "error", ...actions);
  }

  private async tellOnce(message: string, level: "error" | "warning", ...actions: string[]): Promise<void> {
    if (this.shown.has(message)) return;
    this.shown.add(message);
    this.deps.output.appendLine(`[edit-fidelity] ${message}`);
    const show = level === "error" ? vscode.window.showErrorMessage : vscode.window.showWarningMessage;
    const choice = await show(message, ...actions);
    if (choice === INSTALL_HELP) await this.deps.openInstallHelp();
    else if (choice === OPEN_SETTINGS) await vscode.commands.executeCommand("workbench.action.openSettings", "editFidelity.server");
    else if (choice === SELECT_INTERPRETER) await vscode.commands.executeCommand("python.setInterpreter");
    else if (choice === SHOW_OUTPUT) this.deps.output.show(true);
  }

  // ---- ServerApi ------------------------------------------------------------------------------

  async ready(): Promise<boolean> {
    if (this.isRunning()) return true;
    // The user asked for something: show the reason again even if it was shown at activation.
    this.shown.clear();
    return this.start();
  }

  private progressTokens = 0;

  async executeCommand<T>(command: string, arg: unknown, token?: vscode.CancellationToken, onProgress?: ProgressSink): Promise<T> {
    const client = this.client;
    if (!client || !client.isRunning()) throw new Error("the language server is not running");
    const params: { command: string; arguments: unknown[]; workDoneToken?: string } = { command, arguments: [arg] };
    let sub: vscode.Disposable | undefined;
    if (onProgress && client.onWorkDoneProgress) {
      // Our own token: the server reports into our notification instead of opening a second one.
      params.workDoneToken = `edit-fidelity-client/${++this.progressTokens}`;
      sub = client.onWorkDoneProgress(params.workDoneToken, onProgress);
    }
    try {
      // sendRequest with a token: cancelling it sends $/cancelRequest for this request.
      return await client.sendRequest<T>("workspace/executeCommand", params, token);
    } finally {
      sub?.dispose();
    }
  }

  dispose(): void {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    for (const d of this.disposables) d.dispose();
    void this.stop();
  }
}
