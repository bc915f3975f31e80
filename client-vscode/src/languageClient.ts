// The real client factory: vscode-languageclient over stdio. Not unit-tested (it needs VS Code);
// everything it decides is in server.ts and config.ts.
import * as vscode from "vscode";
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  State,
  WorkDoneProgress,
  type CloseHandlerResult,
  type ErrorHandler,
  type ErrorHandlerResult,
  type LanguageClientOptions,
  type ServerOptions,
} from "vscode-languageclient/node";
import type { ClientFactory, ClientLike, ClientSpec } from "./server";

const MAX_RESTARTS = 4;
const WINDOW_MS = 3 * 60 * 1000;

class QuietErrorHandler implements ErrorHandler {
  private restarts: number[] = [];
  /** The server exited and a restart was asked for; cleared once the client runs again. */
  crashed = false;
  constructor(private readonly spec: ClientSpec) {}

  error(): ErrorHandlerResult {
    return { action: ErrorAction.Continue, handled: true };
  }

  closed(): CloseHandlerResult {
    const now = Date.now();
    this.restarts = this.restarts.filter((t) => now - t < WINDOW_MS);
    this.restarts.push(now);
    if (this.restarts.length > MAX_RESTARTS) {
      this.spec.onGaveUp(
        `Edit Fidelity: the language server stopped ${this.restarts.length} times in 3 minutes and will not be restarted. ` +
          "See the output for its last messages; run \"Edit Fidelity: Restart Language Server\" after fixing the cause.",
      );
      return { action: CloseAction.DoNotRestart, handled: true };
    }
    this.crashed = true;
    this.spec.onCrashed();
    return { action: CloseAction.Restart, handled: true };
  }
}

export function languageClientFactory(output: vscode.OutputChannel, traceOutput: vscode.OutputChannel): ClientFactory {
  return (spec: ClientSpec): ClientLike => {
    const errorHandler = new QuietErrorHandler(spec);
    const serverOptions: ServerOptions = {
      command: spec.server.command,
      args: spec.server.args,
      options: { env: { ...process.env, PYTHONUNBUFFERED: "1" } },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { scheme: "file", language: "python" },
        { scheme: "untitled", language: "python" },
      ],
      initializationOptions: spec.initializationOptions,
      outputChannel: output,
      traceOutputChannel: traceOutput,
      revealOutputChannelOn: 4 /* RevealOutputChannelOn.Never */,
      errorHandler,
      initializationFailedHandler: (error) => {
        output.appendLine(`[edit-fidelity] initialize failed: ${error instanceof Error ? error.message : String(error)}`);
        return false;
      },
      middleware: {
        // Code lenses and code actions run server commands through VS Code; tell the flows.
        executeCommand: async (command, args, next) => {
          const result = await next(command, args);
          spec.onServerCommand(command, args, result);
          return result;
        },
        workspace: {
          configuration: (params, _token, _next) =>
            params.items.map((item) => spec.configuration(item.section, item.scopeUri)),
        },
      },
    };
    const client = new LanguageClient("editFidelity", "Edit Fidelity", serverOptions, clientOptions);
    // closed() runs only for an exit nobody asked for (never for stop()); the restart it asks for
    // ends in Running again
    client.onDidChangeState((e) => {
      if (errorHandler.crashed && e.newState === State.Running) {
        errorHandler.crashed = false;
        spec.onRecovered();
      }
    });
    return {
      start: () => client.start(),
      stop: (timeout?: number) => client.stop(timeout),
      sendRequest: <R>(method: string, params: unknown, token?: vscode.CancellationToken) =>
        token ? client.sendRequest<R>(method, params, token) : client.sendRequest<R>(method, params),
      isRunning: () => client.state === State.Running || client.state === State.Starting,
      clearDiagnostics: () => client.diagnostics?.clear(),
      onWorkDoneProgress: (token, handler) =>
        client.onProgress(WorkDoneProgress.type, token, (value) => {
          if (value.kind === "end") return;
          handler(value.message, value.percentage);
        }),
    };
  };
}
