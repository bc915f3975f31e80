import { beforeEach, describe, expect, it } from "vitest";
import { initializationOptions, launchSettings, mapSettings, needsRestart, type ConfigReader } from "../src/config";
import manifest from "../package.json";
import * as vscode from "./vscode.fake";

function reader(values: Record<string, unknown>): ConfigReader {
  vscode.resetFake();
  Object.assign(vscode.settings, Object.fromEntries(Object.entries(values).map(([k, v]) => [`editFidelity.${k}`, v])));
  return vscode.workspace.getConfiguration("editFidelity");
}

describe("settings -> initialization options", () => {
  beforeEach(() => vscode.resetFake());

  it("maps the package.json defaults to a complete server configuration", () => {
    expect(initializationOptions(reader({}))).toEqual({
      editFidelity: {
        backends: [],
        defaultStyle: "minimal",
        observeChanges: true,
        thresholds: {
          largeChangeLines: 10,
          debounceMs: 300,
          largeFileLines: 1500,
          complexityWarning: 1,
          complexityError: 5,
          hunkTokensError: 60,
          distanceWarning: 0.3,
        },
        sandbox: "auto",
      },
    });
  });

  it("passes backends with every contract field and normalises the base URL", () => {
    const { config, problems } = mapSettings(
      reader({
        backends: [
          {
            name: "local",
            baseUrl: "http://127.0.0.1:8000/v1/",
            model: "qwen",
            apiKeyEnv: "VLLM_KEY",
            style: "generic",
            temperature: 0.2,
            maxTokens: 2048,
            timeoutS: 30,
            maxConcurrency: 4,
            maxRetries: 0,
          },
        ],
        defaultStyle: "generic",
        "thresholds.complexityError": 7.5,
        "thresholds.largeChangeLines": 12,
        observeChanges: false,
        sandbox: "bwrap",
      }),
    );
    expect(problems).toEqual([]);
    expect(config.backends).toEqual([
      {
        name: "local",
        baseUrl: "http://127.0.0.1:8000/v1",
        model: "qwen",
        apiKeyEnv: "VLLM_KEY",
        style: "generic",
        temperature: 0.2,
        maxTokens: 2048,
        timeoutS: 30,
        maxConcurrency: 4,
        maxRetries: 0,
      },
    ]);
    expect(config.defaultStyle).toBe("generic");
    expect(config.thresholds).toMatchObject({ complexityError: 7.5, largeChangeLines: 12, debounceMs: 300 });
    expect(config.observeChanges).toBe(false);
    expect(config.sandbox).toBe("bwrap");
  });

  it("never forwards a secret written into settings, and says so", () => {
    const { config, problems } = mapSettings(
      reader({ backends: [{ name: "openai", baseUrl: "https://api.openai.com/v1", model: "gpt-4o", apiKey: "sk-live-123" }] }),
    );
    expect(JSON.stringify(config)).not.toContain("sk-live-123");
    expect(config.backends[0]).toEqual({ name: "openai", baseUrl: "https://api.openai.com/v1", model: "gpt-4o" });
    expect(problems.join(" ")).toMatch(/"apiKey" was ignored.*apiKeyEnv/);
  });

  it("rejects a key pasted into apiKeyEnv instead of a variable name", () => {
    const { config, problems } = mapSettings(
      reader({ backends: [{ name: "o", baseUrl: "https://x/v1", model: "m", apiKeyEnv: "sk-proj-abc123" }] }),
    );
    expect(config.backends[0].apiKeyEnv).toBeUndefined();
    expect(JSON.stringify(config)).not.toContain("sk-proj");
    expect(problems[0]).toMatch(/name of an environment variable/);
  });

  it("skips incomplete, non-http and duplicate backends with one problem each; drops out-of-range numbers", () => {
    const { config, problems } = mapSettings(
      reader({
        backends: [
          { name: "a", baseUrl: "http://h/v1", model: "m", temperature: 7, maxTokens: 1.5, style: "verbose" },
          { name: "b", model: "m" },
          { name: "c", baseUrl: "ftp://h", model: "m" },
          { name: "a", baseUrl: "http://other/v1", model: "m2" },
          "nonsense",
          { name: "has space", baseUrl: "http://h/v1", model: "m" },
        ],
        "thresholds.distanceWarning": 3,
        "thresholds.largeChangeLines": 2.5,
      }),
    );
    expect(config.backends).toEqual([{ name: "a", baseUrl: "http://h/v1", model: "m" }]);
    expect(problems).toHaveLength(7);
    expect(problems[0]).toMatch(/b was skipped: baseUrl missing/);
    expect(problems[1]).toMatch(/c was skipped: baseUrl must start with http/);
    expect(problems[2]).toMatch(/"a" is used twice/);
    expect(problems[3]).toMatch(/backends\[4\] is not an object/);
    expect(problems[4]).toMatch(/"has space" was skipped/);
    expect(problems[5]).toBe("editFidelity.thresholds.largeChangeLines must be an integer between 1 and 10000000; using 10.");
    expect(problems[6]).toMatch(/distanceWarning must be a number between 0 and 1; using 0.3/);
    expect(config.thresholds.distanceWarning).toBe(0.3);
    expect(config.thresholds.largeChangeLines).toBe(10);
  });

  it("reads the launch settings", () => {
    expect(launchSettings(reader({ "server.path": " /opt/ef/bin/edit-fidelity ", "server.extraArgs": ["--log", 3] }))).toEqual({
      path: "/opt/ef/bin/edit-fidelity",
      pythonPath: "",
      extraArgs: ["--log"],
    });
  });
});

describe("restart decisions", () => {
  const affects = (...keys: string[]) => (s: string) => keys.some((k) => k === s || k.startsWith(`${s}.`));
  it("restarts on server, backend and threshold settings", () => {
    expect(needsRestart(affects("editFidelity.server.pythonPath"))).toBe(true);
    expect(needsRestart(affects("editFidelity.backends"))).toBe(true);
    expect(needsRestart(affects("editFidelity.thresholds.debounceMs"))).toBe(true);
    expect(needsRestart(affects("editFidelity.observeChanges"))).toBe(true);
  });
  it("does not restart for client-only or unrelated settings", () => {
    expect(needsRestart(affects("editFidelity.statusBar.enabled"))).toBe(false);
    expect(needsRestart(affects("editFidelity.trace.server"))).toBe(false);
    expect(needsRestart(affects("python.defaultInterpreterPath"))).toBe(false);
  });
});

describe("package.json contributions", () => {
  const props = manifest.contributes.configuration.properties as Record<string, any>;

  it("declares every setting the mapping reads", () => {
    const read = new Set<string>();
    const spy: ConfigReader = {
      get: (k: string) => {
        read.add(`editFidelity.${k}`);
        return undefined;
      },
    };
    mapSettings(spy);
    launchSettings(spy);
    for (const key of read) expect(Object.keys(props), key).toContain(key);
  });

  it("declares the same threshold defaults the mapping falls back to", () => {
    const fallback = mapSettings({ get: () => "not a number" as any }).config.thresholds;
    for (const [k, v] of Object.entries(fallback)) expect(props[`editFidelity.thresholds.${k}`].default, k).toBe(v);
  });

  it("has no place for a secret in the backend schema", () => {
    const item = props["editFidelity.backends"].items;
    expect(item.additionalProperties).toBe(false);
    expect(Object.keys(item.properties).sort()).toEqual(
      ["apiKeyEnv", "baseUrl", "maxConcurrency", "maxRetries", "maxTokens", "model", "name", "style", "temperature", "timeoutS"].sort(),
    );
  });

  it("uses chords under one prefix that no default VS Code binding uses", () => {
    const defaults = ["ctrl+alt+e", "ctrl+shift+alt+c", "ctrl+k e", "ctrl+alt+i", "ctrl+shift+e", "ctrl+e", "ctrl+alt+up", "ctrl+alt+down"];
    const keys: string[] = manifest.contributes.keybindings.flatMap((k: { key: string; mac: string }) => [k.key, k.mac]);
    expect(keys.every(Boolean)).toBe(true);
    for (const key of keys) {
      expect(key).toMatch(/^(ctrl|cmd)\+alt\+' [a-z]$/);
      expect(defaults).not.toContain(key.split(" ")[0]);
    }
    const seconds = manifest.contributes.keybindings.map((k: { key: string }) => k.key);
    expect(new Set(seconds).size).toBe(seconds.length);
  });
});
