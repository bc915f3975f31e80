// Where is the language server? Settings first, then the Python extension's active environment,
// then `edit-fidelity` on PATH. Pure logic over injected file-system and process probes, so every
// branch is unit-tested.
import * as path from "path";
import type { LaunchSettings } from "./config";

export interface ServerCommand {
  command: string;
  args: string[];
  /** Human-readable origin, for the output channel and the status tooltip. */
  source: string;
}

export interface Probes {
  platform: NodeJS.Platform;
  env: Record<string, string | undefined>;
  /** A regular file that may be executed. */
  isExecutable(file: string): Promise<boolean>;
  /** Does this interpreter have the `edit-fidelity` distribution (module server.cli) installed? */
  pythonHasServer(python: string): Promise<boolean>;
  /** The Python extension's active interpreter for the workspace, if that extension is installed. */
  activeInterpreter(): Promise<string | undefined>;
}

export type Discovery = { ok: true; server: ServerCommand; tried: string[] } | { ok: false; tried: string[]; problem: string };

const SCRIPT = "edit-fidelity";

function scriptNames(platform: NodeJS.Platform): string[] {
  return platform === "win32" ? [`${SCRIPT}.exe`, `${SCRIPT}.cmd`, `${SCRIPT}.bat`] : [SCRIPT];
}

function pathApi(platform: NodeJS.Platform): path.PlatformPath {
  return platform === "win32" ? path.win32 : path.posix;
}

/** The console script installed next to an interpreter (venv/bin, Scripts/, conda's Scripts). */
async function scriptNextTo(python: string, probes: Probes): Promise<string | undefined> {
  const p = pathApi(probes.platform);
  const dir = p.dirname(python);
  const dirs = probes.platform === "win32" ? [dir, p.join(dir, "Scripts")] : [dir];
  for (const d of dirs) {
    for (const name of scriptNames(probes.platform)) {
      const candidate = p.join(d, name);
      if (await probes.isExecutable(candidate)) return candidate;
    }
  }
  return undefined;
}

async function fromInterpreter(
  python: string,
  origin: string,
  extraArgs: string[],
  probes: Probes,
  tried: string[],
): Promise<ServerCommand | undefined> {
  const script = await scriptNextTo(python, probes);
  if (script) return { command: script, args: ["serve", ...extraArgs], source: `${origin} (${script})` };
  if (await probes.pythonHasServer(python)) {
    return { command: python, args: ["-m", "server.cli", "serve", ...extraArgs], source: `${origin} (${python} -m server.cli)` };
  }
  tried.push(`${origin}: ${python} (edit-fidelity is not installed there)`);
  return undefined;
}

export async function onPath(probes: Probes): Promise<string | undefined> {
  const p = pathApi(probes.platform);
  const pathVar = probes.env.PATH ?? probes.env.Path ?? "";
  for (const dir of pathVar.split(p.delimiter)) {
    if (!dir) continue;
    for (const name of scriptNames(probes.platform)) {
      const candidate = p.join(dir, name);
      if (await probes.isExecutable(candidate)) return candidate;
    }
  }
  return undefined;
}

export async function discoverServer(settings: LaunchSettings, probes: Probes): Promise<Discovery> {
  const tried: string[] = [];
  const extra = settings.extraArgs;

  if (settings.path) {
    // An explicit path is a promise the user made: no silent fallback if it is wrong.
    if (await probes.isExecutable(settings.path)) {
      return { ok: true, server: { command: settings.path, args: ["serve", ...extra], source: "setting editFidelity.server.path" }, tried };
    }
    tried.push(`editFidelity.server.path: ${settings.path} (not an executable file)`);
    return { ok: false, tried, problem: `editFidelity.server.path points to "${settings.path}", which is not an executable file.` };
  }

  if (settings.pythonPath) {
    const found = await fromInterpreter(settings.pythonPath, "setting editFidelity.server.pythonPath", extra, probes, tried);
    if (found) return { ok: true, server: found, tried };
    return {
      ok: false,
      tried,
      problem: `The interpreter in editFidelity.server.pythonPath ("${settings.pythonPath}") does not have edit-fidelity installed.`,
    };
  }

  let active: string | undefined;
  try {
    active = await probes.activeInterpreter();
  } catch {
    active = undefined;
  }
  if (active) {
    const found = await fromInterpreter(active, "Python extension's active interpreter", extra, probes, tried);
    if (found) return { ok: true, server: found, tried };
  } else {
    tried.push("Python extension: not installed or no active interpreter");
  }

  const script = await onPath(probes);
  if (script) return { ok: true, server: { command: script, args: ["serve", ...extra], source: `PATH (${script})` }, tried };
  tried.push("PATH: no edit-fidelity executable");
  return { ok: false, tried, problem: "The Edit Fidelity language server (edit-fidelity) was not found." };
}
