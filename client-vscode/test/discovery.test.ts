import { describe, expect, it } from "vitest";
import { discoverServer, type Probes } from "../src/discovery";

function probes(opts: {
  executables?: string[];
  withServer?: string[];
  active?: string;
  path?: string;
  platform?: NodeJS.Platform;
  activeThrows?: boolean;
}): Probes & { checked: string[] } {
  const checked: string[] = [];
  return {
    checked,
    platform: opts.platform ?? "linux",
    env: { PATH: opts.path ?? "/usr/local/bin:/usr/bin" },
    isExecutable: async (f) => (opts.executables ?? []).includes(f),
    pythonHasServer: async (py) => {
      checked.push(py);
      return (opts.withServer ?? []).includes(py);
    },
    activeInterpreter: async () => {
      if (opts.activeThrows) throw new Error("python extension exploded");
      return opts.active;
    },
  };
}

const none = { path: "", pythonPath: "", extraArgs: [] as string[] };

describe("server discovery", () => {
  it("uses editFidelity.server.path first, with extra arguments after `serve`", async () => {
    const d = await discoverServer(
      { ...none, path: "/opt/ef/edit-fidelity", extraArgs: ["--verbose"] },
      probes({ executables: ["/opt/ef/edit-fidelity", "/usr/bin/edit-fidelity"], active: "/venv/bin/python" }),
    );
    expect(d.ok && d.server).toMatchObject({ command: "/opt/ef/edit-fidelity", args: ["serve", "--verbose"] });
  });

  it("does not silently fall back when the configured path is wrong", async () => {
    const d = await discoverServer({ ...none, path: "/nope/edit-fidelity" }, probes({ executables: ["/usr/bin/edit-fidelity"] }));
    expect(d.ok).toBe(false);
    expect(!d.ok && d.problem).toMatch(/editFidelity\.server\.path points to "\/nope\/edit-fidelity"/);
  });

  it("prefers the console script next to the configured interpreter", async () => {
    const p = probes({ executables: ["/proj/.venv/bin/edit-fidelity"], withServer: ["/proj/.venv/bin/python"] });
    const d = await discoverServer({ ...none, pythonPath: "/proj/.venv/bin/python" }, p);
    expect(d.ok && d.server).toMatchObject({ command: "/proj/.venv/bin/edit-fidelity", args: ["serve"] });
    expect(p.checked).toEqual([]); // no need to spawn python
  });

  it("falls back to `python -m server.cli serve` when the interpreter has the package but no script", async () => {
    const d = await discoverServer({ ...none, pythonPath: "/usr/bin/python3" }, probes({ withServer: ["/usr/bin/python3"] }));
    expect(d.ok && d.server).toMatchObject({ command: "/usr/bin/python3", args: ["-m", "server.cli", "serve"] });
  });

  it("reports a configured interpreter without the package", async () => {
    // edit-fidelity on PATH is not used: the user chose this interpreter.
    const d = await discoverServer({ ...none, pythonPath: "/usr/bin/python3" }, probes({ executables: ["/usr/local/bin/edit-fidelity"] }));
    expect(d.ok).toBe(false);
    expect(!d.ok && d.problem).toMatch(/does not have edit-fidelity installed/);
  });

  it("uses the Python extension's active interpreter before PATH", async () => {
    const d = await discoverServer(
      none,
      probes({ active: "/home/u/.venv/bin/python", executables: ["/home/u/.venv/bin/edit-fidelity", "/usr/bin/edit-fidelity"] }),
    );
    expect(d.ok && d.server.command).toBe("/home/u/.venv/bin/edit-fidelity");
    expect(d.ok && d.server.source).toMatch(/Python extension/);
  });

  it("goes on to PATH when the active interpreter lacks the package (and when the extension fails)", async () => {
    for (const p of [
      probes({ active: "/home/u/.venv/bin/python", executables: ["/usr/bin/edit-fidelity"] }),
      probes({ activeThrows: true, executables: ["/usr/bin/edit-fidelity"] }),
    ]) {
      const d = await discoverServer(none, p);
      expect(d.ok && d.server).toMatchObject({ command: "/usr/bin/edit-fidelity", args: ["serve"] });
    }
  });

  it("finds edit-fidelity.exe in a Windows venv's Scripts folder and on Path", async () => {
    const d = await discoverServer(
      { ...none, pythonPath: "C:\\envs\\ef\\python.exe" },
      probes({ platform: "win32", executables: ["C:\\envs\\ef\\Scripts\\edit-fidelity.exe"] }),
    );
    expect(d.ok && d.server.command).toBe("C:\\envs\\ef\\Scripts\\edit-fidelity.exe");
    const p = probes({ platform: "win32", executables: ["D:\\tools\\edit-fidelity.exe"] });
    p.env = { Path: "C:\\Windows;D:\\tools" };
    const d2 = await discoverServer(none, p);
    expect(d2.ok && d2.server.command).toBe("D:\\tools\\edit-fidelity.exe");
  });

  it("lists every place it looked when nothing is found", async () => {
    const d = await discoverServer(none, probes({ active: "/usr/bin/python3" }));
    expect(d.ok).toBe(false);
    expect(d.tried).toEqual([
      "Python extension's active interpreter: /usr/bin/python3 (edit-fidelity is not installed there)",
      "PATH: no edit-fidelity executable",
    ]);
  });
});
