// File-system and process probes for server discovery, on the real machine.
import { execFile } from "child_process";
import { promises as fs, constants } from "fs";
import * as vscode from "vscode";
import type { Probes } from "./discovery";

const CHECK = [
  "import importlib.util, sys",
  "sys.exit(0 if importlib.util.find_spec('server') and importlib.util.find_spec('server.cli') and importlib.util.find_spec('pygls') else 3)",
].join("\n");

export async function isExecutable(file: string): Promise<boolean> {
  try {
    const st = await fs.stat(file);
    if (!st.isFile()) return false;
    if (process.platform === "win32") return true;
    await fs.access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function pythonHasServer(python: string): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(python, ["-c", CHECK], { timeout: 10000, windowsHide: true }, (error) => resolve(!error));
  });
}

/** The Python extension's API, in the two shapes it has had. */
interface PythonApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { path: string } | undefined;
    resolveEnvironment?(env: { path: string } | string): Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
    onDidChangeActiveEnvironmentPath?: vscode.Event<unknown>;
  };
  settings?: {
    getExecutionDetails?(resource?: vscode.Uri): { execCommand?: string[] };
    onDidChangeExecutionDetails?: vscode.Event<unknown>;
  };
}

const PYTHON_EXTENSION = "ms-python.python";

export function hasPythonExtension(): boolean {
  return vscode.extensions.getExtension(PYTHON_EXTENSION) !== undefined;
}

async function pythonApi(): Promise<PythonApi | undefined> {
  const ext = vscode.extensions.getExtension<PythonApi>(PYTHON_EXTENSION);
  if (!ext) return undefined;
  try {
    return ext.isActive ? ext.exports : await ext.activate();
  } catch {
    return undefined;
  }
}

export async function activeInterpreter(): Promise<string | undefined> {
  const api = await pythonApi();
  if (!api) return undefined;
  const resource = vscode.workspace.workspaceFolders?.[0]?.uri;
  const envs = api.environments;
  if (envs) {
    const active = envs.getActiveEnvironmentPath(resource);
    if (active) {
      const resolved = envs.resolveEnvironment ? await envs.resolveEnvironment(active).catch(() => undefined) : undefined;
      const exe = resolved?.executable?.uri?.fsPath;
      if (exe) return exe;
      if (active.path && (await isExecutable(active.path))) return active.path;
    }
  }
  const exec = api.settings?.getExecutionDetails?.(resource)?.execCommand;
  return exec && exec.length === 1 ? exec[0] : undefined;
}

/** Subscribe to interpreter changes of the Python extension (no-op without it). */
export async function onInterpreterChange(listener: () => void): Promise<vscode.Disposable | undefined> {
  const api = await pythonApi();
  const event = api?.environments?.onDidChangeActiveEnvironmentPath ?? api?.settings?.onDidChangeExecutionDetails;
  return event ? event(() => listener()) : undefined;
}

export function realProbes(): Probes {
  return {
    platform: process.platform,
    env: process.env,
    isExecutable,
    pythonHasServer,
    activeInterpreter,
  };
}
