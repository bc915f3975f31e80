// What the test module (in code-server's extension host) asks of the driver (which holds the page),
// over HTTP on 127.0.0.1: the things only a user at the page can do or see.

/** What the page shows, read from the workbench's DOM. */
export interface UiFacts {
  /** Every status bar item's text (codicons dropped). */
  statusBar: string[];
  /** The notifications on screen (toasts, or the notification center when it is open), each its
   * message and its buttons. */
  notifications: { message: string; buttons: string[] }[];
  /** The Problems panel's rows when it is open, else null. */
  problems: string[] | null;
  /** The quick input (input box or quick pick) when it is open. */
  quickInput: { title: string; rows: string[] } | null;
  /** The editor tabs' titles. */
  tabs: string[];
  /** The code lenses of the visible editors. */
  codeLenses: string[];
}

export type Action =
  /** A screenshot into the artifacts (numbered in order), with the facts at that moment. */
  | { op: "shot"; name: string }
  | { op: "facts" }
  /** Type into the open quick input, then Enter. */
  | { op: "type"; text: string }
  /** Click the quick pick row that contains `label`. */
  | { op: "pick"; label: string }
  /** Click `button` on the notification whose message contains `message`. */
  | { op: "clickNotification"; message: string; button: string }
  /** Click the code lens that contains `label`. */
  | { op: "clickLens"; label: string }
  /** The tests that will report, in order (first). */
  | { op: "plan"; tests: string[] }
  /** One test's verdict. */
  | { op: "report"; test: string; ok: boolean; error?: string; seconds: number; notes?: string[] };

export type Reply = { ok: true; facts: UiFacts } | { ok: false; error: string };

/** The environment variable that tells the test module where the driver listens. */
export const DRIVER_ENV = "EDIT_FIDELITY_REAL_DRIVER";
/** ... and the facts it needs about the set-up (JSON: RealSetup). */
export const SETUP_ENV = "EDIT_FIDELITY_REAL_SETUP";

export interface RealSetup {
  /** The workspace folder (a git repository holding FILES). */
  workspace: string;
  /** editFidelity.server.path as written into the User settings. */
  serverPath: string;
  /** The scripted endpoint's base URL. */
  baseUrl: string;
}
