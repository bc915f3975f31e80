"""What the editor shows: diagnostics, hover text, code lenses and code actions.

Everything is derived from pending proposals (diagnostics on the original text, which is still the
buffer) and from the observation of the last large change or `checkChange` (diagnostics on the
edited side, which is the buffer). Only items computed for the buffer's current version are shown.
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from server.fidelity import FidelityReport
from server.lsp.lines import split_lines, utf16_len
from server.lsp.necessity.views import necessity_actions, necessity_diagnostics
from server.lsp.server import EditFidelityServer
from server.lsp.state import DocState, Observation, Proposal
from server.lsp.unit_views import UnitView
from server.lsp.view_parts import (
    CMD_APPLY,
    CMD_DISMISS,
    CMD_REJECT,
    CMD_REVERT,
    CMD_SELECT,
    SOURCE,
    ActionEntry,
    unit_range,
)

BUG_DIAGNOSTIC_CODE = "located-bug"  # a locateBug answer's diagnostic

_SOURCE_LABEL = {
    "observed": "observed change",
    "checkChange:snapshot": "vs snapshot",
    "checkChange:git": "vs git HEAD",
    "checkChange:text": "vs baseline",
}


def publish(ls: EditFidelityServer, key: str) -> None:
    """The diagnostics of the open document filed under `key` (`Store.key`), for its current version
    (nothing when it is not open)."""
    state = ls.store.docs.get(key)
    if state is None:
        return
    state.actions_cache = None
    snap = state.current
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(
            uri=snap.client_uri, version=snap.version, diagnostics=diagnostics_for(ls, state)
        )
    )


def _visible_observation(state: DocState) -> Observation | None:
    obs = state.observation
    if obs is None or state.dismissed or obs.version != state.version:
        return None
    return obs


def diagnostics_for(ls: EditFidelityServer, state: DocState) -> list[types.Diagnostic]:
    lines = split_lines(state.text)
    out: list[types.Diagnostic] = []
    p, _ = ls.store.shown_proposal(state.uri, state.version)
    if p is not None:  # one proposal at a time: the active one (the others are a code lens away)
        for v in p.views:
            out.append(
                types.Diagnostic(
                    range=unit_range(lines, v),
                    message=f"{v.message} [{p.label}]",
                    severity=types.DiagnosticSeverity(v.severity),
                    source=SOURCE,
                    code=v.code,
                    data={"kind": "proposal", "id": p.id, "hunk": v.index},
                )
            )
        for s in p.statement_views:  # on the unit that holds it: the document holds the original
            out.append(
                types.Diagnostic(
                    range=unit_range(lines, p.views[s.unit]),
                    message=f"{s.message} [{p.label}]",
                    severity=types.DiagnosticSeverity(s.severity),
                    source=SOURCE,
                    code=s.kinds[0],
                    data={"kind": "proposal", "id": p.id, "hunk": s.unit, "lines": [s.start_line, s.end_line]},
                )
            )
    obs = _visible_observation(state)
    if obs is not None:
        label = _SOURCE_LABEL.get(obs.source, obs.source)
        for v in obs.views:
            if not v.flagged and v.severity == 4 and obs.source == "observed":
                continue  # requested-looking parts of an observed change need no squiggle
            out.append(
                types.Diagnostic(
                    range=unit_range(lines, v),
                    message=f"{v.message} [{label}]",
                    severity=types.DiagnosticSeverity(v.severity),
                    source=SOURCE,
                    code=v.code,
                    data={"kind": "observation", "uri": state.uri, "version": state.version, "hunk": v.index},
                )
            )
    out.extend(necessity_diagnostics(ls, state, lines))
    if state.bug_marks:
        out.extend(bug_diagnostics(state, lines))
    return out


def bug_diagnostics(state: DocState, lines: list[str]) -> list[types.Diagnostic]:
    """The document's current locateBug answers as warnings on the answered lines."""
    out = []
    for m in state.bug_marks:
        if m.version != state.version or not 0 <= m.line < len(lines):
            continue
        end = utf16_len(lines[m.line].rstrip("\r\n"))
        out.append(
            types.Diagnostic(
                range=types.Range(
                    start=types.Position(line=m.line, character=0), end=types.Position(line=m.line, character=end)
                ),
                message=f"syntax bug here: {m.bug_type} [{m.backend}]",
                severity=types.DiagnosticSeverity.Warning,
                source=SOURCE,
                code=BUG_DIAGNOSTIC_CODE,
                data={"kind": "bug", "backend": m.backend, "version": m.version},
            )
        )
    return out


# -- hover ------------------------------------------------------------------------------------------
def _fmt(v: Any, digits: int = 4) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.{digits}f}".rstrip("0").rstrip(".") if v != int(v) else str(int(v))
    return str(v)


def report_markdown(title: str, report: FidelityReport, view: UnitView | None, flagged: list[bool]) -> str:
    rows = [f"**edit-fidelity** · {title}", ""]
    n = len(report.hunks)
    k = sum(1 for f in flagged if f)
    rows.append(f"{n} hunk{'s' if n != 1 else ''}, {k} flagged as not requested")
    rows.append("")
    rows.append("| distance | tokens | normalised |")
    rows.append("|---|---:|---:|")
    for variant, d in report.distance.items():
        rows.append(f"| {variant} | {d.tokens} | {_fmt(d.normalized)} |")
    if report.excess:
        rows.append("")
        rows.append("excess over gold: " + ", ".join(f"{k2} {_fmt(v2)}" for k2, v2 in report.excess.items()))
    rows.append("")
    rows.append("| complexity | before | after | Δ |")
    rows.append("|---|---:|---:|---:|")
    names = {
        "paper": "cognitive (paper)",
        "sonar": "cognitive (Sonar)",
        "cyclomatic": "cyclomatic",
        "maintainability": "maintainability",
    }
    for key, c in report.complexity.items():
        delta = c.delta
        sign = "+" if isinstance(delta, (int, float)) and delta > 0 else ""
        rows.append(f"| {names.get(key, key)} | {_fmt(c.before, 2)} | {_fmt(c.after, 2)} | {sign}{_fmt(delta, 2)} |")
    if report.parse_errors.original or report.parse_errors.edited:
        rows.append("")
        if report.parse_errors.original:
            rows.append(f"original does not parse: {report.parse_errors.original}")
        if report.parse_errors.edited:
            rows.append(f"edited code does not parse: {report.parse_errors.edited}")
    if view is not None:
        hunk = report.hunks[view.index]
        rows.append("")
        rows.append(f"**this hunk** ({view.index + 1}/{n}): {view.message}")
        rows.append(f"kinds: {', '.join(hunk.kinds) or '–'}; tokens changed: {hunk.tokens_changed}")
        if hunk.renames:
            rows.append("renames: " + ", ".join(f"`{a}` → `{b}`" for a, b in hunk.renames.items()))
    return "\n".join(rows)


def hover_for(ls: EditFidelityServer, state: DocState, line: int) -> str | None:
    parts: list[str] = []
    one_based = line + 1

    def covers(v: UnitView) -> bool:
        if v.end_line < v.start_line:
            return one_based == v.start_line
        return v.start_line <= one_based <= v.end_line

    p, pending = ls.store.shown_proposal(state.uri, state.version)
    if p is not None:
        hit = next((v for v in p.views if covers(v)), None)
        if hit is not None and p.report is not None:
            title = f"proposal from `{p.label}` ({p.style}, {p.latency_ms:.0f} ms): {p.instruction[:80]}"
            if len(pending) > 1:
                title += f"\n\nproposal {pending.index(p) + 1} of {len(pending)} (the code lenses switch)"
            parts.append(report_markdown(title, p.report, hit, p.flagged))
    obs = _visible_observation(state)
    if obs is not None:
        hit = next((v for v in obs.views if covers(v)), None)
        if hit is not None:
            title = _SOURCE_LABEL.get(obs.source, obs.source)
            if obs.window is not None:
                title += f" (measured over lines {obs.window.start_line}-{obs.window.after_end})"
            parts.append(report_markdown(title, obs.report, hit, obs.flagged))
    return "\n\n---\n\n".join(parts) if parts else None


# -- code lenses -------------------------------------------------------------------------------------
def _lens(line: int, title: str, command: str, argument: dict[str, Any]) -> types.CodeLens:
    pos = types.Position(line=max(line, 0), character=0)
    return types.CodeLens(
        range=types.Range(start=pos, end=pos),
        command=types.Command(title=title, command=command, arguments=[argument]),
    )


def proposal_summary(p: Proposal) -> str:
    assert p.report is not None
    n = len(p.report.hunks)
    k = sum(1 for f in p.flagged if f)
    d = p.report.distance.get("no_comments")
    dist = f", distance {d.normalized:.3f}" if d is not None else ""
    return f"{p.label}: {n} hunk{'s' if n != 1 else ''}, {k} unrequested{dist}"


def code_lenses_for(ls: EditFidelityServer, state: DocState) -> list[types.CodeLens]:
    lenses: list[types.CodeLens] = []
    p, pending = ls.store.shown_proposal(state.uri, state.version)
    if p is not None:
        assert p.report is not None
        first = min((v.start_line for v in p.views), default=1)
        line = p.target[0] if p.target else first - 1
        n = len(p.report.hunks)
        unflagged = [i for i, f in enumerate(p.flagged) if not f]
        lenses.append(_lens(line, f"✓ Accept ({proposal_summary(p)})", CMD_APPLY, {"id": p.id}))
        if unflagged and len(unflagged) < n:
            lenses.append(
                _lens(
                    line,
                    f"Accept minimal ({len(unflagged)} of {n} hunks)",
                    CMD_APPLY,
                    # minimal: the unrequested rest is dropped, not kept pending under the user's eyes
                    {"id": p.id, "hunks": unflagged, "rest": "reject"},
                )
            )
        lenses.append(_lens(line, "✗ Reject", CMD_REJECT, {"id": p.id}))
        for k, other in enumerate(pending):  # the others, one lens each: show it instead
            if other is not p:
                lenses.append(
                    _lens(
                        line,
                        f"Show proposal {k + 1} of {len(pending)}: {proposal_summary(other)}",
                        CMD_SELECT,
                        {"uri": state.uri, "id": other.id},
                    )
                )
    obs = _visible_observation(state)
    if obs is not None:
        flagged = [v for v in obs.views if v.flagged]
        if flagged:
            line = flagged[0].start_line - 1
            label = _SOURCE_LABEL.get(obs.source, obs.source)
            lenses.append(
                _lens(
                    line,
                    f"edit-fidelity: revert {len(flagged)} unrequested change{'s' if len(flagged) != 1 else ''}"
                    f" ({label})",
                    CMD_REVERT,
                    {"uri": state.uri, "version": state.version},
                )
            )
            lenses.append(_lens(line, "Dismiss", CMD_DISMISS, {"uri": state.uri}))
    return lenses


# -- code actions ------------------------------------------------------------------------------------
def build_action_entries(ls: EditFidelityServer, state: DocState, uri: str) -> list[ActionEntry]:
    entries: list[ActionEntry] = []

    def add(
        lo: int,
        hi: int,
        key: tuple[Any, ...],
        title: str,
        short: str,
        command: str,
        args: dict[str, Any],
        preferred: bool | None = None,
    ) -> None:
        action = types.CodeAction(
            title=title,
            kind=types.CodeActionKind.QuickFix,
            command=types.Command(title=short, command=command, arguments=[args]),
            is_preferred=preferred,
        )
        entries.append(ActionEntry(lo, hi, action, key))

    shown, _ = ls.store.shown_proposal(state.uri, state.version)
    for p in [shown] if shown is not None else []:  # the active proposal's units only
        unflagged = [i for i, f in enumerate(p.flagged) if not f]
        flagged_any = any(p.flagged)
        label = f"[{p.label}] "
        for v in p.views:
            lo, hi, key = v.start_line - 1, max(v.end_line - 1, v.start_line - 1), ("proposal", p.id, v.index)
            add(
                lo,
                hi,
                key,
                f"{label}Accept this hunk: {v.message}"[:160],
                "Accept hunk",
                CMD_APPLY,
                {"id": p.id, "hunks": [v.index]},
                preferred=not v.flagged,
            )
            add(
                lo,
                hi,
                key,
                f"{label}Accept the whole proposal ({len(p.views)} hunks)",
                "Accept proposal",
                CMD_APPLY,
                {"id": p.id},
            )
            if flagged_any and unflagged:
                add(
                    lo,
                    hi,
                    key,
                    f"{label}Accept only the requested hunks ({len(unflagged)} of {len(p.views)})",
                    "Accept minimal",
                    CMD_APPLY,
                    {"id": p.id, "hunks": unflagged, "rest": "reject"},
                )
            add(lo, hi, key, f"{label}Reject this proposal", "Reject", CMD_REJECT, {"id": p.id})
    obs = _visible_observation(state)
    if obs is not None:
        # reverts are server commands (revertHunks): the server then knows the edit is its own and
        # measures the rest against the same baseline instead of observing its revert as a change
        flagged_views = [v for v in obs.views if v.flagged]
        for v in obs.views:
            if not v.flagged and obs.source == "observed" and v.severity == 4:
                continue
            lo, hi, key = v.start_line - 1, max(v.end_line - 1, v.start_line - 1), ("observation", state.uri, v.index)
            add(
                lo,
                hi,
                key,
                f"Revert this hunk: {v.message}"[:160],
                "Revert hunk",
                CMD_REVERT,
                {"uri": uri, "version": state.version, "hunks": [v.index]},
                preferred=v.flagged,
            )
            if flagged_views:
                add(
                    lo,
                    hi,
                    key,
                    f"Revert all {len(flagged_views)} unrequested hunks",
                    "Revert unrequested",
                    CMD_REVERT,
                    {"uri": uri, "version": state.version, "hunks": [f.index for f in flagged_views]},
                )
            add(
                lo,
                hi,
                key,
                "Dismiss edit-fidelity warnings for this change",
                "Dismiss",
                CMD_DISMISS,
                {"uri": state.uri},
            )
    entries.extend(necessity_actions(ls, state, uri))
    return entries


def _diag_key(d: types.Diagnostic) -> tuple[Any, ...] | None:
    data = d.data if isinstance(d.data, dict) else None
    if not data or d.source != SOURCE:
        return None
    if data.get("kind") in ("proposal", "necessity"):
        return ("proposal", data.get("id"), data.get("hunk"))
    if data.get("kind") == "observation":
        return ("observation", data.get("uri"), data.get("hunk"))
    return None


def code_actions_for(
    ls: EditFidelityServer, state: DocState, uri: str, rng: types.Range, context: types.CodeActionContext | None
) -> list[types.CodeAction]:
    cache = state.actions_cache
    if cache is None or cache[0] != state.version:
        ls.counters["actionEntriesBuilt"] += 1
        cache = (state.version, build_action_entries(ls, state, uri))
        state.actions_cache = cache
    entries = cache[1]
    if (
        context is not None
        and context.only
        and not any(
            str(k).startswith(str(types.CodeActionKind.QuickFix))
            or str(types.CodeActionKind.QuickFix).startswith(str(k))
            for k in context.only
        )
    ):
        return []
    diags: dict[tuple[Any, ...], list[types.Diagnostic]] = {}
    if context is not None:
        for d in context.diagnostics:
            key = _diag_key(d)
            if key is not None:
                diags.setdefault(key, []).append(d)
    lo, hi = rng.start.line, rng.end.line
    out = []
    seen_titles = set()
    for e in entries:
        if e.hi < lo or e.lo > hi:
            continue
        if e.action.title in seen_titles:
            continue
        seen_titles.add(e.action.title)
        action = e.action
        if e.diagnostic_key in diags:
            action = types.CodeAction(
                title=action.title,
                kind=action.kind,
                command=action.command,
                edit=action.edit,
                is_preferred=action.is_preferred,
                diagnostics=diags[e.diagnostic_key],
            )
        out.append(action)
    return out
