"""The run report's HTML opened in a real headless Chromium: the sample table renders, `?filter` URL
parameters narrow it, `?sample=ID` opens one sample with its flagged units, and a screenshot renders.
The run is a real `bench run` (gold backend, real server and sandbox) made once for the module."""

import json
import os
import re
import struct
from pathlib import Path

import msgspec
import pytest

from benchmark import cli
from benchmark.report.browser import render_browser, sample_id
from benchmark.run.records import SampleRecord, UnitView
from benchmark.run.store import RESULTS, read_records
from sandbox import envs
from tests.benchmark.cli_runs import bench
from tools import headless

DATA = Path(os.environ.get("EDIT_FIDELITY_DATA") or Path(__file__).resolve().parents[3] / "shared" / "data")

pytestmark = [
    pytest.mark.skipif(headless.chromium() is None, reason="chromium missing: scripts/setup installs it"),
]
needs_run = [
    pytest.mark.skipif(
        not (DATA / "canitedit" / "canitedit_test.jsonl").exists(), reason=f"no CanItEdit data at {DATA}"
    ),
    pytest.mark.skipif(
        not envs.is_prepared("canitedit"), reason="sandbox suite env missing: run scripts/setup-sandbox"
    ),
]


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    for mark in needs_run:
        if mark.args[0]:
            pytest.skip(mark.kwargs["reason"])
    out = tmp_path_factory.mktemp("report") / "gold"
    code, _ = bench(
        "run",
        "--suite",
        "canitedit",
        "--backend",
        "gold",
        "--limit",
        "3",
        "--out",
        str(out),
        "--data",
        str(DATA),
        "--quiet",
        "--workers",
        "2",
    )
    assert code == 0
    return out


@pytest.fixture(scope="module")
def page(run: Path) -> Path:
    code, html = bench("report", str(run), "--format", "html")
    assert code == 0
    target = run.parent / "page.html"
    target.write_text(html)
    return target


def rows(dom: str) -> list[str]:
    return re.findall(r'<tr data-id="([^"]+)"', dom)


def test_format_html_writes_the_page_to_stdout_and_html_writes_a_file(run: Path, page: Path, tmp_path: Path):
    html = page.read_text()
    assert html.startswith("<!doctype html>") and html.rstrip().endswith("</html>")
    assert len(html) > 10_000  # the page, not a path
    code, text = bench("report", str(run), "--html", str(tmp_path / "r.html"))
    assert code == 0 and "pass@1" in text and not text.lstrip().startswith("<")  # text on stdout, page in FILE
    assert (tmp_path / "r.html").read_text() == html
    # self-contained: nothing fetched from anywhere
    assert not re.search(r'(src|href)="(https?:)?//', html)


def test_sample_table_renders_every_sample(run: Path, page: Path):
    dom = headless.dump_dom(page)
    records = read_records(run / RESULTS)
    assert sorted(rows(dom)) == sorted(sample_id(r) for r in records)
    assert f"{len(records)} of {len(records)} samples" in dom
    assert 'data-ready="1"' in dom


def test_filter_parameters_narrow_the_table(run: Path, page: Path):
    records = read_records(run / RESULTS)
    flagged = {sample_id(r) for r in records if r.flagged_hunks > 0}
    renamed = {sample_id(r) for r in records if any("rename" in u.kinds for u in r.units or [])}
    assert flagged and len(flagged) < len(records) and renamed and len(renamed) < len(records)
    assert set(rows(headless.dump_dom(page, flagged="yes"))) == flagged
    assert set(rows(headless.dump_dom(page, filter="kind:rename"))) == renamed
    assert set(rows(headless.dump_dom(page, kind="rename", condition="lazy"))) == {i for i in renamed if ":lazy:" in i}
    dom = headless.dump_dom(page, outcome="fail")  # gold passes everywhere
    assert rows(dom) == [] and f"0 of {len(records)} samples" in dom


@pytest.mark.parametrize("which", [0, -1])  # gold's lazy sample shares its descriptive one's diff (stored once)
def test_one_sample_shows_its_diff_with_flagged_units(run: Path, page: Path, which: int):
    rec = [r for r in read_records(run / RESULTS) if r.flagged_hunks > 0][which]
    dom = headless.dump_dom(page, sample=sample_id(rec))
    detail = dom[dom.index('<div id="detail"') :]
    detail = detail[: detail.index("</div>")]  # the opened sample (no nested divs), not the script after it
    assert f'data-id="{sample_id(rec)}"' in detail[:200]
    flagged_units = [u for u in rec.units or [] if u.flagged]
    assert flagged_units
    # each flagged unit's lines carry its kind and the flag; the unit list repeats its message
    marked = re.findall(r'<span class="line (?:add|del) unit kind-([a-z_]+) flagged" data-unit="(\d+)"', detail)
    assert {k for k, _ in marked} >= {u.kinds[0] for u in flagged_units}
    for u in flagged_units:  # the server's own message, as DOM text (only & < > escaped)
        assert u.message and u.message.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") in detail
    assert detail.count("FLAGGED") == len(flagged_units)
    assert "Gold edit" in detail and "Verdict" in detail and "excess ELev" in detail


def test_side_by_side_view_marks_the_same_units(run: Path, page: Path):
    rec = next(r for r in read_records(run / RESULTS) if r.flagged_hunks > 0)
    dom = headless.dump_dom(page, sample=sample_id(rec), view="split")
    split = dom[dom.index('<table class="diff split">') :]
    split = split[: split.index("</table>")]
    flagged = {str(i) for i, u in enumerate(rec.units or []) if u.flagged}
    marked = set(re.findall(r'<td class="line (?:add|del) unit kind-[a-z_]+ flagged" data-unit="(\d+)"', split))
    assert flagged and marked == flagged
    assert "side-by-side" not in dom.split('<div id="detail"')[1][:2000] and "unified view" in dom  # the toggle


def test_a_flagged_unit_inside_a_wider_units_lines_is_still_marked(run: Path, tmp_path: Path):
    """Units are finer than lines and their spans nest: a line shows the flagged unit, not the wide one."""
    import shutil

    copy = tmp_path / "nested"
    shutil.copytree(run, copy)
    records = read_records(run / RESULTS)
    rec = next(r for r in records if r.flagged_hunks > 0)
    wide = UnitView(lines=(1, 10_000, 1, 10_000), kinds=["logic"], message="changes logic")
    rec.units = [wide, *(rec.units or [])]  # first in the list, and around every line
    (copy / RESULTS).write_bytes(b"".join(msgspec.json.encode(r) + b"\n" for r in records))
    code, html = bench("report", str(copy), "--format", "html")
    assert code == 0
    (copy / "page.html").write_text(html)
    for view in ("unified", "split"):
        dom = headless.dump_dom(copy / "page.html", sample=sample_id(rec), view=view)
        detail = dom[dom.index('<div id="detail"') :]
        flagged = {str(i) for i, u in enumerate(rec.units) if u.flagged}
        marked = set(re.findall(r'class="line (?:add|del) unit kind-[a-z_]+ flagged" data-unit="(\d+)"', detail))
        assert flagged and marked == flagged, view


def test_screenshot_renders(page: Path, tmp_path: Path):
    shot = headless.screenshot(page, tmp_path / "report.png", 1280, 1600, sample="none")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1280, 1600) and len(data) > 20_000  # not a blank page


def test_old_records_and_hostile_text_render(tmp_path: Path):
    """Records from before `units` (no field) load and show; a completion with `</script>` stays text."""
    old = msgspec.json.decode(
        json.dumps(
            {
                "suite": "canitedit",
                "task_id": "t1",
                "task": "t1",
                "condition": "lazy",
                "backend": "b",
                "sample": 0,
                "outcome": "fail",
                "completion": "x = '</script><b id=evil>'\n",
            }
        ),
        type=SampleRecord,
    )
    assert old.units is None
    new = SampleRecord(
        suite="canitedit",
        task_id="t2",
        task="t2",
        condition="lazy",
        backend="b",
        sample=0,
        outcome="sandbox_error",
        error="sandbox died",
        hunks=1,
        flagged_hunks=1,
        units=[UnitView(lines=(1, 1, 1, 1), kinds=["rename"], flagged=True, message="renamed a")],
    )
    from benchmark.report.html import page as full_page

    html = full_page({"suite": "canitedit", "backend": "b"}, "", render_browser([old, new]))
    (tmp_path / "p.html").write_text(html)
    dom = headless.dump_dom(tmp_path / "p.html", sample="t1:lazy:0")
    assert sorted(rows(dom)) == ["t1:lazy:0", "t2:lazy:0"]
    assert 'id="evil"' not in dom and "&lt;/script&gt;&lt;b id=evil&gt;" in dom
    assert rows(headless.dump_dom(tmp_path / "p.html", outcome="error")) == ["t2:lazy:0"]


def test_compare_page_sorts_warns_and_lists_task_differences(run: Path, tmp_path: Path):
    code, _ = bench(
        "run",
        "--suite",
        "canitedit",
        "--backend",
        "identity",
        "--limit",
        "2",
        "--out",
        str(tmp_path / "identity"),
        "--data",
        str(DATA),
        "--quiet",
        "--workers",
        "2",
    )
    assert code == 0
    code, html = bench("compare", str(tmp_path / "identity"), str(run), "--format", "html")
    assert code == 0 and html.startswith("<!doctype html>")
    code, _ = bench("compare", str(tmp_path / "identity"), str(run), "--html", str(tmp_path / "cmp.html"))
    assert code == 0 and (tmp_path / "cmp.html").read_text() == html
    dom = headless.dump_dom(tmp_path / "cmp.html", sort="pass rate")
    board = dom[dom.index('<table id="leaderboard"') :]
    board = board[: board.index("</table>")]
    first_cells = re.findall(r"<tr><td[^>]*>(?:<a [^>]*>)?([^<]+)", board)
    assert first_cells == ["gold", "gold", "identity", "identity"]  # pass rate, highest first
    assert re.search(r'data-sorted="\d+:desc"', dom)
    # identity covers 2 of gold's 3 tasks: a warning, and the per-task table has the 2 shared tasks
    assert 'id="coverage"' in dom and "not in every run" in dom
    tasks = dom[dom.index('<table id="tasks"') :]
    tasks = tasks[: tasks.index("</table>")]
    ids = {r.task_id for r in read_records(tmp_path / "identity" / RESULTS)}
    assert len(re.findall(r"<tr><td>", tasks)) == 2 * len(ids)
    assert tasks.count('class="cell-fail"') == 2 * len(ids) and tasks.count('class="cell-minimal"') == 2 * len(ids)


def test_an_unwritable_html_path_is_one_line(run: Path, tmp_path: Path, capsys):
    for argv in (
        ["report", str(run), "--html", str(tmp_path)],
        ["compare", str(run), "--html", str(tmp_path / "no" / "x")],
    ):
        assert cli.main(["bench", *argv]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "cannot write the HTML page" in err[0] and "Traceback" not in err[0]
