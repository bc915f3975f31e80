import { beforeEach, describe, expect, it } from "vitest";
import {
  NECESSITY_INCLUDE,
  SANDBOXES,
  SEVERITY_DEFAULTS,
  SEVERITY_LEVELS,
  initializationOptions,
  launchSettings,
  mapSettings,
  mapTestCommand,
  needsRestart,
  splitCommand,
  type ConfigReader,
} from "../src/config";
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
          whitespaceHintLines: 10,
        },
        severity: { ...SEVERITY_DEFAULTS },
        sandbox: "auto",
        testCommand: null,
        necessity: {
          maxRuns: 32,
          parallel: 2,
          timeoutS: 60,
          environment: null,
          packages: [],
          include: ["*.py", "*.pyi", "pyproject.toml", "setup.cfg", "pytest.ini", "tox.ini"],
          maxFiles: 2000,
          maxBytes: 20000000,
        },
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
            topP: 0.9,
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
        topP: 0.9,
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
          { name: "a", baseUrl: "http://h/v1", model: "m", temperature: 7, topP: 1.5, maxTokens: 1.5, style: "verbose" },
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

  it("passes the test command on as a command line or an argv; blank or null is no command", () => {
    expect(mapSettings(reader({ testCommand: "  python -m pytest -x tests/test_x.py " }))).toEqual(
      expect.objectContaining({ problems: [], config: expect.objectContaining({ testCommand: "python -m pytest -x tests/test_x.py" }) }),
    );
    expect(mapSettings(reader({ testCommand: 'pytest -k "a | b" tests' })).problems).toEqual([]);
    const argv = mapSettings(reader({ testCommand: ["python", "-m", "unittest", "-k", "a b", ""] }));
    expect(argv.problems).toEqual([]);
    expect(argv.config.testCommand).toEqual(["python", "-m", "unittest", "-k", "a b", ""]);
    for (const blank of [null, "", "   "]) {
      const { config, problems } = mapSettings(reader({ testCommand: blank }));
      expect(config.testCommand, String(blank)).toBeNull();
      expect(problems, String(blank)).toEqual([]);
    }
  });

  it("drops a test command that is neither a command line nor an argv, with one problem each", () => {
    const cases: [unknown, RegExp][] = [
      [42, /must be a command line or an array of strings/],
      [{ cmd: "pytest" }, /must be a command line or an array of strings/],
      [["pytest", 3], /must be a command line or an array of strings/],
      [[], /is an empty command/],
      [["  ", "-x"], /is an empty command/],
      ['pytest -k "a or b', /does not split into arguments: a double quote is not closed; it was ignored/],
      ["pytest -k 'a", /does not split into arguments: a single quote is not closed/],
      ["pytest \\", /does not split into arguments: it ends with a lone backslash/],
    ];
    for (const [value, message] of cases) {
      const { config, problems } = mapSettings(reader({ testCommand: value }));
      expect(config.testCommand, JSON.stringify(value)).toBeNull();
      expect(problems, JSON.stringify(value)).toHaveLength(1);
      expect(problems[0]).toMatch(/^editFidelity\.testCommand /);
      expect(problems[0]).toMatch(message);
    }
  });

  it("warns that no shell runs the test command, and passes it on", () => {
    const problems: string[] = [];
    expect(mapTestCommand("pytest -x && echo ok", problems)).toBe("pytest -x && echo ok");
    expect(problems).toEqual(['editFidelity.testCommand is not run by a shell: "&&" reaches the program as an argument.']);
    for (const quoted of ["pytest '&&' x", 'pytest "|"', "pytest \\;", "pytest a|b"]) {
      const none: string[] = [];
      mapTestCommand(quoted, none);
      expect(none, quoted).toEqual([]);
    }
  });

  it("splits a command line as the server does (Python's shlex.split)", () => {
    const words = (line: string) => {
      const out = splitCommand(line);
      return typeof out === "string" ? out : out.map((w) => w.word);
    };
    // Expected values are shlex.split's.
    expect(words("python -m pytest -x tests/test_x.py")).toEqual(["python", "-m", "pytest", "-x", "tests/test_x.py"]);
    expect(words('pytest -k "a or b" tests')).toEqual(["pytest", "-k", "a or b", "tests"]);
    expect(words(`a'b c'd "" x\\ y`)).toEqual(["ab cd", "", "x y"]);
    expect(words('p "a\\"b\\$c"')).toEqual(["p", 'a"b\\$c']);
    expect(splitCommand("a 'b' \\c d")).toEqual([
      { word: "a", bare: true },
      { word: "b", bare: false },
      { word: "c", bare: false },
      { word: "d", bare: true },
    ]);
  });

  it("passes every sandbox level; anything else falls back to auto with a problem", () => {
    for (const level of SANDBOXES) {
      const { config, problems } = mapSettings(reader({ sandbox: level }));
      expect(config.sandbox).toBe(level);
      expect(problems).toEqual([]);
    }
    expect(mapSettings(reader({ sandbox: " unshare " })).config.sandbox).toBe("unshare");
    for (const unset of [null, "", undefined]) {
      const { config, problems } = mapSettings(reader({ sandbox: unset }));
      expect(config.sandbox).toBe("auto");
      expect(problems).toEqual([]);
    }
    for (const bad of ["firejail", "Docker", 3, true, ["bwrap"]]) {
      const { config, problems } = mapSettings(reader({ sandbox: bad }));
      expect(config.sandbox, String(bad)).toBe("auto");
      expect(problems).toEqual(["editFidelity.sandbox must be one of auto, bwrap, unshare, docker, local, none; using auto."]);
    }
  });

  it("passes the necessity settings within the server's ranges", () => {
    const { config, problems } = mapSettings(
      reader({
        "necessity.maxRuns": 1000,
        "necessity.parallel": 1,
        "necessity.timeoutS": 0.5,
        "necessity.environment": " canitedit ",
        "necessity.include": ["src/*.py", "conftest.py"],
        "necessity.packages": [" numpy==2.4.6 ", "requests[socks]>=2"],
        "necessity.maxFiles": 10,
        "necessity.maxBytes": 1e10,
      }),
    );
    expect(problems).toEqual([]);
    expect(config.necessity).toEqual({
      maxRuns: 1000,
      parallel: 1,
      timeoutS: 0.5,
      environment: "canitedit",
      packages: ["numpy==2.4.6", "requests[socks]>=2"],
      include: ["src/*.py", "conftest.py"],
      maxFiles: 10,
      maxBytes: 1e10,
    });
  });

  it("keeps the default for each bad necessity setting, with one problem each", () => {
    const { config, problems } = mapSettings(
      reader({
        "necessity.maxRuns": 0,
        "necessity.parallel": 2.5,
        "necessity.timeoutS": "60",
        "necessity.maxFiles": Infinity,
        "necessity.maxBytes": 1e11,
        "necessity.environment": "../../usr",
        "necessity.include": [],
      }),
    );
    expect(problems).toEqual([
      "editFidelity.necessity.maxRuns must be an integer between 1 and 1000; using 32.",
      "editFidelity.necessity.parallel must be an integer between 1 and 64; using 2.",
      "editFidelity.necessity.timeoutS must be a number between 0.1 and 3600; using 60.",
      "editFidelity.necessity.maxFiles must be an integer between 1 and 1000000; using 2000.",
      "editFidelity.necessity.maxBytes must be an integer between 1 and 10000000000; using 20000000.",
      "editFidelity.necessity.environment must be the name of a prepared sandbox environment (like canitedit); using none.",
      "editFidelity.necessity.include must be a non-empty list of file patterns; using *.py, *.pyi, pyproject.toml, setup.cfg, pytest.ini, tox.ini.",
    ]);
    expect(config.necessity).toEqual(mapSettings(reader({})).config.necessity);
    for (const env of ["a/b", "/opt/env", ".hidden", 5, "   x y"]) {
      const bad = mapSettings(reader({ "necessity.environment": env }));
      expect(bad.config.necessity.environment, String(env)).toBeNull();
      expect(bad.problems, String(env)).toHaveLength(1);
    }
    for (const include of ["*.py", ["*.py", ""], ["*.py", 3], {}]) {
      const bad = mapSettings(reader({ "necessity.include": include }));
      expect(bad.config.necessity.include, JSON.stringify(include)).toEqual([...NECESSITY_INCLUDE]);
      expect(bad.problems, JSON.stringify(include)).toHaveLength(1);
    }
    expect(mapSettings(reader({ "necessity.environment": "" })).problems).toEqual([]);
    for (const packages of ["numpy", ["-r", "requirements.txt"], ["numpy", ""], [3], {}]) {
      const bad = mapSettings(reader({ "necessity.packages": packages }));
      expect(bad.config.necessity.packages, JSON.stringify(packages)).toEqual([]);
      expect(bad.problems, JSON.stringify(packages)).toEqual([
        'editFidelity.necessity.packages must be a list of pip requirements like "numpy==2.4.6" (no pip options); using none.',
      ]);
    }
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
  it("restarts on the sandbox, the test command and the necessity settings", () => {
    expect(needsRestart(affects("editFidelity.sandbox"))).toBe(true);
    expect(needsRestart(affects("editFidelity.testCommand"))).toBe(true);
    expect(needsRestart(affects("editFidelity.necessity.include"))).toBe(true);
    expect(needsRestart(affects("editFidelity.necessity.maxRuns"))).toBe(true);
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

  it("maps per-kind severities, keeps the default for a bad one and declares the same defaults", () => {
    const { config, problems } = mapSettings(reader({ "severity.rename": "error", "severity.whitespace": "loud" }));
    expect(config.severity.rename).toBe("error");
    expect(config.severity.whitespace).toBe("hint");
    expect(problems).toEqual(["editFidelity.severity.whitespace must be one of error, warning, information, hint; using hint."]);
    for (const [k, v] of Object.entries(SEVERITY_DEFAULTS)) {
      expect(props[`editFidelity.severity.${k}`].default, k).toBe(v);
      expect(props[`editFidelity.severity.${k}`].enum, k).toEqual([...SEVERITY_LEVELS]);
    }
    expect(needsRestart((s) => s === "editFidelity" || s === "editFidelity.severity")).toBe(true);
  });

  it("declares the same necessity defaults the mapping falls back to, within the same ranges", () => {
    const fallback = mapSettings({ get: () => "not a number" as any }).config.necessity;
    for (const [k, v] of Object.entries(fallback)) expect(props[`editFidelity.necessity.${k}`].default, k).toEqual(v);
    expect(props["editFidelity.necessity.include"].default).toEqual([...NECESSITY_INCLUDE]);
    // The schema's ranges are the mapping's: the bounds pass, just beyond them does not.
    for (const k of ["maxRuns", "parallel", "timeoutS", "maxFiles", "maxBytes"]) {
      const { minimum, maximum } = props[`editFidelity.necessity.${k}`];
      for (const [value, ok] of [[minimum, true], [maximum, true], [minimum - 0.01, false], [maximum + 1, false]] as const) {
        const { problems } = mapSettings(reader({ [`necessity.${k}`]: value }));
        expect(problems.length === 0, `${k}=${value}`).toBe(ok);
      }
    }
  });

  it("declares the sandbox levels the mapping accepts, and says the tests run there only", () => {
    expect(props["editFidelity.sandbox"].enum).toEqual([...SANDBOXES]);
    expect(props["editFidelity.sandbox"].enumDescriptions).toHaveLength(SANDBOXES.length);
    expect(props["editFidelity.sandbox"].scope).toBe("machine");
    expect(props["editFidelity.testCommand"].default).toBeNull();
    expect(props["editFidelity.testCommand"].type).toEqual(["string", "array", "null"]);
    expect(props["editFidelity.testCommand"].markdownDescription).toMatch(/only in the sandbox.*never on the host directly/);
  });

  it("has no place for a secret in the backend schema", () => {
    const item = props["editFidelity.backends"].items;
    expect(item.additionalProperties).toBe(false);
    expect(Object.keys(item.properties).sort()).toEqual(
      ["apiKeyEnv", "baseUrl", "maxConcurrency", "maxRetries", "maxTokens", "model", "name", "style", "temperature", "timeoutS", "topP"].sort(),
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
