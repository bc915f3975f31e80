// A small stand-in for the `vscode` module (aliased in vitest.config.ts). It records what the
// extension asks of the editor and lets each test script the user's answers.
import { readFileSync } from "fs";
import { fileURLToPath } from "url";

type Listener<T> = (e: T) => unknown;

export class Disposable {
  constructor(private readonly fn: () => void = () => undefined) {}
  static from(...ds: { dispose(): unknown }[]): Disposable {
    return new Disposable(() => ds.forEach((d) => d.dispose()));
  }
  dispose(): void {
    this.fn();
  }
}

export class EventEmitter<T> {
  private listeners: Listener<T>[] = [];
  event = (listener: Listener<T>): Disposable => {
    this.listeners.push(listener);
    return new Disposable(() => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    });
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) l(e);
  }
  dispose(): void {
    this.listeners = [];
  }
  get listenerCount(): number {
    return this.listeners.length;
  }
}

export class CancellationTokenSource {
  private emitter = new EventEmitter<void>();
  private cancelled = false;
  token = {
    isCancellationRequested: false,
    onCancellationRequested: this.emitter.event,
  };
  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.token.isCancellationRequested = true;
    this.emitter.fire();
  }
  dispose(): void {
    this.emitter.dispose();
  }
}

export class CancellationError extends Error {
  constructor() {
    super("Canceled");
    this.name = "Canceled";
  }
}

const URI_RE = /^([a-zA-Z][\w+.-]*):(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/;

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly authority: string,
    readonly path: string,
    readonly query: string,
    readonly fragment: string,
  ) {}
  static parse(value: string): Uri {
    const m = URI_RE.exec(value);
    if (!m) throw new Error(`bad uri ${value}`);
    return new Uri(m[1], m[2] ?? "", decodeURIComponent(m[3] ?? ""), m[4] ?? "", m[5] ?? "");
  }
  static file(path: string): Uri {
    return new Uri("file", "", path, "", "");
  }
  static from(c: { scheme: string; authority?: string; path?: string; query?: string; fragment?: string }): Uri {
    return new Uri(c.scheme, c.authority ?? "", c.path ?? "", c.query ?? "", c.fragment ?? "");
  }
  static joinPath(base: Uri, ...parts: string[]): Uri {
    return base.with({ path: [base.path.replace(/\/$/, ""), ...parts].join("/") });
  }
  with(c: { scheme?: string; authority?: string; path?: string; query?: string; fragment?: string }): Uri {
    return new Uri(c.scheme ?? this.scheme, c.authority ?? this.authority, c.path ?? this.path, c.query ?? this.query, c.fragment ?? this.fragment);
  }
  get fsPath(): string {
    return this.path;
  }
  toString(): string {
    const auth = this.authority || this.scheme === "file" ? `//${this.authority}` : "";
    return `${this.scheme}:${auth}${this.path}${this.query ? `?${this.query}` : ""}${this.fragment ? `#${this.fragment}` : ""}`;
  }
}

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}

export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(a: Position | number, b: Position | number, c?: number, d?: number) {
    if (typeof a === "number") {
      this.start = new Position(a, b as number);
      this.end = new Position(c!, d!);
    } else {
      this.start = a;
      this.end = b as Position;
    }
  }
  get isEmpty(): boolean {
    return this.start.line === this.end.line && this.start.character === this.end.character;
  }
}

export class Selection extends Range {
  get anchor(): Position {
    return this.start;
  }
  get active(): Position {
    return this.end;
  }
}

export class ThemeColor {
  constructor(readonly id: string) {}
}

export enum ProgressLocation {
  SourceControl = 1,
  Window = 10,
  Notification = 15,
}
export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}
export enum QuickPickItemKind {
  Separator = -1,
  Default = 0,
}

// ---- documents ------------------------------------------------------------------------------

export interface FakeDocument {
  uri: Uri;
  version: number;
  languageId: string;
  getText(): string;
  setText(text: string): void;
}

export function makeDocument(path: string, text: string, version = 1, languageId = "python"): FakeDocument {
  let current = text;
  const doc: FakeDocument = {
    uri: Uri.file(path),
    version,
    languageId,
    getText: () => current,
    setText: (t: string) => {
      current = t;
      doc.version++;
    },
  };
  return doc;
}

export function makeEditor(doc: FakeDocument, selection: Selection = new Selection(0, 0, 0, 0)) {
  return { document: doc, selection };
}

// ---- scripted user ------------------------------------------------------------------------------

export interface Call {
  fn: string;
  args: unknown[];
}

type MessageLevel = "info" | "warning" | "error";

export const ui = {
  calls: [] as Call[],
  /** Answer of the next input box. */
  onInputBox: (_opts: unknown): string | undefined => undefined,
  /** Answer of the next quick pick: receives the (resolved) items. */
  onQuickPick: (_items: any[], _opts: any): any => undefined,
  /** Which action button the user clicks on a message (undefined = dismissed). */
  onMessage: (_level: MessageLevel, _message: string, _actions: string[]): string | undefined => undefined,
  /** Called when a progress notification starts; may cancel through `source`. */
  onProgress: (_opts: any, _source: CancellationTokenSource): void => undefined,
  progress: [] as { opts: any; source: CancellationTokenSource; reports: { message?: string; increment?: number }[] }[],
  messages: [] as { level: MessageLevel; message: string; actions: string[] }[],
  statusMessages: [] as string[],
  contexts: {} as Record<string, unknown>,
  shownDocuments: [] as { language?: string; content?: string }[],
};

function record(fn: string, ...args: unknown[]): void {
  ui.calls.push({ fn, args });
}

function message(level: MessageLevel) {
  return (msg: string, ...rest: unknown[]): Promise<string | undefined> => {
    const actions = rest.filter((a): a is string => typeof a === "string");
    ui.messages.push({ level, message: msg, actions });
    record(`show${level}`, msg, actions);
    return Promise.resolve(ui.onMessage(level, msg, actions));
  };
}

export interface FakeStatusBarItem {
  text: string;
  tooltip: unknown;
  command: unknown;
  name?: string;
  backgroundColor: unknown;
  visible: boolean;
  show(): void;
  hide(): void;
  dispose(): void;
}

export const statusItems: FakeStatusBarItem[] = [];

export const tabs: { input: unknown }[] = [];

export const window = {
  activeTextEditor: undefined as ReturnType<typeof makeEditor> | undefined,
  showInputBox: (opts: unknown) => {
    record("showInputBox", opts);
    return Promise.resolve(ui.onInputBox(opts));
  },
  showQuickPick: async (items: unknown, opts: unknown) => {
    const resolved = await items;
    record("showQuickPick", resolved, opts);
    return ui.onQuickPick(resolved as any[], opts);
  },
  showInformationMessage: message("info"),
  showWarningMessage: message("warning"),
  showErrorMessage: message("error"),
  setStatusBarMessage: (text: string) => {
    ui.statusMessages.push(text);
    return new Disposable();
  },
  withProgress: async <T>(opts: any, task: (progress: { report(v: unknown): void }, token: any) => Promise<T>): Promise<T> => {
    const source = new CancellationTokenSource();
    const entry = { opts, source, reports: [] as { message?: string; increment?: number }[] };
    ui.progress.push(entry);
    record("withProgress", opts);
    const p = task({ report: (v: { message?: string; increment?: number }) => entry.reports.push(v) }, source.token);
    ui.onProgress(opts, source);
    return p;
  },
  createStatusBarItem: (..._args: unknown[]): FakeStatusBarItem => {
    const item: FakeStatusBarItem = {
      text: "",
      tooltip: undefined,
      command: undefined,
      backgroundColor: undefined,
      visible: false,
      show() {
        item.visible = true;
      },
      hide() {
        item.visible = false;
      },
      dispose() {
        item.visible = false;
      },
    };
    statusItems.push(item);
    return item;
  },
  createOutputChannel: (name: string) => {
    const lines: string[] = [];
    return { name, lines, appendLine: (l: string) => lines.push(l), append: (l: string) => lines.push(l), show: () => record("output.show", name), dispose: () => undefined };
  },
  showTextDocument: (doc: unknown, opts?: unknown) => {
    record("showTextDocument", doc, opts);
    return Promise.resolve(undefined);
  },
  tabGroups: {
    get all() {
      return [{ tabs }];
    },
    close: (t: unknown) => {
      record("tabGroups.close", t);
      const list = Array.isArray(t) ? t : [t];
      for (const x of list) {
        const i = tabs.indexOf(x as { input: unknown });
        if (i >= 0) tabs.splice(i, 1);
      }
      return Promise.resolve(true);
    },
  },
};

// ---- commands ---------------------------------------------------------------------------------

export const registeredCommands = new Map<string, (...args: unknown[]) => unknown>();

export const commands = {
  registerCommand: (id: string, fn: (...args: unknown[]) => unknown) => {
    if (registeredCommands.has(id)) throw new Error(`command ${id} already registered`);
    registeredCommands.set(id, fn);
    return new Disposable(() => registeredCommands.delete(id));
  },
  executeCommand: async (id: string, ...args: unknown[]) => {
    record("executeCommand", id, ...args);
    if (id === "setContext") {
      ui.contexts[args[0] as string] = args[1];
      return undefined;
    }
    const fn = registeredCommands.get(id);
    return fn ? fn(...args) : undefined;
  },
};

// ---- workspace / configuration -----------------------------------------------------------------

const manifest = JSON.parse(readFileSync(fileURLToPath(new URL("../package.json", import.meta.url)), "utf8"));
export const manifestDefaults: Record<string, unknown> = Object.fromEntries(
  Object.entries(manifest.contributes.configuration.properties as Record<string, { default?: unknown }>).map(([k, v]) => [k, v.default]),
);

/** User settings, by full key ("editFidelity.backends"); package.json defaults apply underneath. */
export const settings: Record<string, unknown> = {};

export interface ConfigChange {
  affectsConfiguration(section: string): boolean;
}

const configEmitter = new EventEmitter<ConfigChange>();
const closeEmitter = new EventEmitter<FakeDocument>();

/** Change settings the way the Settings editor does, firing onDidChangeConfiguration. */
export function changeSettings(values: Record<string, unknown>): void {
  const keys = Object.keys(values);
  Object.assign(settings, values);
  for (const [k, v] of Object.entries(values)) if (v === undefined) delete settings[k];
  configEmitter.fire({
    affectsConfiguration: (section: string) => keys.some((k) => k === section || k.startsWith(`${section}.`) || section.startsWith(`${k}.`)),
  });
}

export const contentProviders = new Map<string, unknown>();
export const textDocuments: FakeDocument[] = [];

export const workspace = {
  workspaceFolders: undefined as unknown,
  textDocuments,
  getConfiguration: (section?: string, _scope?: unknown) => {
    const prefix = section ? `${section}.` : "";
    return {
      get: <T>(key: string, fallback?: T): T | undefined => {
        const full = prefix + key;
        if (full in settings) return settings[full] as T;
        if (full in manifestDefaults) return manifestDefaults[full] as T;
        return fallback;
      },
      has: (key: string) => prefix + key in settings || prefix + key in manifestDefaults,
    };
  },
  onDidChangeConfiguration: configEmitter.event,
  onDidCloseTextDocument: closeEmitter.event,
  registerTextDocumentContentProvider: (scheme: string, provider: unknown) => {
    contentProviders.set(scheme, provider);
    return new Disposable(() => contentProviders.delete(scheme));
  },
  openTextDocument: (arg: { language?: string; content?: string }) => {
    ui.shownDocuments.push(arg);
    return Promise.resolve({ uri: Uri.parse("untitled:Untitled-1"), getText: () => arg.content ?? "" });
  },
};

export const extensions = {
  installed: new Map<string, unknown>(),
  getExtension: (id: string) => extensions.installed.get(id),
};

export const env = {
  openExternal: (uri: Uri) => {
    record("openExternal", uri.toString());
    return Promise.resolve(true);
  },
};

/** Back to a fresh editor between tests. */
export function resetFake(): void {
  ui.calls.length = 0;
  ui.progress.length = 0;
  ui.messages.length = 0;
  ui.statusMessages.length = 0;
  ui.shownDocuments.length = 0;
  ui.contexts = {};
  ui.onInputBox = () => undefined;
  ui.onQuickPick = () => undefined;
  ui.onMessage = () => undefined;
  ui.onProgress = () => undefined;
  window.activeTextEditor = undefined;
  for (const k of Object.keys(settings)) delete settings[k];
  registeredCommands.clear();
  contentProviders.clear();
  statusItems.length = 0;
  tabs.length = 0;
  textDocuments.length = 0;
  extensions.installed.clear();
  configEmitter.dispose();
  closeEmitter.dispose();
}

// Classes vscode-languageclient extends when its modules load (the bundle test loads them).
export class CompletionItem {}
export class CodeLens {}
export class CodeAction {}
export class Diagnostic {}
export class DocumentLink {}
export class InlayHint {}
export class SymbolInformation {}
export class CallHierarchyItem {}
export class TypeHierarchyItem {}
