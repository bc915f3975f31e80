"""The tests' evidence as flags: the units, and the new statements inside the needed units, that the tests
pass without and the instruction asks for neither by kind nor by name (`server.fidelity.judge.test_evidence`,
`server.fidelity.judge.parts`), for `analyzeNecessity`'s record and diagnostics."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from server.fidelity.judge.ddmin import NecessityResult, find_needed_units
from server.fidelity.judge.parts import judge_parts, new_parts, without_parts
from server.fidelity.judge.test_evidence import EVIDENT, judge_units_with_tests
from server.lsp.flagging import flagged_severity
from server.lsp.server import EditFidelityServer
from server.lsp.settings import NecessitySettings
from server.lsp.state import Proposal, owned
from server.protocol.commands import FlaggedStatement, UnneededFlag

Outcome = bool | None


def test_flags(ls: EditFidelityServer, p: Proposal, unneeded: frozenset[int]) -> list[UnneededFlag]:
    """The units the tests pass without that the instruction asks for neither by kind nor by name, and
    that the proposal does not flag already (`server.fidelity.judge.test_evidence`)."""
    report, edited = p.report, p.edited
    assert report is not None and edited is not None
    verdicts = judge_units_with_tests(report, p.instruction, unneeded, original=p.original, edited=edited)
    out = []
    for i, v in enumerate(verdicts):
        if v.flagged and i in unneeded and not (i < len(p.flagged) and p.flagged[i]):
            hunk = report.hunks[i]
            severity = flagged_severity(hunk, list(v.unrequested), ls.settings.thresholds)
            out.append(UnneededFlag(hunk=i, kinds=list(v.unrequested), severity=severity, message=v.reason))
    return out


@dataclass(frozen=True)
class PartsFound:
    parts: int = 0
    runs: int = 0
    flags: list[FlaggedStatement] = field(default_factory=list)


async def unneeded_parts(
    ls: EditFidelityServer,
    p: Proposal,
    minimal: str,
    result: NecessityResult,
    check_text: Callable[[str], Awaitable[Outcome]],
    cfg: NecessitySettings,
) -> PartsFound:
    """The second stage (`server.fidelity.judge.parts`): ddmin over the new statements of the minimal passing
    text, with the runs the first stage left; the unneeded ones the judge flags, on the edited text."""
    budget = cfg.max_runs - result.runs
    if result.status not in EVIDENT or not result.needed or budget < 1:
        return PartsFound()
    parts = await ls.compute(new_parts, p.original, minimal)
    if not parts:
        return PartsFound()
    every = frozenset(range(len(parts)))

    async def check(keep: frozenset[int]) -> bool | None:
        return await check_text(without_parts(minimal, parts, every - keep))

    found = await find_needed_units(len(parts), check, max_runs=budget, parallel=cfg.parallel, known={every: True})
    unneeded = frozenset(found.unnecessary) if found.status in EVIDENT else frozenset()
    if not unneeded:
        return PartsFound(len(parts), found.runs)
    assert p.edited is not None and p.report is not None
    hunks = p.report.hunks
    units = [(h.new_start_line, h.new_end_line) for h in hunks]
    judge = functools.partial(
        judge_parts, minimal, parts, unneeded, p.instruction, original=p.original, edited=p.edited, unit_lines=units
    )
    flags = []
    shown = {s.start_line for s in p.statement_views}
    for v in await ls.compute(owned(p.uri, judge)):
        if v.unit < len(p.flagged) and p.flagged[v.unit] or v.start_line in shown:
            continue  # in a unit the proposal flags already, or a statement it flags already
        severity = flagged_severity(hunks[v.unit], list(v.kinds), ls.settings.thresholds)
        flags.append(FlaggedStatement(v.unit, v.start_line, v.end_line, list(v.kinds), severity, v.reason))
    return PartsFound(len(parts), found.runs, flags)
