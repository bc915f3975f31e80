"""Observation of changes: large incoming edits (an assistant applying a change) and `checkChange`.

A didChange that replaces more than `thresholds.largeChangeLines` lines starts (or extends) a burst;
the text before the burst is the baseline. After `debounceMs` of quiet the current buffer is
measured against it in a worker thread (per top-level block for files over `largeFileLines`) and
the result is published. Later small edits re-measure against the same baseline, debounced, until
the user dismisses it. Typing never waits for any of this.

The server's own edits (an applied proposal, a revert) are not changes to observe: their didChanges
start no burst, and once the buffer holds the edit's text the observation is measured again against
its baseline (after a revert: the same one, so the reverted units are gone and the rest stays; after
an apply: the baseline with the same edits applied, so the accepted units are not flagged).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
from collections.abc import Sequence

from lsprotocol import types
from rapidfuzz.distance import Indel

from server.fidelity import FidelityReport, TextEdit, common_affix
from server.lsp.flagging import flag_units
from server.lsp.lines import split_lines
from server.lsp.server import EditFidelityServer
from server.lsp.state import DocState, Observation, OwnEdit, owned
from server.lsp.unit_edits import UnitGeometry, offsets_of
from server.lsp.unit_views import unit_views
from server.lsp.views import publish
from server.lsp.windowed import Window, measure_windowed

logger = logging.getLogger(__name__)


def changed_lines(prev: str, current: str, changes: Sequence[types.TextDocumentContentChangeEvent]) -> int:
    """How many lines one didChange changed: the larger of the lines removed and inserted. One partial
    change is measured by itself (typing stays cheap); several, or the whole document, by the
    document against the text before them: VS Code reports another extension's whole-file edit as
    many small changes, each within a line, which together rewrite the file."""
    if len(changes) == 1 and isinstance(changes[0], types.TextDocumentContentChangePartial):
        c = changes[0]
        spans = c.range.end.line - c.range.start.line + 1
        inserted = c.text.count("\n") + 1
        return max(spans, inserted) if (spans > 1 or inserted > 1) else 0
    a, b = split_lines(prev), split_lines(current)
    head, tail = common_affix(a, b)
    a, b = a[head : len(a) - tail], b[head : len(b) - tail]
    if not a or not b:
        return len(a) + len(b)
    # the lines both keep, in order (their longest common subsequence), are not changed
    kept = (len(a) + len(b) - Indel.distance(a, b)) // 2
    return max(len(a), len(b)) - kept


def schedule(ls: EditFidelityServer, state: DocState, delay_s: float) -> None:
    if state.observe_task is not None and not state.observe_task.done():
        state.observe_task.cancel()
    ls.counters["observationsScheduled"] += 1
    state.observe_task = ls.spawn(_observe_later(ls, state, delay_s), name=f"observe:{state.uri}")


async def _observe_later(ls: EditFidelityServer, state: DocState, delay_s: float) -> None:
    try:
        await asyncio.sleep(delay_s)
        await observe_now(ls, state)
    except asyncio.CancelledError:
        pass
    except Exception:  # never let a background measurement take the server down
        logger.exception("observing %s failed", state.uri)


async def observe_now(ls: EditFidelityServer, state: DocState) -> None:
    if state.observe_baseline is not None:
        baseline, source = state.observe_baseline, "observed"
    elif state.observation is not None and not state.dismissed:
        baseline, source = state.observation.baseline, state.observation.source
    else:
        return
    snap = state.current
    if baseline == snap.text:
        state.observation = None
        state.observe_baseline = None
        publish(ls, state.uri)
        return
    ls.counters["observationsMeasured"] += 1
    report, window = await ls.compute(
        owned(
            state.uri,
            functools.partial(
                measure_windowed, baseline, snap.text, ls.settings.thresholds.large_file_lines, snap.language
            ),
        )
    )
    if ls.store.docs.get(state.uri) is not state or state.current is not snap:
        return  # closed, or changed again: a newer run is scheduled
    store_observation(ls, state, baseline, snap.text, snap.version, source, report, window)


def store_observation(
    ls: EditFidelityServer,
    state: DocState,
    baseline: str,
    current: str,
    version: int,
    source: str,
    report: FidelityReport,
    window: Window | None,
) -> Observation:
    flagged = flag_units(report, None)
    geometry = UnitGeometry(baseline, current, report)
    views = unit_views(
        report,
        flagged,
        ls.settings.thresholds,
        edited_side=True,
        spans=[geometry.edited_range(i) for i in range(len(report.hunks))],
    )
    obs = Observation(
        uri=state.uri,
        version=version,
        baseline=baseline,
        current=current,
        source=source,
        report=report,
        flagged=flagged,
        views=views,
        window=window,
        geometry=geometry,
    )
    state.observation = obs
    state.observe_baseline = None
    state.dismissed = False
    publish(ls, state.uri)
    ls.refresh_code_lenses()
    return obs


# -- the server's own edits ------------------------------------------------------------------------
def _rebased(obs: Observation, current: str, edits: Sequence[TextEdit]) -> str | None:
    """The observation's baseline with `edits` (against the buffer, its edited side) applied too, so
    that what they change is not part of the observed change; None when an edit touches an observed
    unit (there is no baseline that keeps both apart)."""
    geometry = obs.geometry
    if geometry is None or geometry.spans is None or obs.current != current:
        return None
    spans = [s for unit in geometry.spans for s in unit]
    moved = []
    for (begin, end), e in zip(offsets_of(current, edits), edits, strict=True):
        if any(begin < ee and end > es or begin == end and es < begin < ee for _, _, es, ee in spans):
            return None
        shift = sum((ee - es) - (oe - ob) for ob, oe, es, ee in spans if ee <= begin and not (ee == begin == es))
        moved.append((begin - shift, end - shift, e.new_text))
    out, cursor = [], 0
    base = obs.baseline
    for begin, end, text in sorted(moved):
        out.append(base[cursor:begin])
        out.append(text)
        cursor = end
    out.append(base[cursor:])
    return "".join(out)


def expect_own_edit(
    state: DocState, expected: str, edits: Sequence[TextEdit] | None, budget: int, baseline: str | None = None
) -> OwnEdit:
    """Register an edit the server is about to send. `edits` (against the buffer): an apply, the
    observation's baseline moves by them; None: a revert, the observation keeps `baseline`."""
    obs = state.observation
    if edits is not None:
        baseline = _rebased(obs, state.text, edits) if obs is not None and not state.dismissed else None
    own = OwnEdit(expected=expected, budget=budget, baseline=baseline, burst_baseline=state.observe_baseline)
    state.own_edits.append(own)
    return own


def forget_own_edit(state: DocState, own: OwnEdit) -> None:
    if own in state.own_edits:
        state.own_edits.remove(own)


def own_edit_arrived(ls: EditFidelityServer, state: DocState) -> bool:
    """didChange: whether the change is (part of) an edit the server sent; when the buffer now holds
    its text, measure the observation again against the baseline the edit leaves."""
    if not state.own_edits:
        return False
    text = state.text
    done = next((o for o in state.own_edits if len(o.expected) == len(text) and o.expected == text), None)
    if done is None:
        for o in list(state.own_edits):
            o.budget -= 1
            if o.budget <= 0:
                state.own_edits.remove(o)
        return bool(state.own_edits)
    state.own_edits.remove(done)
    state.observe_baseline = done.burst_baseline
    obs = state.observation
    if obs is not None and not state.dismissed:
        if done.baseline is None:
            state.observation = None
            publish(ls, state.uri)
            ls.refresh_code_lenses()
        else:
            state.observation = dataclasses.replace(obs, baseline=done.baseline)
            schedule(ls, state, 0.0)
    elif state.observe_baseline is not None:
        schedule(ls, state, ls.settings.thresholds.debounce_ms / 1000.0)
    return True
