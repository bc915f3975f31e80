"""Each suite's HTML report in headless Chromium: can-ai-code's score per interview, CodeEditorBench's
pass@1 per kind and its Win Rate on the comparison page, every sample in the browser. Real runs (gold,
identity) through the real CLI, server and sandbox."""

import json
import re
from pathlib import Path

import pytest

from benchmark import suites
from benchmark.report.browser import sample_id
from benchmark.run.store import RESULTS, read_records
from tests.benchmark.cli_runs import CebRun, bench, quiet_run
from tools import headless

pytestmark = pytest.mark.skipif(headless.chromium() is None, reason="chromium missing: scripts/setup installs it")


def make_run(out: Path, suite: str, backend: str, data: Path, limit: str) -> Path:
    quiet_run(out, suite, backend, data, "--limit", limit, "--allow-errors")
    return out


def page_of(run: Path) -> Path:
    code, html = bench("report", str(run), "--format", "html")
    assert code == 0 and html.startswith("<!doctype html>")
    (run / "page.html").write_text(html)
    return run / "page.html"


def figures(dom: str) -> list[str]:
    return re.findall(r'<figure class="chart" aria-label="([^"]+)"', dom)


def test_canaicode_report_has_the_score_per_interview(canaicode_root: Path, tmp_path: Path):
    run = make_run(tmp_path / "gold", "canaicode", "gold", canaicode_root.parent, "2")
    dom = headless.dump_dom(page_of(run))
    assert "score per interview" in figures(dom) and "score per condition" in figures(dom)
    records = read_records(run / RESULTS)
    assert sorted(re.findall(r'<tr data-id="([^"]+)"', dom)) == sorted(sample_id(r) for r in records)
    assert "Questions that lost points (0)" in dom  # gold scores full points


def test_codeeditorbench_report_and_win_rate(ceb_runs: dict[str, CebRun], tmp_path: Path):
    # the session's gold and identity runs (`--limit 1`), which test_codeeditorbench checks verdict by verdict
    gold, identity = ceb_runs["gold"][0], ceb_runs["identity"][0]
    dom = headless.dump_dom(page_of(gold))
    assert "pass@1 per kind" in figures(dom) and "verdicts per condition" in figures(dom)
    code, html = bench("compare", str(gold), str(identity), "--format", "html")
    assert code == 0
    (tmp_path / "cmp.html").write_text(html)
    dom = headless.dump_dom(tmp_path / "cmp.html")
    table = dom[dom.index('<table class="win-rate">') :]
    table = table[: table.index("</table>")]
    got = re.findall(r"<tr><td>([^<]+)</td><td>([^<]+)</td>", table)
    summaries = {n: json.loads((d / "summary.json").read_text()) for n, d in (("gold", gold), ("identity", identity))}
    rates = suites.get("codeeditorbench").reporter.compare(summaries)[0]["win_rate"]
    assert [name for name, _ in got] == sorted(rates, key=lambda k: -rates[k]["win_rate"])
    assert {name: float(v) for name, v in got} == pytest.approx({k: w["win_rate"] for k, w in rates.items()}, abs=1e-3)


def test_text_column_headers_are_never_cut(shared_data: Path):
    """Text reports stay for terminals and CI logs: each header in full, each row as wide as its header."""
    from benchmark.report.summary import render_compare
    from benchmark.suites.bics import BUG_TYPES
    from benchmark.suites.bics.suite import published_report

    if not (shared_data / "bics" / "stats").is_dir():
        pytest.skip("no BICS published results")
    lines = published_report(shared_data / "bics" / "stats", "text").splitlines()
    head = next(line for line in lines if line.startswith("per bug type, parseable"))
    assert all(f" {b}" in head for b in BUG_TYPES)
    rows = lines[lines.index(head) + 2 : lines.index(head) + 5]
    assert rows and all(len(r) == len(head) for r in rows)
    long = {"flagged_warning_normalised_mean": 0.25, "pass@1": 0.5}
    summary = {"suite": "canaicode", "backend": "b", "conditions": {"c": long}}  # its compare: the generic table
    table = render_compare([summary, {**summary, "backend": "b2"}]).splitlines()
    assert "flagged_warning_normalised_mean" in table[1] and len(table[3]) == len(table[1])
