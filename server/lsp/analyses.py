"""The necessity analyses a server holds (`editFidelity.analyzeNecessity`, server.lsp.necessity.analysis): the finished
ones by proposal, the proposals being analysed, and the sandbox pools open, whose runs `exit` kills."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from server.fidelity import FidelityReport
from server.fidelity.judge.ddmin import NecessityResult
from server.lsp.state import Proposal
from server.protocol.commands import NecessityRecord

if TYPE_CHECKING:
    from sandbox import Sandbox  # not on the server's start-up path


@dataclass
class Analysis:
    """A finished analysis, valid while its proposal still has the report it was made for."""

    proposal_id: str
    report: FidelityReport
    version: int
    result: NecessityResult
    record: NecessityRecord


@dataclass
class Analyses:
    done: dict[str, Analysis] = field(default_factory=dict)
    running: set[str] = field(default_factory=set)
    boxes: set[Sandbox] = field(default_factory=set)  # open sandbox pools: `exit` kills their runs

    def current(self, p: Proposal) -> Analysis | None:
        a = self.done.get(p.id)
        if a is None or a.report is not p.report or a.version != p.version:
            return None  # the proposal moved on (a partial apply re-measured it): the hunks differ
        return a

    def forget(self, proposal_ids: list[str]) -> None:
        """The analyses of proposals the store released (their document closed)."""
        for pid in proposal_ids:
            self.done.pop(pid, None)

    def stop_all(self) -> None:
        """At `exit`: the runs of every pool still open are killed now, nothing is waited for."""
        for box in list(self.boxes):
            stop_runs(box, deadline_s=0.05)


def stop_runs(box: Sandbox, deadline_s: float = 2.0) -> None:
    """Kill whatever the pool's slots still run (each slot's uid belongs to this pool alone)."""
    from sandbox.process import sweep_uid  # only once an analysis made a pool

    if box.level != "docker":  # a docker slot's container goes when this process does (its keep-alive's stdin)
        for uid in box.uids:
            sweep_uid(uid, deadline_s)
