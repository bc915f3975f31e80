// Settings (contributes.configuration) -> the `editFidelity` object the server receives, both as
// initialization options and as the answer to `workspace/configuration`. Pure: no `vscode` import,
// so it is unit-tested directly.

export const SECTION = "editFidelity";

/** The subset of vscode.WorkspaceConfiguration this module needs. */
export interface ConfigReader {
  get<T>(key: string): T | undefined;
}

export type Style = "generic" | "minimal";

export interface BackendConfig {
  name: string;
  baseUrl: string;
  model: string;
  apiKeyEnv?: string;
  style?: Style;
  temperature?: number;
  maxTokens?: number;
  timeoutS?: number;
  maxConcurrency?: number;
  maxRetries?: number;
}

export interface Thresholds {
  largeChangeLines: number;
  debounceMs: number;
  largeFileLines: number;
  complexityWarning: number;
  complexityError: number;
  hunkTokensError: number;
  distanceWarning: number;
}

/** The server's settings object (server/lsp/settings.py). */
export interface ServerConfig {
  backends: BackendConfig[];
  defaultStyle: Style;
  observeChanges: boolean;
  thresholds: Thresholds;
  sandbox: string;
}

/** key -> [integer?, min, max, fallback]; fallbacks equal package.json's and the server's defaults. */
const THRESHOLDS: Record<keyof Thresholds, [boolean, number, number, number]> = {
  largeChangeLines: [true, 1, 1e7, 10],
  debounceMs: [true, 0, 60000, 300],
  largeFileLines: [true, 10, 1e8, 1500],
  complexityWarning: [false, 0, 1e6, 1],
  complexityError: [false, 0, 1e6, 5],
  hunkTokensError: [true, 1, 1e9, 60],
  distanceWarning: [false, 0, 1, 0.3],
};

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

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const BACKEND_NAME = /^[\w.:@/+-]{1,64}$/;
const SECRET_KEYS = new Set(["apikey", "api_key", "key", "token", "secret", "password", "authorization"]);
const STYLES: readonly Style[] = ["generic", "minimal"];

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
  const temperature = optNum(entry.temperature, 0, 2);
  if (temperature !== undefined) backend.temperature = temperature;
  const maxTokens = optNum(entry.maxTokens, 1, Infinity, true);
  if (maxTokens !== undefined) backend.maxTokens = maxTokens;
  const timeoutS = optNum(entry.timeoutS, 0.05, 3600);
  if (timeoutS !== undefined) backend.timeoutS = timeoutS;
  const maxConcurrency = optNum(entry.maxConcurrency, 1, 1024, true);
  if (maxConcurrency !== undefined) backend.maxConcurrency = maxConcurrency;
  const maxRetries = optNum(entry.maxRetries, 0, 10, true);
  if (maxRetries !== undefined) backend.maxRetries = maxRetries;
  return backend;
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
  const thresholds = {} as Thresholds;
  for (const [key, [integer, min, max, fallback]] of Object.entries(THRESHOLDS) as [keyof Thresholds, [boolean, number, number, number]][]) {
    const raw = cfg.get<unknown>(`thresholds.${key}`);
    const value = optNum(raw, min, max, integer);
    if (value === undefined && raw !== undefined && raw !== null) {
      problems.push(`editFidelity.thresholds.${key} must be ${integer ? "an integer" : "a number"} between ${min} and ${max}; using ${fallback}.`);
    }
    thresholds[key] = value ?? fallback;
  }
  const config: ServerConfig = {
    backends,
    defaultStyle: STYLES.includes(style as Style) ? (style as Style) : "minimal",
    observeChanges: cfg.get<boolean>("observeChanges") !== false,
    thresholds,
    sandbox: str(cfg.get("sandbox")) || "auto",
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
  const keys = [
    "editFidelity.server",
    "editFidelity.backends",
    "editFidelity.defaultStyle",
    "editFidelity.thresholds",
    "editFidelity.observeChanges",
    "editFidelity.sandbox",
  ];
  if (keys.some((k) => affects(k))) return true;
  // A change inside the section that is none of the known keys nor client-only: restart to be safe.
  return !CLIENT_ONLY.some((k) => affects(k));
}
