"""Speed of the language layer (server/fidelity/lang) per language, on a generated ~2,000-line file.

    .venv/bin/python -m tools.bench.bench_lang                    # every language, 2,000 lines, 7 rounds
    .venv/bin/python -m tools.bench.bench_lang --lines 500 --languages java,cpp --rounds 11
    .venv/bin/python -m tools.bench.bench_lang --targets --rounds 30   # the issue's two speed targets

The file is one realistic function shape (a loop, branches, a call, a comment, a string) repeated,
inside a class where the language has classes. Figures per language, median of the rounds, in ms:
  parse     a full tree-sitter parse of the text
  lex       tokens of a freshly parsed text with the unit cache empty (the first sight of a file)
  cold      parse + tokens + functions (with both complexities) + guards + bindings, caches empty
  edit      after a one-token edit in the middle: incremental parse from the previous tree + tokens
            (unit cache warm: only the touched unit is walked again) + functions
  distance  `no_comments` distance between the two versions (token lists already built)
  report    the full `measure(..., language=...)` report of the edit (original analysed, edited side
            new each round: the figure an editor's checkChange pays)
The tokens/s column is tokens / lex time. The header gives the load average: on a shared machine
the figures grow with it (`--min` is steadier).

Measured on the development machine (2 cores shared with other agents, load average 1.8, median of 7):
  language    lines  tokens   parse     lex    cold    edit  distance  report   tokens/s
  javascript   2000   12750    5.31   10.94   38.40    6.12     0.141   19.41  1,165,210
  typescript   2000   15500    6.21   13.61   51.52    7.22     0.173   22.14  1,139,117
  tsx          1998   28971   10.30   26.29   94.65   15.23     0.358   47.44  1,102,070
  java         2000   14879    5.92   14.14   49.67    7.91     0.156   24.22  1,052,605
  c            1999   17540    6.51   15.59   54.11    6.86     0.196   23.43  1,125,141
  cpp          2002   15105    6.35   14.06   48.67    7.11     0.160   21.57  1,074,273
  go           1992    7672    2.71    8.23   25.14    3.68     0.085   12.42    931,749
  rust         2001   14660    6.09   13.54   47.59    8.04     0.160   22.62  1,082,580
A first sight of a 2,000-line file costs parse + lex (~15-20 ms; TSX's dense markup ~40 ms); an edit
costs a few ms, most of it rebuilding the token lists (the touched unit is the only one walked); the
full report of that edit ~20-25 ms (TSX ~47).
When other runs hold the CPUs the same command has shown 2-3x these figures.

`--targets` (the issue's two targets, each beside a Python baseline from the same run), measured here:
  load 2.3: checkChange through the server, TypeScript 2,000 lines 30.3 ms median (target <= 50),
            Python 2,014 lines 12.6 ms (ratio 2.40); full report, Java 497 lines 10.2 ms (target <= 20),
            Python 514 lines 6.4 ms (ratio 1.58)
  load 8.9: 42.5 ms / 9.7 ms (ratio 4.36); 6.1 ms / 3.7 ms (ratio 1.65)
Where the TypeScript checkChange goes (cProfile, in process): the two whole-tree tree-sitter queries of
the edited side (functions, syntax facts) about a quarter, the per-function records and the token
lists most of the rest; the functions and facts are not yet cached per top-level unit as the tokens
and the complexities are.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable

import server.fidelity.lang as L
from server.fidelity.measure import measure

# One unit of each language: about 10 lines; `{i}` makes every copy distinct.
UNITS = {
    "javascript": (
        "",
        "function f{i}(items, limit = 10) {{\n  // sum the positive items\n  let total = 0;\n"
        "  for (const x of items) {{\n    if (x > 0 && x < limit) {{ total += x; }} else {{ total -= 1; }}\n"
        "  }}\n  return `total ${{total}} of {i}`;\n}}\n",
        "",
    ),
    "typescript": (
        "",
        "export function f{i}(items: number[], limit: number = 10): string {{\n"
        "  // sum the positive items\n  let total: number = 0;\n  for (const x of items) {{\n"
        "    if (x > 0 && x < limit) {{ total += x; }} else {{ total -= 1; }}\n  }}\n"
        "  return `total ${{total}} of {i}`;\n}}\n",
        "",
    ),
    "tsx": (
        "",
        "export const C{i} = (p: {{ items: number[] }}) => {{\n  // render the positive items\n"
        "  const xs = p.items.filter((x) => x > 0);\n  if (xs.length === 0) {{ return null; }}\n"
        '  return <ul className="list">{{xs.map((x) => <li key={{x}}>{{x}} of {i}</li>)}}</ul>;\n}};\n',
        "",
    ),
    "java": (
        "public class Big {\n",
        "  /** Sums the positive items. */\n  public int f{i}(int[] items, int limit) {{\n"
        "    int total = 0; // running sum\n    for (int x : items) {{\n"
        "      if (x > 0 && x < limit) {{ total += x; }} else {{ total -= 1; }}\n    }}\n"
        '    System.out.println("total " + total + " of {i}");\n    return total;\n  }}\n',
        "}\n",
    ),
    "c": (
        "#include <stdio.h>\n",
        "/* sums the positive items */\nint f{i}(const int *items, int n, int limit) {{\n"
        "  int total = 0;\n  for (int k = 0; k < n; k++) {{\n"
        "    if (items[k] > 0 && items[k] < limit) {{ total += items[k]; }} else {{ total -= 1; }}\n  }}\n"
        '  printf("total %d of {i}\\n", total);\n  return total;\n}}\n',
        "",
    ),
    "cpp": (
        "#include <vector>\nclass Big {\n public:\n",
        "  // sums the positive items\n"
        "  int f{i}(const std::vector<int>& items, int limit) const {{\n    int total = 0;\n"
        "    for (auto x : items) {{\n      if (x > 0 && x < limit) {{ total += x; }} else {{ total -= 1; }}\n    }}\n"
        '    std::printf("total %d of {i}\\n", total);\n    return total;\n  }}\n',
        "};\n",
    ),
    "go": (
        'package big\n\nimport "fmt"\n\n',
        "// F{i} sums the positive items.\nfunc F{i}(items []int, limit int) int {{\n"
        "\ttotal := 0\n\tfor _, x := range items {{\n\t\tif x > 0 && x < limit {{\n\t\t\ttotal += x\n"
        '\t\t}} else {{\n\t\t\ttotal--\n\t\t}}\n\t}}\n\tfmt.Printf("total %d of {i}\\n", total)\n\treturn total\n}}\n\n',
        "",
    ),
    "rust": (
        "pub struct Big;\nimpl Big {\n",
        "    /// Sums the positive items.\n"
        "    pub fn f{i}(&self, items: &[i32], limit: i32) -> i32 {{\n        let mut total = 0;\n"
        "        for x in items {{\n            if *x > 0 && *x < limit {{ total += x; }} else {{ total -= 1; }}\n"
        '        }}\n        println!("total {{}} of {i}", total);\n        total\n    }}\n',
        "}\n",
    ),
}


def make_text(lang: str, lines: int) -> str:
    head, unit, tail = UNITS[lang]
    per = unit.format(i=0).count("\n")
    body = "".join(unit.format(i=i) for i in range(max(1, lines // per)))
    return head + body + tail


STAT: list[Callable[[list[float]], float]] = [
    statistics.median
]  # --min: the least of the rounds (steadier on a shared, loaded machine)


def _ms(fn, rounds: int, setup=None) -> float:
    """The chosen statistic of `rounds` timings of `fn(setup())` (setup untimed) in ms."""
    times = []
    for _ in range(rounds):
        arg = setup() if setup is not None else None
        t = time.perf_counter()
        fn(arg) if setup is not None else fn()
        times.append((time.perf_counter() - t) * 1000)
    return STAT[0](times)


def _cold(text: str, lang: L.Lang) -> None:
    L.clear_caches()
    src = L.parse(text, lang)
    L.lex(src)
    L.functions(src)
    L.guards(src)
    L.bindings(src)


def bench(name: str, lines: int, rounds: int) -> dict[str, float]:
    lang = L.by_name(name)
    text = make_text(name, lines)
    mid = text.index("> 0", len(text) // 2)
    edited = text[:mid] + "> 1" + text[mid + 3 :]
    parse_ms = _ms(lambda: L.parse(text, lang), rounds)

    def fresh() -> L.Source:
        L.clear_caches()
        return L.parse(text, lang)

    # timed on its own (not "parse + lex - parse": on a loaded machine that difference went negative
    # and the tokens/s column ran into the distance column)
    lex_ms = _ms(L.lex, rounds, setup=fresh)
    cold_ms = _ms(lambda: _cold(text, lang), rounds)
    L.clear_caches()
    base = L.parse(text, lang)
    L.lex(base)
    L.functions(base)

    def edit() -> None:
        src = L.parse(edited, lang, previous=base)
        L.lex(src)
        L.functions(src)

    edit_ms = _ms(edit, rounds)
    after = L.parse(edited, lang)
    tokens = len(L.lex(base).strings)
    a, b = L.lex(base).strings, L.lex(after).strings
    dist_ms = _ms(lambda: L.token_distance(a, b), rounds)
    assert L.token_distance(a, b)[0] == 1
    digits = iter(range(1, 10**6))

    def report() -> None:  # a different edit each round: the edited side is never a cache hit
        measure(text, text[:mid] + f"> {next(digits)}" + text[mid + 3 :], language=name)

    measure(text, edited, language=name)  # the original analysed once, as an open document is
    report_ms = _ms(report, rounds)
    return {
        "lines": text.count("\n"),
        "tokens": tokens,
        "parse": parse_ms,
        "lex": lex_ms,
        "cold": cold_ms,
        "edit": edit_ms,
        "distance": dist_ms,
        "report": report_ms,
        "tok_s": tokens / lex_ms * 1000 if lex_ms > 0 else float("nan"),
    }


async def _server_check_change(text: str, language_id: str, uri: str, edit, rounds: int) -> list[float]:
    """`editFidelity.checkChange` round trips (ms) through the real server (a subprocess over stdio),
    a different small edit before each."""
    from lsprotocol import types

    from tools.bench.bench_lsp import start_client, stop_client

    client = await start_client({"editFidelity": {"observeChanges": False}})
    try:
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(uri=uri, language_id=language_id, version=1, text=text)
            )
        )
        times = []
        for k in range(rounds + 1):  # the first round opens the document's analyses: not counted
            client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=k + 2),
                    content_changes=[types.TextDocumentContentChangeWholeDocument(text=edit(text, k))],
                )
            )
            t = time.perf_counter()
            result = await client.workspace_execute_command_async(
                types.ExecuteCommandParams(
                    command="editFidelity.checkChange", arguments=[{"uri": uri, "baseline": "snapshot"}]
                )
            )
            if k:
                times.append((time.perf_counter() - t) * 1000)
            if result is None:
                raise SystemExit("bench_lang: checkChange answered nothing")
            hunks = result["report"]["hunks"] if isinstance(result, dict) else result.report.hunks
            if not hunks:
                raise SystemExit("bench_lang: checkChange found no change (the server did not see the edit)")
    finally:
        await stop_client(client)
    return times


def targets(rounds: int) -> int:
    """The issue's two speed targets, each beside a Python baseline measured in the same run:
    checkChange through the server on a 2,000-line TypeScript file (<= 50 ms median) against the same
    on a 2,000-line Python file; a full report on a 500-line Java file (<= 20 ms) against a full
    Python report on a 500-line file."""
    import asyncio

    from tools.bench.bench_lsp import make_file, variant

    ts_text = make_text("typescript", 2000)
    mid = ts_text.index("> 0", len(ts_text) // 2)

    def ts_edit(text: str, k: int) -> str:
        return text[:mid] + f"> {k + 1}" + text[mid + 3 :]

    py_text = make_file(2000)
    ts = asyncio.run(_server_check_change(ts_text, "typescript", "file:///bench/big.ts", ts_edit, rounds))
    py = asyncio.run(_server_check_change(py_text, "python", "file:///bench/big.py", variant, rounds))
    java = make_text("java", 500)
    jmid = java.index("> 0", len(java) // 2)
    py500 = make_file(500)
    digits = iter(range(1, 10**6))
    measure(java, java, language="java")
    measure(py500, py500)
    java_ms = _ms(lambda: measure(java, java[:jmid] + f"> {next(digits)}" + java[jmid + 3 :], language="java"), rounds)
    py_ms = _ms(lambda: measure(py500, variant(py500, next(digits))), rounds)
    t, p = STAT[0](ts), STAT[0](py)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"targets ({'min' if STAT[0] is min else 'median'} of {rounds}, load average {load:.1f} on {os.cpu_count()} CPUs)"
    )
    print(
        f"  checkChange, server, TypeScript {ts_text.count(chr(10))} lines: {t:7.2f} ms (target <= 50)   "
        f"Python {py_text.count(chr(10))} lines: {p:7.2f} ms   ratio {t / p:.2f}"
    )
    print(
        f"  full report, Java {java.count(chr(10))} lines:             {java_ms:7.2f} ms (target <= 20)   "
        f"Python {py500.count(chr(10))} lines: {py_ms:7.2f} ms   ratio {java_ms / py_ms:.2f}"
    )
    return 0 if t <= 50 and java_ms <= 20 else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--targets",
        action="store_true",
        help="the issue's targets: checkChange through the server (TypeScript, 2,000 lines) and a "
        "full report (Java, 500 lines), each beside a Python baseline; exit 1 if one is missed",
    )
    parser.add_argument("--lines", type=int, default=2000, help="lines of the generated file (default 2000)")
    parser.add_argument("--rounds", type=int, default=7, help="rounds per figure, median reported (default 7)")
    parser.add_argument("--languages", default=",".join(UNITS), help="comma-separated (default: all)")
    parser.add_argument("--min", action="store_true", help="report the fastest round instead of the median")
    args = parser.parse_args(argv)
    STAT[0] = min if args.min else statistics.median
    if args.targets:
        return targets(args.rounds)
    names = [n.strip() for n in args.languages.split(",") if n.strip()]
    unknown = [n for n in names if n not in UNITS]
    if unknown or not names:
        print(
            f"bench_lang: unknown language {', '.join(unknown) or '(none)'}; choose from {', '.join(UNITS)}",
            file=sys.stderr,
        )
        return 2
    if not 10 <= args.lines <= 200_000 or not 1 <= args.rounds <= 1000:
        print("bench_lang: --lines must be 10..200000 and --rounds 1..1000", file=sys.stderr)
        return 2
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"{'language':<11}{'lines':>6}{'tokens':>8}{'parse':>8}{'lex':>8}{'cold':>8}{'edit':>8}"
        f"{'distance':>10}{'report':>8}{'tokens/s':>11}   (ms, {'min' if args.min else 'median'} of {args.rounds};"
        f" load average {load:.1f} on {os.cpu_count()} CPUs)"
    )
    for name in names:
        r = bench(name, args.lines, args.rounds)
        print(
            f"{name:<11}{r['lines']:>6}{r['tokens']:>8}{r['parse']:>8.2f}{r['lex']:>8.2f}{r['cold']:>8.2f}"
            f"{r['edit']:>8.2f}{r['distance']:>10.3f}{r['report']:>8.2f} {r['tok_s']:>10,.0f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
