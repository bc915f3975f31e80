"""thresholds.distanceWarning through the real server: a proposal whose no_comments token distance
exceeds it is marked `heavy` and named in the request's warnings; one under it is not."""

from __future__ import annotations

from lsp_helpers import FIXED, SAMPLE, execute, settings_for, start_session

from server.fidelity import measure
from tools.doubles.scripted import Step, fenced

URI = "file:///tmp/heavy.py"
# The same fix as `fix`, with the function rewritten around it.
REWRITE = '''import math


def mean_above(values, limit):
    """Mean of the values above limit."""
    chosen = [value for value in values if value > limit]
    return sum(chosen) / len(chosen) if chosen else 0.0


def unrelated(x):
    return x * 2
'''
LIMIT = 0.2


async def test_a_proposal_over_distance_warning_is_heavy_and_warned_about(lsp, backend):
    backend.scripts["rewrite"] = [Step(content=lambda req: fenced(REWRITE))]
    heavy = measure(SAMPLE, REWRITE).distance["no_comments"].normalized
    light = measure(SAMPLE, FIXED).distance["no_comments"].normalized
    assert light < LIMIT < heavy  # the scripted answers lie on both sides of the threshold
    settings = settings_for(backend, "fix", "rewrite")
    settings["thresholds"]["distanceWarning"] = LIMIT
    editor = await start_session(lsp, settings)
    editor.open(URI, SAMPLE)

    result = await execute(lsp, "editFidelity.requestEdit", {"uri": URI, "version": 1, "instruction": "fix the bug"})
    by_backend = {p["backend"]: p for p in result["proposals"]}
    assert by_backend["rewrite"]["heavy"] is True and by_backend["fix"]["heavy"] is False
    assert result["warnings"] == [
        f"rewrite: the proposal rewrites {heavy:.0%} of the code (no_comments token "
        f"distance {heavy:.2f} > thresholds.distanceWarning {LIMIT:g})"
    ]

    rows = (
        await execute(lsp, "editFidelity.compareBackends", {"uri": URI, "version": 1, "instruction": "fix the bug"})
    )["rows"]
    assert {r["backend"]: r["heavy"] for r in rows} == {"fix": False, "rewrite": True}


async def test_the_default_threshold_lets_a_one_token_fix_through(lsp, backend):
    editor = await start_session(lsp, settings_for(backend, "fix"))
    editor.open(URI, SAMPLE)
    result = await execute(lsp, "editFidelity.requestEdit", {"uri": URI, "version": 1, "instruction": "fix the bug"})
    [p] = result["proposals"]
    assert p["status"] == "ok" and p["heavy"] is False and result["warnings"] == []
