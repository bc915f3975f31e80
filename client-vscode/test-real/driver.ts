// The driver of the extension's tests in a real VS Code (scripts/test-vscode-real runs it with Node 24):
// it starts the scripted model endpoint, installs the packaged extension into code-server, starts
// code-server with the test module (suite.ts) for its extension host, shows the workbench in
// headless chromium, and answers the test module's requests for what only the page can do: type into
// the quick input, click notification buttons and code lenses, read the status bar, the Problems
// panel and the notifications, take screenshots. Exit status: 0 all passed, 1 a test failed, 77
// code-server (or the browser that shows it) cannot start here, 2 bad arguments.
import { spawn, spawnSync, type ChildProcess } from "child_process";
import * as fs from "fs";
import * as http from "http";
import * as net from "net";
import * as os from "os";
import * as path from "path";
import { chromium, type Browser, type Page } from "playwright-core";
import { DRIVER_ENV, SETUP_ENV, type Action, type RealSetup, type Reply, type UiFacts } from "./rpc";
import { ASSISTANT_BRANCH, FILES, REWRITTEN, SAMPLE } from "./texts";

const SKIP = 77;
const STEP_MS = 30_000; // one UI action (a locator to appear): generous for a loaded 2-core machine
const START_MS = 120_000; // code-server, the endpoint: to come up

class Skip extends Error {}

interface Options {
  codeServer: string; // the code-server package folder
  node: string; // Node 24
  repo: string;
  vsix: string;
  suite: string; // the bundled test module
  artifacts: string;
  server: string; // the edit-fidelity executable
  python: string; // the project's interpreter (the scripted endpoint)
  chromium: string;
  timeoutS: number;
}

function options(argv: string[]): Options {
  const o: Record<string, string> = {};
  for (let i = 0; i < argv.length; i += 2) {
    if (!argv[i].startsWith("--") || argv[i + 1] === undefined) throw new Error(`bad argument ${argv[i]}`);
    o[argv[i].slice(2)] = argv[i + 1];
  }
  const need = ["code-server", "node", "repo", "vsix", "suite", "artifacts", "server", "python"];
  const missing = need.filter((k) => !o[k]);
  if (missing.length) throw new Error(`missing --${missing.join(", --")}`);
  return {
    codeServer: o["code-server"],
    node: o.node,
    repo: o.repo,
    vsix: o.vsix,
    suite: o.suite,
    artifacts: o.artifacts,
    server: o.server,
    python: o.python,
    chromium: o.chromium ?? "/usr/bin/chromium",
    timeoutS: Number(o["timeout-s"] ?? 900),
  };
}

const log = (line: string) => console.log(`test-vscode-real: ${line}`);

function git(cwd: string, ...args: string[]): void {
  const r = spawnSync("git", args, { cwd, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")} failed: ${r.stderr}`);
}

/** A git repository with one copy of the sample per test; checkout.py is rewritten on another branch. */
function makeWorkspace(dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  for (const f of FILES) fs.writeFileSync(path.join(dir, f), SAMPLE);
  git(dir, "init", "-q", "-b", "main");
  git(dir, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".");
  git(dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "sample");
  git(dir, "checkout", "-q", "-b", ASSISTANT_BRANCH);
  fs.writeFileSync(path.join(dir, "checkout.py"), REWRITTEN);
  git(dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am", "an assistant's rewrite");
  git(dir, "checkout", "-q", "main");
}

function firstLine(child: ChildProcess, what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = "";
    const timer = setTimeout(() => reject(new Error(`${what} printed nothing in ${START_MS / 1000} s`)), START_MS);
    child.stdout!.on("data", (d: Buffer) => {
      buf += d.toString();
      const nl = buf.indexOf("\n");
      if (nl >= 0) {
        clearTimeout(timer);
        resolve(buf.slice(0, nl).trim());
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${code}) before it was ready`));
    });
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

async function healthy(url: string, child: ChildProcess, logFile: string): Promise<void> {
  const deadline = Date.now() + START_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Skip(`code-server exited (${child.exitCode}) at start: ${tail(logFile)}`);
    try {
      const r = await fetch(`${url}/healthz`);
      if (r.ok) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Skip(`code-server did not answer in ${START_MS / 1000} s: ${tail(logFile)}`);
}

/** A process's complaint on one line: its messages without the stack frames. */
function oneLine(text: string): string {
  const lines = text.split("\n").filter((l) => l.trim() && !/^\s+at /.test(l) && !/^\s*(\^|throw err;)\s*$/.test(l));
  return lines.join(" | ").slice(0, 400);
}

function tail(file: string, lines = 8): string {
  try {
    return oneLine(fs.readFileSync(file, "utf8").trim().split("\n").slice(-lines).join("\n"));
  } catch {
    return "(no log)";
  }
}

/** The workbench's state as a user sees it (runs in the page). */
function readFacts(): UiFacts {
  const text = (el: Element | null) => (el ? (el as HTMLElement).innerText.replace(/\s+/g, " ").trim() : "");
  const shown = (el: Element | null) => {
    if (!el) return false;
    const r = (el as HTMLElement).getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  };
  const rows = (root: Element) => [...root.querySelectorAll(".monaco-list-row")].map((r) => r.getAttribute("aria-label") || text(r));
  const panel = document.querySelector(".markers-panel");
  const quick = document.querySelector(".quick-input-widget");
  return {
    statusBar: [...document.querySelectorAll(".statusbar-item")].filter(shown).map(text).filter(Boolean),
    notifications: [...document.querySelectorAll(".notification-toast, .notifications-center .notification-list-item")].filter(shown).map((t) => ({
      message: text(t.querySelector(".notification-list-item-message")),
      buttons: [...t.querySelectorAll(".monaco-button")].map(text).filter(Boolean),
    })),
    problems: panel && shown(panel) ? rows(panel) : null,
    quickInput: quick && shown(quick) ? { title: text(quick.querySelector(".quick-input-title")), rows: rows(quick) } : null,
    tabs: [...document.querySelectorAll(".tabs-container .tab")].map((t) => t.getAttribute("aria-label") || text(t)),
    codeLenses: [...document.querySelectorAll(".codelens-decoration")].filter(shown).map(text),
  };
}

interface Report {
  test: string;
  ok: boolean;
  error?: string;
  seconds: number;
  notes?: string[];
}

class Session {
  shots = 0;
  plan: string[] = [];
  reports: Report[] = [];
  constructor(
    private readonly page: Page,
    private readonly artifacts: string,
  ) {}

  async handle(action: Action): Promise<UiFacts> {
    const page = this.page;
    switch (action.op) {
      case "shot": {
        const name = `${String(++this.shots).padStart(2, "0")}-${action.name.replace(/[^\w.-]+/g, "-")}.png`;
        await page.screenshot({ path: path.join(this.artifacts, name), animations: "disabled" });
        break;
      }
      case "type": {
        const input = page.locator(".quick-input-widget .quick-input-box input");
        await input.waitFor({ state: "visible", timeout: STEP_MS });
        await input.fill(action.text, { timeout: STEP_MS });
        await input.press("Enter", { timeout: STEP_MS });
        break;
      }
      case "pick":
        await page.locator(".quick-input-widget .monaco-list-row", { hasText: action.label }).first().click({ timeout: STEP_MS });
        break;
      case "clickNotification":
        await page
          .locator(".notification-toast, .notifications-center .notification-list-item", { hasText: action.message })
          .locator(".monaco-button", { hasText: action.button })
          .first()
          .click({ timeout: STEP_MS });
        break;
      case "clickLens":
        await page.locator(".codelens-decoration a", { hasText: action.label }).first().click({ timeout: STEP_MS });
        break;
      case "plan":
        this.plan = action.tests;
        break;
      case "report": {
        const r: Report = { test: action.test, ok: action.ok, error: action.error, seconds: action.seconds, notes: action.notes };
        this.reports.push(r);
        log(`${r.ok ? "PASS" : "FAIL"} ${r.test} (${r.seconds.toFixed(1)} s)${r.ok ? "" : `: ${r.error}`}`);
        for (const n of r.notes ?? []) log(`     ${n}`);
        break;
      }
      case "facts":
        break;
    }
    return page.evaluate(readFacts);
  }
}

function serve(session: () => Session | undefined): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", async () => {
      let reply: Reply;
      try {
        const s = session();
        if (!s) throw new Error("the page is not open yet");
        reply = { ok: true, facts: await s.handle(JSON.parse(body) as Action) };
      } catch (e) {
        reply = { ok: false, error: e instanceof Error ? e.message.split("\n")[0] : String(e) };
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(reply));
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

function copyLogs(from: string, to: string): void {
  try {
    if (fs.existsSync(from)) fs.cpSync(from, to, { recursive: true, filter: (src) => fs.statSync(src).isDirectory() || src.endsWith(".log") });
  } catch {
    /* best effort: the logs only help to read a failure */
  }
}

/** End a child we started (code-server: its whole process group, its hosts and their servers too). */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const group = child.spawnargs.includes("--bind-addr");
  const signal = (sig: NodeJS.Signals) => {
    try {
      if (group) process.kill(-child.pid!, sig);
      else child.kill(sig);
    } catch {
      /* already gone */
    }
  };
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  signal("SIGTERM");
  const late = setTimeout(() => signal("SIGKILL"), 10_000);
  await exited;
  clearTimeout(late);
  if (group) signal("SIGKILL"); // whatever of its group outlived it
}

async function main(): Promise<number> {
  let o: Options;
  try {
    o = options(process.argv.slice(2));
  } catch (e) {
    console.error(`test-vscode-real: ${e instanceof Error ? e.message : String(e)}`);
    return 2;
  }
  fs.rmSync(o.artifacts, { recursive: true, force: true });
  fs.mkdirSync(o.artifacts, { recursive: true });
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "ef-vscode-real-"));
  const children: ChildProcess[] = [];
  let browser: Browser | undefined;
  let rpc: http.Server | undefined;
  let passed = false;
  let interrupted: (code: number) => void = () => undefined;
  const onSignal = (sig: NodeJS.Signals) => {
    log(`FAILED: interrupted (${sig})`);
    interrupted(1);
  };
  process.once("SIGINT", onSignal).once("SIGTERM", onSignal).once("SIGHUP", onSignal);
  try {
    const ws = path.join(work, "workspace");
    makeWorkspace(ws);

    // the model backend: the project's scripted OpenAI-compatible endpoint
    const endpoint = spawn(o.python, [path.join(o.repo, "tests/editors/vscode_real_endpoint.py")], {
      cwd: o.repo,
      env: { ...process.env, PYTHONPATH: o.repo },
      stdio: ["pipe", "pipe", "inherit"],
    });
    children.push(endpoint);
    const baseUrl = await firstLine(endpoint, "the scripted endpoint");

    const entry = path.join(o.codeServer, "out/node/entry.js");
    const data = path.join(work, "data");
    const extensions = path.join(work, "extensions");
    const config = path.join(work, "code-server.yaml");
    fs.writeFileSync(config, "auth: none\ncert: false\n");
    const env = {
      ...process.env,
      XDG_CONFIG_HOME: path.join(work, "xdg-config"),
      XDG_DATA_HOME: path.join(work, "xdg-data"),
      XDG_CACHE_HOME: path.join(work, "xdg-cache"),
      HF_HUB_OFFLINE: "1",
    };
    const base = ["--config", config, "--user-data-dir", data, "--extensions-dir", extensions];
    const version = spawnSync(o.node, [entry, ...base, "--version"], { env, encoding: "utf8", timeout: START_MS });
    if (version.status !== 0) throw new Skip(`code-server does not run: ${oneLine(version.stderr || version.stdout || String(version.error))}`);
    log(`code-server ${version.stdout.trim().split("\n")[0]}`);
    const install = spawnSync(o.node, [entry, ...base, "--install-extension", o.vsix], { env, encoding: "utf8", timeout: START_MS });
    if (install.status !== 0) throw new Error(`installing ${o.vsix} failed: ${(install.stderr || install.stdout).trim()}`);

    // the User settings (not the Machine ones): the server path must count there in a remote window
    const setup: RealSetup = { workspace: ws, serverPath: o.server, baseUrl };
    fs.mkdirSync(path.join(data, "User"), { recursive: true });
    fs.writeFileSync(
      path.join(data, "User/settings.json"),
      JSON.stringify(
        {
          "editFidelity.server.path": o.server,
          "editFidelity.backends": [{ name: "overeditor", baseUrl, model: "overeditor", timeoutS: 120 }],
          "security.workspace.trust.enabled": false,
          "workbench.startupEditor": "none",
          "workbench.tips.enabled": false,
          "workbench.enableExperiments": false,
          "workbench.secondarySideBar.defaultVisibility": "hidden",
          "chat.disableAIFeatures": true,
          "telemetry.telemetryLevel": "off",
          "extensions.autoCheckUpdates": false,
          "extensions.autoUpdate": false,
          "extensions.ignoreRecommendations": true,
          "update.mode": "none",
          "git.enabled": false,
          "editor.minimap.enabled": false,
        },
        null,
        2,
      ),
    );

    let session: Session | undefined;
    rpc = await serve(() => session);
    const rpcUrl = `http://127.0.0.1:${(rpc.address() as net.AddressInfo).port}`;
    const port = await freePort();
    const csLog = path.join(work, "code-server.log");
    const out = fs.openSync(csLog, "w");
    const cs = spawn(
      o.node,
      [
        entry,
        ...base,
        "--bind-addr",
        `127.0.0.1:${port}`,
        "--auth",
        "none",
        "--disable-telemetry",
        "--disable-update-check",
        "--disable-workspace-trust",
        "--disable-getting-started-override",
        "--ignore-last-opened",
        // a development option of VS Code's server (hence the pinned version): without it the page's
        // payload cannot name the test module; it also keeps notifications out of toasts (the
        // notification center still has them)
        "--vscode-option",
        "enable-smoke-test-driver",
      ],
      { env: { ...env, [DRIVER_ENV]: rpcUrl, [SETUP_ENV]: JSON.stringify(setup) }, stdio: ["ignore", out, out], detached: true },
    );
    children.push(cs);
    const url = `http://127.0.0.1:${port}`;
    await healthy(url, cs, csLog);
    log(`code-server is up (${url}); the model endpoint is ${baseUrl}`);

    try {
      browser = await chromium.launch({
        executablePath: o.chromium,
        headless: true,
        handleSIGINT: false, // main() cleans up (the browser, code-server, the endpoint) on signals
        handleSIGTERM: false,
        handleSIGHUP: false,
        args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
      });
    } catch (e) {
      throw new Skip(`chromium (${o.chromium}) cannot start, so the workbench cannot be shown: ${e instanceof Error ? e.message.split("\n")[0] : String(e)}`);
    }
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    session = new Session(page, o.artifacts);
    const exited = new Promise<number>((resolve) => void page.exposeFunction("codeAutomationExit", (code: number) => resolve(code)));
    await page.exposeFunction("codeAutomationLog", () => undefined);
    // The extension under test is the installed .vsix; the development "extension" is only the
    // test module's home (the test runner needs one). Both go to the remote extension host.
    const harness = path.join(work, "harness");
    fs.mkdirSync(harness);
    fs.writeFileSync(
      path.join(harness, "package.json"),
      JSON.stringify({ name: "edit-fidelity-real-tests", publisher: "edit-fidelity", version: "0.0.0", engines: { vscode: "^1.82.0" } }),
    );
    fs.copyFileSync(o.suite, path.join(harness, "suite.js"));
    const remote = (p: string) => `vscode-remote://127.0.0.1:${port}${p}`;
    const payload = JSON.stringify([
      ["extensionDevelopmentPath", remote(harness)],
      ["extensionTestsPath", remote(path.join(harness, "suite.js"))],
    ]);
    const started = Date.now();
    await page.goto(`${url}/?folder=${encodeURIComponent(ws)}&payload=${encodeURIComponent(payload)}`);
    const timeout = new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), o.timeoutS * 1000).unref());
    const stopped = new Promise<"interrupted">((resolve) => (interrupted = () => resolve("interrupted")));
    const code = await Promise.race([exited, timeout, stopped]);
    if (code === "interrupted") return 1;
    const s = session;
    if (code === "timeout") {
      await s.handle({ op: "shot", name: "TIMEOUT" }).catch(() => undefined);
      throw new Error(`the tests did not finish in ${o.timeoutS} s`);
    }
    const missing = s.plan.filter((t) => !s.reports.some((r) => r.test === t));
    const failed = s.reports.filter((r) => !r.ok);
    log(
      `${s.reports.length - failed.length} passed, ${failed.length} failed` +
        (missing.length ? `, ${missing.length} did not report (${missing.join(", ")})` : "") +
        ` in ${((Date.now() - started) / 1000).toFixed(0)} s; extension host exit ${code}; screenshots in ${o.artifacts}`,
    );
    passed = code === 0 && s.plan.length > 0 && failed.length === 0 && missing.length === 0;
    return passed ? 0 : 1;
  } catch (e) {
    if (e instanceof Skip) {
      log(`SKIPPED: ${e.message}`);
      return SKIP;
    }
    log(`FAILED: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  } finally {
    await browser?.close().catch(() => undefined);
    rpc?.close();
    await Promise.all(children.reverse().map(stop));
    if (!passed) {
      copyLogs(path.join(work, "data/logs"), path.join(o.artifacts, "logs"));
      copyLogs(path.join(work, "code-server.log"), path.join(o.artifacts, "code-server.log"));
    }
    fs.rmSync(work, { recursive: true, force: true, maxRetries: 3 });
  }
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(`test-vscode-real: ${e instanceof Error ? e.stack : String(e)}`);
    process.exit(1);
  },
);
