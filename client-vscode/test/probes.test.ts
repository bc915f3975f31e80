import { chmodSync, mkdtempSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";
import { beforeEach, describe, expect, it } from "vitest";
import { activeInterpreter, hasPythonExtension, isExecutable, onInterpreterChange, pythonHasServer } from "../src/probes";
import * as vscode from "./vscode.fake";

const dir = mkdtempSync(join(tmpdir(), "ef-probes-"));

function script(name: string, body: string, mode = 0o755): string {
  const file = join(dir, name);
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, mode);
  return file;
}

describe.skipIf(process.platform === "win32")("file and interpreter probes", () => {
  it("accepts only executable regular files", async () => {
    expect(await isExecutable(script("ok", "exit 0"))).toBe(true);
    expect(await isExecutable(script("noexec", "exit 0", 0o644))).toBe(false);
    expect(await isExecutable(dir)).toBe(false);
    expect(await isExecutable(join(dir, "missing"))).toBe(false);
  });

  it("asks the interpreter whether the server package is importable", async () => {
    // The probe runs `python -c CHECK`; a fake interpreter answers by exit code.
    const yes = script("python-with", 'case "$2" in *server.cli*pygls*) exit 0;; esac; exit 9');
    const no = script("python-without", "exit 3");
    expect(await pythonHasServer(yes)).toBe(true);
    expect(await pythonHasServer(no)).toBe(false);
    expect(await pythonHasServer(join(dir, "no-such-python"))).toBe(false);
  });
});

describe("the Python extension's interpreter", () => {
  beforeEach(() => vscode.resetFake());

  it("is absent without the extension", async () => {
    expect(hasPythonExtension()).toBe(false);
    expect(await activeInterpreter()).toBeUndefined();
    expect(await onInterpreterChange(() => undefined)).toBeUndefined();
  });

  it("comes from the environments API, resolved to its executable, and its changes are followed", async () => {
    const changed = new vscode.EventEmitter<unknown>();
    let activated = 0;
    const api = {
      environments: {
        getActiveEnvironmentPath: () => ({ id: "venv", path: "/proj/.venv" }),
        resolveEnvironment: async (env: { path: string }) => ({ executable: { uri: vscode.Uri.file(`${env.path}/bin/python`) } }),
        onDidChangeActiveEnvironmentPath: changed.event,
      },
    };
    vscode.extensions.installed.set("ms-python.python", {
      isActive: false,
      exports: undefined,
      activate: async () => {
        activated++;
        return api;
      },
    });
    expect(hasPythonExtension()).toBe(true);
    expect(await activeInterpreter()).toBe("/proj/.venv/bin/python");
    expect(activated).toBe(1);
    let calls = 0;
    const sub = await onInterpreterChange(() => calls++);
    changed.fire({});
    expect(calls).toBe(1);
    sub!.dispose();
    changed.fire({});
    expect(calls).toBe(1);
  });

  it("falls back to the older execution-details API", async () => {
    vscode.extensions.installed.set("ms-python.python", {
      isActive: true,
      exports: { settings: { getExecutionDetails: () => ({ execCommand: ["/usr/bin/python3.12"] }) } },
    });
    expect(await activeInterpreter()).toBe("/usr/bin/python3.12");
  });

  it("ignores an extension that fails to activate", async () => {
    vscode.extensions.installed.set("ms-python.python", {
      isActive: false,
      activate: async () => {
        throw new Error("boom");
      },
    });
    expect(await activeInterpreter()).toBeUndefined();
  });
});
