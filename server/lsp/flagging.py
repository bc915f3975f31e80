"""Which change units the server flags: the core's verdicts weighed against the user's instruction
(`server.fidelity.judge.flags`, with the rules of `server.fidelity.judge.instruction`), and how loud each flag is
(the `severity`, `whitespaceHintLines` and threshold settings).
"""

from __future__ import annotations

from server.fidelity import FidelityReport, Hunk
from server.fidelity.judge.flags import flagged_severity as _flagged_severity
from server.fidelity.judge.flags import judge_statements, judged_units
from server.fidelity.judge.instruction import Verdict, parse_instruction
from server.fidelity.judge.instruction import allowed_kinds as _allowed
from server.fidelity.judge.statements import StatementFlag
from server.lsp.settings import Thresholds


def allowed_kinds(instruction: str | None) -> set[str]:
    """Hunk kinds the instruction asks for in general (a broad request such as "refactor" allows most)."""
    return _allowed(parse_instruction(instruction)) if instruction else set()


class Judgment(list):
    """Per unit: True when it holds a change nobody asked for (a list of bools, as before), with the
    verdict behind each one (`verdicts`) for the messages, and the unrequested statements inside the units
    not flagged (`statements`: an extra `break` beside the fix)."""

    verdicts: list[Verdict]
    statements: list[StatementFlag]


def flag_units(
    report: FidelityReport,
    instruction: str | None,
    *,
    original: str | None = None,
    edited: str | None = None,
    aware: bool = True,
) -> Judgment:
    """Per hunk: True when it contains a change nobody asked for (with the verdicts and the flagged
    statements attached; statements need both texts)."""
    scope, _, verdicts = judged_units(report, instruction, original=original, edited=edited, aware=aware)
    out = Judgment(v.flagged for v in verdicts)
    out.verdicts = verdicts
    out.statements = judge_statements(report, scope, verdicts, original=original, edited=edited)
    return out


def flagged_severity(hunk: Hunk, kinds: tuple[str, ...] | list[str], thresholds: Thresholds) -> int:
    """The LSP severity of a flagged unit: the loudest of its unrequested kinds' settings; a small
    whitespace-only unit has the `whitespace` one."""
    return _flagged_severity(hunk, kinds, thresholds.severity_levels(), thresholds.whitespace_hint_lines)
