// The shipped bundle itself (esbuild output, with vscode-languageclient inside) loads in Node and
// activates against the fake editor: a user with no server gets the one actionable message.
import * as esbuild from "esbuild";
import { mkdtempSync } from "fs";
import Module, { createRequire } from "module";
import { tmpdir } from "os";
import { join } from "path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import manifest from "../package.json";
import * as vscode from "./vscode.fake";

const outDir = mkdtempSync(join(tmpdir(), "ef-bundle-"));
const load = (Module as any)._load;
let ext: { activate(ctx: unknown): Promise<void>; deactivate(): Promise<void> };
let savedPath: string | undefined;

beforeAll(async () => {
  await esbuild.build({
    entryPoints: [join(__dirname, "..", "src", "extension.ts")],
    bundle: true,
    format: "cjs",
    platform: "node",
    target: "node18",
    outfile: join(outDir, "extension.js"),
    external: ["vscode"],
    logLevel: "silent",
  });
  (Module as any)._load = function (request: string, ...rest: unknown[]) {
    return request === "vscode" ? vscode : load.call(this, request, ...rest);
  };
  ext = createRequire(import.meta.url)(join(outDir, "extension.js"));
  savedPath = process.env.PATH;
}, 30000);

afterAll(() => {
  (Module as any)._load = load;
  process.env.PATH = savedPath;
});

describe("the bundle", () => {
  it("activates, registers the contributed commands and tells a user without a server what to do", async () => {
    vscode.resetFake();
    process.env.PATH = outDir; // no edit-fidelity anywhere
    const context = { subscriptions: [] as { dispose(): unknown }[], extensionUri: vscode.Uri.file("/ext") };
    await ext.activate(context);
    for (let i = 0; i < 50 && vscode.ui.messages.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    const contributed = manifest.contributes.commands.map((c: { command: string }) => c.command).sort();
    expect([...vscode.registeredCommands.keys()].sort()).toEqual(contributed);
    expect(vscode.ui.messages).toHaveLength(1);
    expect(vscode.ui.messages[0]).toMatchObject({ level: "error", actions: ["How to Install", "Open Settings"] });
    expect(vscode.ui.messages[0].message).toMatch(/was not found\. Install it/);
    await ext.deactivate();
    for (const d of context.subscriptions) d.dispose();
  });
});
