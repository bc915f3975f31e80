"""Observation of changes: large incoming edits (an assistant applying a change) and `checkChange`.

A didChange that replaces more than `thresholds.largeChangeLines` lines starts (or extends) a burst;
the text before the burst is the baseline. After `debounceMs` of quiet the current buffer is
measured against it in a worker thread (per top-level block for files over `largeFileLines`) and
the result is published. Later small edits re-measure against the same baseline, debounced, until
the user dismisses it. Typing never waits for any of this.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from typing import TYPE_CHECKING

from lsprotocol import types

from server.fidelity import common_affix
from server.lsp.judge import (
    Window,
    flag_hunks,
    hunk_views,
    measure_windowed,
    split_lines,
)
from server.lsp.state import DocState, Observation, owned

if TYPE_CHECKING:
    from server.lsp.server import EditFidelityServer

logger = logging.getLogger(__name__)


def changed_lines(prev: str, changes) -> int:
    """How many lines one didChange replaces (the larger of removed and inserted, summed over changes)."""
    total = 0
    for c in changes:
        if isinstance(c, types.TextDocumentContentChangePartial):
            spans = c.range.end.line - c.range.start.line + 1
            inserted = c.text.count("\n") + 1
            total += max(spans, inserted) if (spans > 1 or inserted > 1) else 0
        else:  # the whole document: compare line lists around the common prefix and suffix
            a, b = split_lines(prev), split_lines(c.text)
            i, j = common_affix(a, b)
            total += max(len(a) - i - j, len(b) - i - j)
    return total


def schedule(ls: EditFidelityServer, state: DocState, delay_s: float) -> None:
    if state.observe_task is not None and not state.observe_task.done():
        state.observe_task.cancel()
    state.observe_task = asyncio.ensure_future(_observe_later(ls, state, delay_s))


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
    version, current = state.version, state.text
    if baseline == current:
        state.observation = None
        state.observe_baseline = None
        ls.publish(state.uri)
        return
    report, window = await ls.compute(owned(state.uri, functools.partial(
        measure_windowed, baseline, current, ls.settings.thresholds.large_file_lines)))
    if ls.store.docs.get(state.uri) is not state or state.version != version:
        return  # closed, or changed again: a newer run is scheduled
    store_observation(ls, state, baseline, current, version, source, report, window)


def store_observation(ls, state: DocState, baseline: str, current: str, version: int, source: str, report,
                      window: Window | None) -> Observation:
    flagged = flag_hunks(report, None)
    views = hunk_views(report, flagged, ls.settings.thresholds, edited_side=True)
    obs = Observation(uri=state.uri, version=version, baseline=baseline, current=current, source=source,
                      report=report, flagged=flagged, views=views, window=window)
    state.observation = obs
    state.observe_baseline = None
    state.dismissed = False
    ls.publish(state.uri)
    ls.refresh_code_lenses()
    return obs
