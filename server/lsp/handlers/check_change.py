"""`editFidelity.checkChange` {uri, baseline: "snapshot" | "git" | {text}} -> {report, ...}.

The current buffer is the edited side. "snapshot" is the text at open, at the last save or at the
last `editFidelity.takeSnapshot`; "git" is the file in git HEAD; {text} is given by the client.
Files over `thresholds.largeFileLines` are measured over the top-level blocks the change touches
(`window` in the result says which lines); the diagnostics go to the buffer as for observed changes.
"""

from __future__ import annotations

import functools

from server.lsp.args import ContentModified, InvalidArgs
from server.lsp.gitbase import head_text
from server.lsp.observe import store_observation
from server.lsp.progress import WorkDoneToken
from server.lsp.server import EditFidelityServer
from server.lsp.state import owned
from server.lsp.windowed import measure_windowed
from server.protocol.commands import BaselineText, CheckChangeArgs, CheckChangeResult, Window
from server.protocol.names import Command

COMMAND = Command.CHECK_CHANGE.value


class CheckChangeHandler:
    name = Command.CHECK_CHANGE

    async def run(self, ls: EditFidelityServer, args: CheckChangeArgs, work_done: WorkDoneToken) -> CheckChangeResult:
        uri, baseline = args.uri, args.baseline
        kind = "text" if isinstance(baseline, BaselineText) else baseline
        state = ls.store.document(uri)
        if state is None:
            raise InvalidArgs(COMMAND, f"unknown document {uri!r}: the editor has not opened it (textDocument/didOpen)")
        snap = state.current
        if args.version is not None and args.version != snap.version:
            raise ContentModified(
                message=f"{COMMAND}: document version {args.version} is not the current one ({snap.version})"
            )
        if kind == "snapshot":
            before = state.snapshot_text
        elif kind == "git":
            before = await head_text(snap.path)
        else:
            assert isinstance(baseline, BaselineText)
            before = baseline.text
        snap = state.current  # git answered meanwhile: measure the buffer as it is now
        report, window = await ls.compute(
            owned(
                state.uri,
                functools.partial(
                    measure_windowed, before, snap.text, ls.settings.thresholds.large_file_lines, snap.language
                ),
            )
        )
        # still this buffer: not closed (and maybe reopened) or changed meanwhile
        current = ls.store.docs.get(state.uri) is state and state.current is snap
        obs = (
            store_observation(ls, state, before, snap.text, snap.version, f"checkChange:{kind}", report, window)
            if current
            else None
        )
        views = obs.views if obs is not None else []
        return CheckChangeResult(
            report=report,
            baseline=kind,
            flagged_hunks=[v.index for v in views if v.flagged],
            hunk_messages=[v.message for v in views],
            hunk_severities=[v.severity for v in views],
            version=snap.version,
            window=None
            if window is None
            else Window(start_line=window.start_line, end_line=window.after_end, baseline_end_line=window.before_end),
        )
