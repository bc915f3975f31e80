"""How often the judge warns on the reference edits themselves (issue 22).

A reference edit is by definition what its instruction asked for, so every unit flagged on it at
warning severity is a false alarm. Prints, for the judge with instruction awareness off (the core's
view, every unrequested-looking kind counts) and on, in the same run:

- CanItEdit gold (`before` -> `after`), per instruction kind (descriptive, lazy): units, flagged units at
  warning severity (error or warning) and at hint severity (information or hint), then every remaining
  warning unit with the judge's reason.
- Over-editing gold (corrupted -> canonical solution), measured on the paper's footing: against the
  normalised code the model was given (`ast.unparse`, like the paper's distance), so the dataset's
  layout differences are not counted; the raw texts are shown alongside for reference. Every unit of
  the normalised comparison is the fix itself, so any flag there is a flagged fix.

- Recall on real over-edits (`--suite injected`): known unrequested changes injected on top of each CanItEdit
  gold `after`, into functions the original already has (a rename of a local, an `is None` guard that
  raises, a removed docstring, a removed comment, an unused import), judged with each instruction kind:
  the share of injected changes whose unit is still flagged. The instruction must not excuse them.

It calls the core (`measure`) and the judge (`flag_units`, `unit_views`) directly, without the server:
the same functions `requestEdit` uses, minus the transport.

    python -m tools.bench.bench_gold_flags [--data DIR] [--limit N] [--suite canitedit|overedit|injected|all]
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass, field

from server.fidelity import FidelityReport, measure, normalize
from server.lsp.flagging import flag_units
from server.lsp.settings import Thresholds
from server.lsp.unit_views import count_flags, statement_views, unit_views

WARNING = 2  # LSP severities 1 (error) and 2 (warning) count as warnings; 3 and 4 as hints


@dataclass
class Tally:
    units: int = 0
    warn: int = 0
    hint: int = 0
    tasks: int = 0
    tasks_warned: int = 0
    kinds: Counter = field(default_factory=Counter)
    listed: list[str] = field(default_factory=list)

    def add(
        self,
        name: str,
        report: FidelityReport,
        instruction: str | None,
        *,
        aware: bool,
        original: str,
        edited: str,
        keep: bool,
        hints: bool,
    ) -> None:
        flagged = flag_units(report, instruction, original=original, edited=edited, aware=aware)
        views = unit_views(report, flagged, Thresholds(), edited_side=False)
        statements = statement_views(report, flagged, Thresholds(), edited)
        self.tasks += 1
        self.units += len(views)
        warn, hint = count_flags(views, statements)  # as the suites count them: a flagged statement is a unit
        self.warn += warn
        self.hint += hint
        self.tasks_warned += warn > 0
        for v, verdict in zip(views, flagged.verdicts):
            if not v.flagged:
                continue
            loud = v.severity <= WARNING
            if loud:
                self.kinds.update(verdict.unrequested)
            if keep and (loud or hints):
                sev = "warning" if loud else "hint"
                self.listed.append(f"  {name} L{v.start_line}-{v.end_line} [{sev}] {v.message}")
        for s in statements:
            self.units += 1
            if s.severity <= WARNING:
                self.kinds.update(s.kinds)
            if keep and (s.severity <= WARNING or hints):
                self.listed.append(f"  {name} statement L{s.start_line}-{s.end_line} {s.message}")

    def row(self, label: str) -> str:
        pct = 100.0 * self.warn / self.units if self.units else 0.0
        kinds = ", ".join(f"{k} {n}" for k, n in self.kinds.most_common())
        return (
            f"{label:<34} {self.units:>5} {self.warn:>5} {pct:>6.1f}% {self.hint:>5} "
            f"{self.tasks_warned:>4}/{self.tasks:<4} {kinds}"
        )


HEADER = f"{'':<34} {'units':>5} {'warn':>5} {'warn%':>7} {'hint':>5} {'tasks warned':>9}  warning kinds"


def canitedit_rows(data: str | None, limit: int | None, hints: bool) -> list[str]:
    from benchmark.suites import canitedit

    problems = canitedit.load(data, limit)
    out = [
        "CanItEdit gold (before -> after), 105 problems" if not limit else f"CanItEdit gold, {len(problems)} problems",
        HEADER,
    ]
    listed: list[str] = []
    reports = [(p, measure(p.before, p.after)) for p in problems]
    for condition in canitedit.CONDITIONS:
        for aware in (False, True):
            t = Tally()
            for p, report in reports:
                t.add(
                    p.full_name,
                    report,
                    p.instruction(condition),
                    aware=aware,
                    original=p.before,
                    edited=p.after,
                    keep=aware,
                    hints=hints,
                )
            out.append(t.row(f"{condition}, instruction {'on' if aware else 'off'}"))
            if aware:
                listed += [f"{condition}:"] + (t.listed or ["  (none)"])
    return out + ["", "remaining flagged units (instruction on):", *listed]


def overedit_rows(data: str | None, limit: int | None) -> list[str]:
    from benchmark.suites import overedit

    tasks, errors = overedit.load(data, limit)
    out = [
        f"Over-editing gold (corrupted -> canonical), {len(tasks)} tasks"
        + (f", {len(errors)} bad rows" if errors else ""),
        HEADER,
    ]
    condition = overedit.CONDITIONS[0]
    listed: list[str] = []
    for footing in ("raw texts", "normalised (paper)"):
        pairs = []
        for task in tasks:
            c, g = task.corrupted_solution, task.canonical_solution
            if footing != "raw texts":
                c, g = normalize(c), normalize(g)
            pairs.append((task, c, g, measure(c, g)))
        for aware in (False, True):
            t = Tally()
            for task, c, g, report in pairs:
                t.add(
                    task.task_id,
                    report,
                    task.instruction(condition),
                    aware=aware,
                    original=c,
                    edited=g,
                    keep=aware and footing != "raw texts",
                    hints=True,
                )
            out.append(t.row(f"{footing}, instruction {'on' if aware else 'off'}"))
            if aware and footing != "raw texts":
                listed = t.listed
    return out + ["", "flagged fix units (normalised, instruction on):", *(listed or ["  (none)"])]


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def injections(before: str, after: str) -> list[tuple[str, str, str | None]]:
    """(kind, edited text, renamed name) for each over-edit injected into `after`, one at a time, only
    into functions `before` has (an over-edit changes existing code)."""
    try:
        tree, old = ast.parse(after), ast.parse(before)
    except SyntaxError:
        return []
    existing = {n.name for n in ast.walk(old) if isinstance(n, ast.FunctionDef)}
    lines = after.splitlines(keepends=True)
    out: list[tuple[str, str, str | None]] = []
    done: set[str] = set()
    for f in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name in existing):
        head, body, tail = (
            "".join(lines[: f.lineno - 1]),
            "".join(lines[f.lineno - 1 : f.end_lineno]),
            "".join(lines[f.end_lineno :]),
        )
        params = [a.arg for a in f.args.args if a.arg not in ("self", "cls")]
        stored = [n.id for n in ast.walk(f) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
        uses = [n.id for n in ast.walk(f) if isinstance(n, ast.Name)]
        local = next((v for v in dict.fromkeys(stored) if v not in params and uses.count(v) >= 2 and len(v) > 1), None)
        if local and "rename" not in done:
            done.add("rename")
            out.append(("rename", head + re.sub(rf"\b{re.escape(local)}\b", local + "_value", body) + tail, local))
        if params and f.body and "defensive" not in done:
            done.add("defensive")
            at = f.body[0].end_lineno if _is_docstring(f.body[0]) and len(f.body) > 1 else f.body[0].lineno - 1
            pad = " " * f.body[-1].col_offset
            guard = f"{pad}if {params[0]} is None:\n{pad}    raise ValueError('{params[0]} must not be None')\n"
            out.append(("defensive", "".join(lines[:at]) + guard + "".join(lines[at:]), None))
        if len(f.body) > 1 and _is_docstring(f.body[0]) and "docstring" not in done:
            done.add("docstring")
            d = f.body[0]
            out.append(("docstring", "".join(lines[: d.lineno - 1]) + "".join(lines[d.end_lineno :]), None))
    comment = next((i for i, ln in enumerate(lines) if ln.strip().startswith("#")), None)
    if comment is not None:
        out.append(("comment_removed", "".join(lines[:comment] + lines[comment + 1 :]), None))
    out.append(("import_change", ("import json\n" if "import os" in after else "import os\n") + after, None))
    return out


def injected_rows(data: str | None, limit: int | None) -> list[str]:
    from benchmark.suites import canitedit

    problems = canitedit.load(data, limit)
    out = [
        "Injected over-edits on CanItEdit gold: share still flagged (any severity)",
        f"{'':<34} "
        + " ".join(f"{k:>16}" for k in ("rename", "defensive", "docstring", "comment_removed", "import_change")),
    ]
    cases = [
        (p, kind, text, name, measure(p.before, text))
        for p in problems
        for kind, text, name in injections(p.before, p.after)
    ]
    for condition in canitedit.CONDITIONS:
        for aware in (False, True):
            seen: Counter = Counter()
            hit: Counter = Counter()
            for p, kind, text, name, report in cases:
                units = [i for i, h in enumerate(report.hunks) if (h.renames.get(name) if name else kind in h.kinds)]
                if not units:
                    continue  # the core does not see this one: a classifier matter, not the judge's
                flagged = flag_units(report, p.instruction(condition), original=p.before, edited=text, aware=aware)
                seen[kind] += 1
                hit[kind] += any(flagged[i] for i in units)
            cells = " ".join(
                f"{hit[k]:>5}/{seen[k]:<4} {hit[k] / seen[k] if seen[k] else 0:.3f}"
                for k in ("rename", "defensive", "docstring", "comment_removed", "import_change")
            )
            out.append(f"{condition + ', instruction ' + ('on' if aware else 'off'):<34} {cells}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.bench.bench_gold_flags", description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", help="benchmark data directory (default: EDIT_FIDELITY_DATA)")
    ap.add_argument("--limit", type=int, help="first N problems / tasks of each suite")
    ap.add_argument("--suite", choices=("canitedit", "overedit", "injected", "all"), default="all")
    ap.add_argument("--list-hints", action="store_true", help="list CanItEdit units flagged at hint severity too")
    args = ap.parse_args(argv)
    if args.limit is not None and args.limit < 1:
        print("bench_gold_flags: --limit must be a positive number", file=sys.stderr)
        return 2
    from benchmark.datadir import DataError

    started = time.perf_counter()
    try:
        if args.suite in ("canitedit", "all"):
            print("\n".join(canitedit_rows(args.data, args.limit, args.list_hints)), end="\n\n")
        if args.suite in ("overedit", "all"):
            print("\n".join(overedit_rows(args.data, args.limit)), end="\n\n")
        if args.suite in ("injected", "all"):
            print("\n".join(injected_rows(args.data, args.limit)))
    except DataError as exc:
        print(f"bench_gold_flags: {exc}", file=sys.stderr)
        return 2
    print(f"\n({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    from benchmark.datadir import run_script

    raise SystemExit(run_script(main))
