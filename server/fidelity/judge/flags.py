"""How loud a flagged change unit is: the pure part of the judge, shared by the server and the benchmark.

The server (`server.lsp.flagging`, `server.lsp.unit_views`) picks each unit's LSP severity with these rules and its settings; the
benchmark counts flagged units at warning severity (error or warning) and at hint severity (information
or hint) with `split_flags`, from a proposal's `flaggedHunks` and `hunkSeverities`. Where the benchmark
judges texts the server never saw (the over-editing suite's normalised footing), `count_unit_flags` gives
the same counts at the default settings.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from server.fidelity.judge.dropped import live_stores_deleted
from server.fidelity.judge.instruction import Scope, UnitFacts, Verdict, judge_unit, parse_instruction
from server.fidelity.judge.statements import StatementFlag, statement_flags
from server.fidelity.judge.target_scope import dropped_condition_reason
from server.fidelity.judge.unit_facts import unit_facts
from server.protocol.report import HUNK_KINDS, UNREQUESTED_KINDS, FidelityReport, Hunk

WARNING = 2  # LSP DiagnosticSeverity: 1 error and 2 warning are warnings; 3 information and 4 hint are hints
# Per unrequested kind (and "whitespace" for whitespace-only units): layout differences are real but
# rarely worth a squiggle, so they are a hint.
# A comment added on code the edit leaves alone is information: real, but a reference solution's own
# comments (the over-editing gold) are that too, so it is no squiggle by default.
# Layout that keeps the syntax tree (`formatting_only`) is a hint too: it changes no behaviour, and a
# reference whose layout differs from the code it fixes (the over-editing set's canonical solutions
# against their unparsed corruptions) must not be a wall of warnings.
SEVERITY_DEFAULTS = {
    "whitespace": 4,
    **{k: 2 for k in HUNK_KINDS if k in UNREQUESTED_KINDS},
    "formatting_only": 4,
    "comment_added": 3,
}
WHITESPACE_HINT_LINES = 10  # a whitespace-only unit spanning more lines than this is not a hint


def is_warning(severity: int) -> bool:
    return severity <= WARNING


def split_flags(flagged: Iterable[bool], severities: Sequence[int]) -> tuple[int, int]:
    """(flagged units at warning severity, flagged units at hint severity); `flagged` and `severities`
    per unit. A flagged unit without a severity counts as a warning (the default for unrequested kinds)."""
    warn = hint = 0
    for i, f in enumerate(flagged):
        if f:
            if is_warning(severities[i] if i < len(severities) else WARNING):
                warn += 1
            else:
                hint += 1
    return warn, hint


def whitespace_only(hunk: Hunk) -> bool:
    """Blank lines, trailing spaces, indentation that keeps every token."""
    return hunk.tokens_changed == 0 and set(hunk.kinds) <= {"formatting_only"}


def unit_lines(hunk: Hunk) -> int:
    return max(hunk.end_line - hunk.start_line + 1, hunk.new_end_line - hunk.new_start_line + 1, 1)


def flagged_severity(
    hunk: Hunk,
    kinds: Sequence[str],
    levels: Mapping[str, int] = SEVERITY_DEFAULTS,
    whitespace_hint_lines: int = WHITESPACE_HINT_LINES,
) -> int:
    """The LSP severity of a flagged unit: the loudest of its unrequested kinds' levels; a small
    whitespace-only unit has the `whitespace` one."""
    if whitespace_only(hunk) and unit_lines(hunk) <= whitespace_hint_lines:
        return levels.get("whitespace", 4)
    return min((levels.get(k, WARNING) for k in kinds), default=WARNING)


def judge_units(
    report: FidelityReport,
    instruction: str | None,
    *,
    original: str | None = None,
    edited: str | None = None,
    aware: bool = True,
) -> list[Verdict]:
    """A verdict per unit. `instruction` None (an observed change) or `aware` False: the core's view,
    every change of an unrequested kind counts."""
    return judged_units(report, instruction, original=original, edited=edited, aware=aware)[2]


def judged_units(
    report: FidelityReport,
    instruction: str | None,
    *,
    original: str | None = None,
    edited: str | None = None,
    aware: bool = True,
) -> tuple[Scope | None, list[UnitFacts], list[Verdict]]:
    """`judge_units` with what it weighed: the instruction's scope and each unit's facts."""
    scope = parse_instruction(instruction, original) if instruction is not None and aware else None
    facts = unit_facts(report, original, edited)
    verdicts = [judge_unit(scope, f, UNREQUESTED_KINDS) for f in facts]
    if scope is None:
        return scope, facts, verdicts
    verdicts = _follow_unrequested(report, facts, verdicts)
    verdicts = _dropped_statements(report, scope, facts, verdicts, original)
    return scope, facts, _follow_renames(report, facts, _dropped_conditions(scope, facts, verdicts))


def _dropped_statements(
    report: FidelityReport, scope: Scope, facts: list[UnitFacts], verdicts: list[Verdict], original: str | None
) -> list[Verdict]:
    """A unit that only deletes lines, among them an assignment whose value the code after it still reads
    (`dropped.live_stores_deleted`), removes behaviour: unrequested unless the instruction asks for a removal
    or a rewrite, or the code moved."""
    if original is None or report.language != "python" or "deletion" in scope.kinds or scope.broad:
        return verdicts
    out = list(verdicts)
    changed = {n for h in report.hunks for n in range(h.start_line, h.end_line + 1)}
    for i, (h, f, v) in enumerate(zip(report.hunks, facts, verdicts, strict=True)):
        if v.flagged or f.moved or h.kinds != ["deletion"]:
            continue
        gone = live_stores_deleted(original, h.start_line, h.end_line, changed)
        if gone:
            out[i] = Verdict(
                True, f"not requested: deletes `{gone}`, whose value the code after it reads", ("deletion",)
            )
    return out


def _follow_renames(report: FidelityReport, facts: list[UnitFacts], verdicts: list[Verdict]) -> list[Verdict]:
    """A logic unit that only swaps names for the new name of an unrequested rename (a call to the old
    function now calls the renamed one) is that rename's consequence, not the request's."""
    renamed = {
        old: new
        for f, v in zip(facts, verdicts, strict=True)
        if v.flagged and "rename" in v.unrequested
        for old, new in f.renames.items()
    }
    if not renamed:
        return verdicts
    gone = {fn.name.split(".")[-1] for fn in report.functions if fn.status == "removed"}
    out = list(verdicts)
    for i, (h, v) in enumerate(zip(report.hunks, verdicts, strict=True)):
        names = {n for n in h.names if n not in ("self", "cls")}
        new_names = names & set(renamed.values())
        if v.flagged or h.kinds != ["logic"] or not new_names or names - new_names - set(renamed) - gone:
            continue
        listed = ", ".join(f"`{n}`" for n in sorted(new_names))
        out[i] = Verdict(True, f"not requested: uses {listed}, the name of a rename nobody asked for", ("rename",))
    return out


def _dropped_conditions(scope: Scope, facts: list[UnitFacts], verdicts: list[Verdict]) -> list[Verdict]:
    """A unit that drops an `elif`'s test the instruction does not speak of removes a check nobody asked to
    remove (`target_scope.dropped_condition_reason`): a deletion of behaviour, whatever else its function gets."""
    out = list(verdicts)
    for i, (f, v) in enumerate(zip(facts, verdicts, strict=True)):
        why = None if v.flagged else dropped_condition_reason(scope, f.kinds, f.target)
        if why:
            out[i] = Verdict(True, why, ("deletion",))
    return out


def _follow_unrequested(report: FidelityReport, facts: list, verdicts: list[Verdict]) -> list[Verdict]:
    """A unit that only passes on what an unrequested unit introduced (stores the new parameter nobody asked
    for: `self.limit = limit`) is not requested either: it is that change's consequence, not the request's."""
    options = {n for f, v in zip(facts, verdicts, strict=True) if v.flagged for n in f.new_options}
    if not options:
        return verdicts
    out = list(verdicts)
    for i, (h, v) in enumerate(zip(report.hunks, verdicts, strict=True)):
        changed = {n for n in h.names if n not in ("self", "cls")}
        if not v.flagged and h.kinds == ["logic"] and changed and changed <= options:
            listed = ", ".join(f"`{n}`" for n in sorted(changed))
            why = f"not requested: passes on the new parameter {listed}, which nobody asked for"
            out[i] = Verdict(True, why, ("signature_change",))
    return out


def unrequested_of(verdict: Verdict, hunk: Hunk) -> list[str]:
    """The kinds a flagged unit is flagged for (the verdict's, else the hunk's unrequested kinds)."""
    return list(verdict.unrequested) if verdict.unrequested else [k for k in hunk.kinds if k in UNREQUESTED_KINDS]


def judge_statements(
    report: FidelityReport,
    scope: Scope | None,
    verdicts: Sequence[Verdict],
    *,
    original: str | None,
    edited: str | None,
) -> list[StatementFlag]:
    """The unrequested statements inside the units `verdicts` leave unflagged (`server.fidelity.judge.statements`)."""
    return statement_flags(report, scope, original=original, edited=edited, flagged=[v.flagged for v in verdicts])


def count_unit_flags(report: FidelityReport, instruction: str | None, *, original: str, edited: str) -> tuple[int, int]:
    """(warning, hint) flagged units of `report` judged against `instruction` at the default severity
    settings, as a proposal of the same texts would carry them, its flagged statements counted as units of
    their own. (Only a flagged unit's loudness matters here: the server's size and complexity rules make a
    warning an error, never a hint.)"""
    scope, _, verdicts = judged_units(report, instruction, original=original, edited=edited)
    severities = [
        flagged_severity(h, unrequested_of(v, h)) if v.flagged else 4
        for h, v in zip(report.hunks, verdicts, strict=False)
    ]
    statements = judge_statements(report, scope, verdicts, original=original, edited=edited)
    flagged = [*(v.flagged for v in verdicts), *(True for _ in statements)]
    severities += [flagged_severity(report.hunks[s.unit], s.kinds) for s in statements]
    return split_flags(flagged, severities)
