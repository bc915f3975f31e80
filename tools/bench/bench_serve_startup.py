"""Start-up time of `edit-fidelity serve`: what an editor waits for before its first answer.

    .venv/bin/python -m tools.bench.bench_serve_startup [--runs N] [--root DIR]

`--root`: run the server of another checkout (e.g. `git archive REV | tar -x -C DIR`) to compare
before and after; its `server` package is imported from there (it comes first on sys.path).

Two figures, each the median of N fresh processes (interpreter start included):
- `serve --help`: the console script's parse path alone (python -m server.cli serve --help);
- initialize: spawn `edit-fidelity serve` (python -m server.cli serve), send `initialize`, wait for
  its answer, then shutdown/exit: the wait an editor sees.
It also prints how many modules the serve path imported and whether `benchmark` or `sandbox.cli` were
among them (the dependency rule tests/test_architecture.py asserts).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

CLI = [sys.executable, "-m", "server.cli"]
ROOT: str | None = None  # the checkout whose server runs (None: this one, the current directory)


def _frame(payload: dict) -> bytes:
    body = json.dumps(payload).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def _read_message(stream) -> dict:
    length = 0
    while (line := stream.readline()) not in (b"\r\n", b""):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(stream.read(length))


def help_seconds() -> float:
    start = time.perf_counter()
    subprocess.run([*CLI, "serve", "--help"], check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    return time.perf_counter() - start


def initialize_seconds() -> float:
    start = time.perf_counter()
    proc = subprocess.Popen(
        [*CLI, "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=ROOT,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert proc.stdin and proc.stdout
    proc.stdin.write(
        _frame(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"processId": None, "rootUri": None, "capabilities": {}},
            }
        )
    )
    proc.stdin.flush()
    while "result" not in (message := _read_message(proc.stdout)) or message.get("id") != 1:
        pass
    elapsed = time.perf_counter() - start
    proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
    proc.stdin.flush()
    while (message := _read_message(proc.stdout)).get("id") != 2:  # exit only once shutdown has answered
        pass
    proc.stdin.write(_frame({"jsonrpc": "2.0", "method": "exit"}))
    proc.stdin.flush()
    proc.wait(30)
    return elapsed


def imported_by_serve() -> list[str]:
    """Module names loaded by parsing `serve` and building the server (what start-up pays for)."""
    code = (
        "import sys; from server.cli import build_parser; build_parser(['serve']).parse_args(['serve']); "
        "from server.lsp import create_server; create_server(); print('\\n'.join(sorted(sys.modules)))"
    )
    try:  # the older build_parser() took no argv
        out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=ROOT).stdout
    except subprocess.CalledProcessError:
        code = code.replace("build_parser(['serve'])", "build_parser()")
        out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=ROOT).stdout
    return out.split()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--root", help="the checkout whose server runs (default: the current directory)")
    args = ap.parse_args()
    global ROOT
    runs, ROOT = args.runs, args.root
    help_times = [help_seconds() for _ in range(runs)]
    init_times = [initialize_seconds() for _ in range(runs)]
    modules = imported_by_serve()
    unwanted = [m for m in modules if m == "benchmark" or m.startswith(("benchmark.", "sandbox.cli"))]
    print(
        f"serve --help        median {statistics.median(help_times) * 1000:7.0f} ms  "
        f"(min {min(help_times) * 1000:.0f}, {runs} runs)"
    )
    print(
        f"initialize answered median {statistics.median(init_times) * 1000:7.0f} ms  "
        f"(min {min(init_times) * 1000:.0f}, {runs} runs)"
    )
    print(
        f"modules imported by serve + create_server: {len(modules)}; benchmark/sandbox.cli among them: "
        f"{len(unwanted)}{' (' + ', '.join(unwanted[:5]) + ' ...)' if unwanted else ''}"
    )


if __name__ == "__main__":
    main()
