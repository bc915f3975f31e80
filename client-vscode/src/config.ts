// Settings (contributes.configuration) -> the `editFidelity` object the server receives, both as
// initialization options and as the answer to `workspace/configuration`. Pure: no `vscode` import,
// so it is unit-tested directly.

import {
  BACKEND_NAME,
  BACKEND_RANGES,
  EDITOR_STYLES,
  ENV_NAME,
  ENVIRONMENT_NAME,
  NECESSITY_INCLUDE,
  NECESSITY_RANGES,
  SANDBOXES,
  SECTION,
  SEVERITY_DEFAULTS,
  SERVER_SETTINGS,
  SEVERITY_LEVELS,
  THRESHOLD_RANGES,
  type BackendEntry,
  type NecessitySettings,
  type NumberRange,
} from "./protocol.generated";

// The names, defaults and ranges are the server's (server/protocol, generated into protocol.generated.ts).
export { NECESSITY_INCLUDE, SANDBOXES, SECTION, SEVERITY_DEFAULTS, SEVERITY_LEVELS };

/** The subset of vscode.WorkspaceConfiguration this module needs. */
export interface ConfigReader {
  get<T>(key: string): T | undefined;
}

/** The prompt styles the editor offers. */
export type Style = (typeof EDITOR_STYLES)[number];

/** A backend entry as the extension forwards it: the server's BackendEntry, without nulls. */
export type BackendConfig = { [K in keyof BackendEntry]?: Exclude<BackendEntry[K], null> } & Pick<BackendEntry, "name"> & {
  baseUrl: string;
  model: string;
  style?: Style;
};

/** Every threshold, as the server's settings take them. */
export type Thresholds = Record<keyof typeof THRESHOLD_RANGES, number>;

/** LSP severities by name, as the server's `severity` setting takes them. */
export type SeverityLevel = (typeof SEVERITY_LEVELS)[number];

export type Severity = Record<keyof typeof SEVERITY_DEFAULTS, SeverityLevel>;

/** Where the server runs the test command; `local` and `none` are the same level (no isolation). */
export type Sandbox = (typeof SANDBOXES)[number];

/** editFidelity.analyzeNecessity: its runs of `testCommand` in the sandbox (every field set). */
export type Necessity = Required<Omit<NecessitySettings, "environment">> & { environment: string | null };

/** The server's settings object (server/protocol/settings.py SettingsWire), complete. */
export interface ServerConfig {
  backends: BackendConfig[];
  defaultStyle: Style;
  observeChanges: boolean;
  thresholds: Thresholds;
  severity: Severity;
  sandbox: Sandbox;
  /** The workspace's tests, run in the sandbox only: a string (split by the server, no shell) or an argv. */
  testCommand: string | string[] | null;
  necessity: Necessity;
}

export interface LaunchSettings {
  path: string;
  pythonPath: string;
  extraArgs: string[];
}

export interface MappedConfig {
  config: ServerConfig;
  /** Problems found in the settings, one sentence each, for a single warning. */
  problems: string[];
}

const SECRET_KEYS = new Set(["apikey", "api_key", "key", "token", "secret", "password", "authorization"]);
const STYLES: readonly Style[] = EDITOR_STYLES;
/** Arguments a shell would treat as operators; no shell runs the test command. */
const SHELL_OPERATORS = new Set(["&&", "||", "|", ";", "&", ">", ">>", "<", "2>", "2>&1"]);

function optNum(value: unknown, min: number, max = Infinity, integer = false): number | undefined {
  if (typeof value !== "number" || !Number.isFinite(value) || value < min || value > max) return undefined;
  if (integer && !Number.isInteger(value)) return undefined;
  return value;
}

function str(value: unknown): string {
  return typeof value === "string" ? value.trim() : "";
}

/** Validate one backend entry; secrets are dropped and reported, never forwarded. */
export function mapBackend(raw: unknown, index: number, problems: string[]): BackendConfig | undefined {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    problems.push(`backends[${index}] is not an object.`);
    return undefined;
  }
  const entry = raw as Record<string, unknown>;
  const label = str(entry.name) || `backends[${index}]`;
  for (const key of Object.keys(entry)) {
    if (SECRET_KEYS.has(key.toLowerCase())) {
      problems.push(
        `${label}: "${key}" was ignored; keys never go into settings. Put the key in an environment variable and name it in "apiKeyEnv".`,
      );
    }
  }
  const name = str(entry.name);
  const baseUrl = str(entry.baseUrl);
  const model = str(entry.model);
  const missing = [!name && "name", !baseUrl && "baseUrl", !model && "model"].filter(Boolean);
  if (missing.length) {
    problems.push(`${label} was skipped: ${missing.join(", ")} missing.`);
    return undefined;
  }
  if (!/^https?:\/\//i.test(baseUrl)) {
    problems.push(`${name} was skipped: baseUrl must start with http:// or https://.`);
    return undefined;
  }
  if (!BACKEND_NAME.test(name)) {
    problems.push(`"${name}" was skipped: a backend name has at most 64 letters, digits or . : @ / + - _.`);
    return undefined;
  }
  const backend: BackendConfig = { name, baseUrl: baseUrl.replace(/\/+$/, ""), model };
  const apiKeyEnv = str(entry.apiKeyEnv);
  if (apiKeyEnv) {
    if (ENV_NAME.test(apiKeyEnv)) backend.apiKeyEnv = apiKeyEnv;
    else
      problems.push(
        `${name}: apiKeyEnv must be the name of an environment variable (like OPENAI_API_KEY), not the key itself; it was ignored.`,
      );
  }
  if (typeof entry.style === "string" && STYLES.includes(entry.style as Style)) backend.style = entry.style as Style;
  // Numbers outside the server's range are left out (the server's default applies).
  for (const [key, [integer, min, max]] of Object.entries(BACKEND_RANGES) as [keyof typeof BACKEND_RANGES, NumberRange][]) {
    const value = optNum(entry[key], min, max, integer);
    if (value !== undefined) backend[key] = value;
  }
  return backend;
}

/** Numeric settings `prefix.key` within their ranges; a bad value keeps the fallback, with a problem. */
function mapRanges<K extends string>(cfg: ConfigReader, prefix: string, table: Record<K, NumberRange>, problems: string[]): Record<K, number> {
  const out = {} as Record<K, number>;
  for (const [key, [integer, min, max, def]] of Object.entries(table) as [K, NumberRange][]) {
    const fallback = def as number; // every threshold and necessity number has a default
    const raw = cfg.get<unknown>(`${prefix}.${key}`);
    const value = optNum(raw, min, max, integer);
    if (value === undefined && raw !== undefined && raw !== null) {
      problems.push(`editFidelity.${prefix}.${key} must be ${integer ? "an integer" : "a number"} between ${min} and ${max}; using ${fallback}.`);
    }
    out[key] = value ?? fallback;
  }
  return out;
}

function mapSandbox(raw: unknown, problems: string[]): Sandbox {
  const value = typeof raw === "string" ? raw.trim() : raw;
  if (value === undefined || value === null || value === "") return "auto";
  if (typeof value === "string" && SANDBOXES.includes(value as Sandbox)) return value as Sandbox;
  problems.push(`editFidelity.sandbox must be one of ${SANDBOXES.join(", ")}; using auto.`);
  return "auto";
}

/**
 * The words of a command line as the server splits it (Python's shlex.split, POSIX rules): each with
 * `bare` true when no part of it was quoted or escaped. A string when the line does not split.
 */
export function splitCommand(line: string): { word: string; bare: boolean }[] | string {
  const words: { word: string; bare: boolean }[] = [];
  let word: string | undefined;
  let bare = true;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === " " || c === "\t" || c === "\r" || c === "\n") {
      if (word !== undefined) words.push({ word, bare });
      word = undefined;
      bare = true;
      continue;
    }
    word ??= "";
    if (c === "\\") {
      if (i + 1 >= line.length) return "it ends with a lone backslash";
      word += line[++i];
      bare = false;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) return "a single quote is not closed";
      word += line.slice(i + 1, end);
      bare = false;
      i = end;
    } else if (c === '"') {
      // Within double quotes a backslash escapes only `\` and `"`; before anything else it stays.
      bare = false;
      for (i++; i < line.length && line[i] !== '"'; i++) {
        if (line[i] === "\\" && (line[i + 1] === "\\" || line[i + 1] === '"')) i++;
        word += line[i];
      }
      if (i >= line.length) return "a double quote is not closed";
    } else word += c;
  }
  if (word !== undefined) words.push({ word, bare });
  return words;
}

/**
 * `testCommand`: a string (the server splits it like a shell would; no shell runs it) or an argv.
 * Blank or null: no command. Anything else is dropped with a problem.
 */
export function mapTestCommand(raw: unknown, problems: string[]): string | string[] | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw === "string") {
    const command = raw.trim();
    if (!command) return null;
    const words = splitCommand(command);
    if (typeof words === "string") {
      problems.push(`editFidelity.testCommand does not split into arguments: ${words}; it was ignored.`);
      return null;
    }
    const operator = words.find((w) => w.bare && SHELL_OPERATORS.has(w.word));
    if (operator) {
      problems.push(`editFidelity.testCommand is not run by a shell: "${operator.word}" reaches the program as an argument.`);
    }
    return command;
  }
  if (Array.isArray(raw) && raw.length && raw.every((a) => typeof a === "string") && raw[0].trim()) {
    return [...(raw as string[])];
  }
  problems.push(
    Array.isArray(raw) && raw.every((a) => typeof a === "string")
      ? "editFidelity.testCommand is an empty command; it was ignored."
      : "editFidelity.testCommand must be a command line or an array of strings (the program, then its arguments); it was ignored.",
  );
  return null;
}

/** `severity.<kind>`: one of SEVERITY_LEVELS; anything else keeps the default, with a problem. */
function mapSeverity(cfg: ConfigReader, problems: string[]): Severity {
  const out = { ...SEVERITY_DEFAULTS } as Severity;
  for (const kind of Object.keys(SEVERITY_DEFAULTS) as (keyof Severity)[]) {
    const raw = cfg.get<unknown>(`severity.${kind}`);
    if (raw === undefined || raw === null) continue;
    if (typeof raw === "string" && SEVERITY_LEVELS.includes(raw as SeverityLevel)) out[kind] = raw as SeverityLevel;
    else problems.push(`editFidelity.severity.${kind} must be one of ${SEVERITY_LEVELS.join(", ")}; using ${SEVERITY_DEFAULTS[kind]}.`);
  }
  return out;
}

function mapNecessity(cfg: ConfigReader, problems: string[]): Necessity {
  const numbers = mapRanges(cfg, "necessity", NECESSITY_RANGES, problems);
  const rawEnv = cfg.get<unknown>("necessity.environment");
  let environment: string | null = null;
  if (typeof rawEnv === "string" && ENVIRONMENT_NAME.test(rawEnv.trim())) environment = rawEnv.trim();
  else if (rawEnv !== undefined && rawEnv !== null && rawEnv !== "") {
    problems.push("editFidelity.necessity.environment must be the name of a prepared sandbox environment (like canitedit); using none.");
  }
  const rawInclude = cfg.get<unknown>("necessity.include");
  let include = [...NECESSITY_INCLUDE];
  if (Array.isArray(rawInclude) && rawInclude.length && rawInclude.every((p) => typeof p === "string" && p.trim())) {
    include = [...(rawInclude as string[])];
  } else if (rawInclude !== undefined && rawInclude !== null) {
    problems.push(`editFidelity.necessity.include must be a non-empty list of file patterns; using ${NECESSITY_INCLUDE.join(", ")}.`);
  }
  const rawPackages = cfg.get<unknown>("necessity.packages");
  let packages: string[] = [];
  if (Array.isArray(rawPackages) && rawPackages.every((p) => typeof p === "string" && p.trim() && !p.trim().startsWith("-"))) {
    packages = (rawPackages as string[]).map((p) => p.trim());
  } else if (rawPackages !== undefined && rawPackages !== null) {
    problems.push('editFidelity.necessity.packages must be a list of pip requirements like "numpy==2.4.6" (no pip options); using none.');
  }
  return { ...numbers, environment, packages, include };
}

export function mapSettings(cfg: ConfigReader): MappedConfig {
  const problems: string[] = [];
  const rawBackends = cfg.get<unknown>("backends");
  const backends: BackendConfig[] = [];
  const seen = new Set<string>();
  if (rawBackends !== undefined && !Array.isArray(rawBackends)) {
    problems.push("editFidelity.backends must be a list.");
  }
  (Array.isArray(rawBackends) ? rawBackends : []).forEach((raw, i) => {
    const backend = mapBackend(raw, i, problems);
    if (!backend) return;
    if (seen.has(backend.name)) {
      problems.push(`Backend name "${backend.name}" is used twice; the second one was skipped.`);
      return;
    }
    seen.add(backend.name);
    backends.push(backend);
  });
  const style = cfg.get<string>("defaultStyle");
  const thresholds: Thresholds = mapRanges(cfg, "thresholds", THRESHOLD_RANGES, problems);
  const config: ServerConfig = {
    backends,
    defaultStyle: STYLES.includes(style as Style) ? (style as Style) : "minimal",
    observeChanges: cfg.get<boolean>("observeChanges") !== false,
    thresholds,
    severity: mapSeverity(cfg, problems),
    sandbox: mapSandbox(cfg.get<unknown>("sandbox"), problems),
    testCommand: mapTestCommand(cfg.get<unknown>("testCommand"), problems),
    necessity: mapNecessity(cfg, problems),
  };
  return { config, problems };
}

export function launchSettings(cfg: ConfigReader): LaunchSettings {
  const extra = cfg.get<unknown>("server.extraArgs");
  return {
    path: str(cfg.get("server.path")),
    pythonPath: str(cfg.get("server.pythonPath")),
    extraArgs: Array.isArray(extra) ? extra.filter((a): a is string => typeof a === "string") : [],
  };
}

/** Initialization options sent with `initialize`. */
export function initializationOptions(cfg: ConfigReader): { editFidelity: ServerConfig } {
  return { [SECTION]: mapSettings(cfg).config } as { editFidelity: ServerConfig };
}

/** Settings that only the client uses: changing them never restarts the server. */
const CLIENT_ONLY = ["editFidelity.statusBar", "editFidelity.trace"];

/**
 * Should a configuration change restart the server? `affects` is
 * ConfigurationChangeEvent.affectsConfiguration.
 */
export function needsRestart(affects: (section: string) => boolean): boolean {
  if (!affects(SECTION)) return false;
  const keys = ["editFidelity.server", ...SERVER_SETTINGS.map((k) => `${SECTION}.${k}`)];
  if (keys.some((k) => affects(k))) return true;
  // A change inside the section that is none of the known keys nor client-only: restart to be safe.
  return !CLIENT_ONLY.some((k) => affects(k));
}
