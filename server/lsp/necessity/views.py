"""What the editor shows of a necessity analysis (server.lsp.necessity.analysis): a diagnostic per unit the tests pass
without (a warning when the instruction asks for it neither by kind nor by name, else information) and per
unrequested statement they pass without, and the code action "Keep only the needed hunks"."""

from __future__ import annotations

from lsprotocol import types

from server.fidelity.text.analysis import split_lines
from server.lsp.server import EditFidelityServer
from server.lsp.state import DocState
from server.lsp.view_parts import CMD_APPLY, CMD_REJECT, SOURCE, ActionEntry, unit_range

CODE = "unnecessary-for-tests"
UNREQUESTED_CODE = "unrequested-for-tests"  # unnecessary, and nothing in the instruction asks for it


def necessity_diagnostics(ls: EditFidelityServer, state: DocState, lines: list[str]) -> list[types.Diagnostic]:
    """One information diagnostic per hunk the tests pass without, for each analysed pending proposal."""
    out: list[types.Diagnostic] = []
    shown, _ = ls.store.shown_proposal(state.uri, state.version)
    for p in [shown] if shown is not None else []:  # the active proposal only, like its other diagnostics
        a = ls.analyses.current(p)
        if a is None:
            continue
        command = " ".join(a.record.test_command)
        flags = {f.hunk: f for f in a.record.unrequested}
        for i in a.result.unnecessary:
            view, flag = p.views[i], flags.get(i)
            runs = f"`{command}`, {a.result.runs} runs"
            out.append(
                types.Diagnostic(
                    range=unit_range(lines, view),
                    message=f"{flag.message} ({runs}) [{p.label}]"
                    if flag
                    else f"the tests still pass without this hunk ({runs}) [{p.label}]",
                    severity=types.DiagnosticSeverity(flag.severity) if flag else types.DiagnosticSeverity.Information,
                    source=SOURCE,
                    code=UNREQUESTED_CODE if flag else CODE,
                    data={"kind": "necessity", "id": p.id, "hunk": i},
                )
            )
        edited = split_lines(p.edited or "")
        for part in a.record.unrequested_parts:  # shown on its unit: the document holds the original
            first = edited[part.start_line - 1].strip() if part.start_line <= len(edited) else ""
            out.append(
                types.Diagnostic(
                    range=unit_range(lines, p.views[part.hunk]),
                    message=f"`{first}` (line {part.start_line} of the proposal): {part.message} "
                    f"(`{command}`, {a.record.runs + a.record.part_runs} runs) [{p.label}]",
                    severity=types.DiagnosticSeverity(part.severity),
                    source=SOURCE,
                    code=UNREQUESTED_CODE,
                    data={
                        "kind": "necessity",
                        "id": p.id,
                        "hunk": part.hunk,
                        "lines": [part.start_line, part.end_line],
                    },
                )
            )
    return out


def necessity_actions(ls: EditFidelityServer, state: DocState, uri: str) -> list[ActionEntry]:
    """ "Keep only the needed hunks" on every hunk of an analysed proposal: the needed hunks as one
    versioned edit (the proposal then no longer matches the buffer, so the rest is dropped), or a
    rejection when the tests need none."""
    entries: list[ActionEntry] = []
    shown, _ = ls.store.shown_proposal(state.uri, state.version)
    for p in [shown] if shown is not None else []:
        a = ls.analyses.current(p)
        if a is None or not a.result.unnecessary:
            continue
        n, needed = a.result.hunks, a.result.needed
        title = f"[{p.label}] Keep only the needed hunks ({len(needed)} of {n}: the tests pass without the other {n - len(needed)})"
        if needed:
            # applyProposal with the needed units' own edits, the rest dropped: the server's own edit,
            # so the observation of changes does not flag it
            action = types.CodeAction(
                title=title,
                kind=types.CodeActionKind.QuickFix,
                is_preferred=True,
                command=types.Command(
                    title="Keep only the needed hunks",
                    command=CMD_APPLY,
                    arguments=[{"id": p.id, "hunks": needed, "rest": "reject"}],
                ),
            )
        else:
            action = types.CodeAction(
                title=f"[{p.label}] Keep only the needed hunks (none: the tests pass on the original)",
                kind=types.CodeActionKind.QuickFix,
                command=types.Command(title="Reject", command=CMD_REJECT, arguments=[{"id": p.id}]),
            )
        for v in p.views:
            lo = v.start_line - 1
            entries.append(ActionEntry(lo, max(v.end_line - 1, lo), action, ("proposal", p.id, v.index)))
    return entries
