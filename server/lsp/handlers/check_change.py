"""`editFidelity.checkChange` {uri, baseline: "snapshot" | "git" | {text}} -> {report, ...}.

The current buffer is the edited side. "snapshot" is the text at open, at the last save or at the
last `editFidelity.takeSnapshot`; "git" is the file in git HEAD; {text} is given by the client.
Files over `thresholds.largeFileLines` are measured over the top-level blocks the change touches
(`window` in the result says which lines); the diagnostics go to the buffer as for observed changes.
"""

from __future__ import annotations

import functools

import msgspec
from lsprotocol import types

from server.lsp import args as A
from server.lsp.gitbase import head_text
from server.lsp.observe import store_observation
from server.lsp.records import CheckChangeResult
from server.lsp.state import owned
from server.lsp.windowed import measure_windowed
from server.protocol.commands import BaselineText, CheckChangeArgs, Window
from server.protocol.names import Command

COMMAND = Command.CHECK_CHANGE.value


def register(ls) -> None:
    @ls.command(COMMAND)
    async def check_change(ls, params: types.ExecuteCommandParams):
        args = A.decode(COMMAND, params.arguments, CheckChangeArgs)
        uri, baseline = args.uri, args.baseline
        kind = "text" if isinstance(baseline, BaselineText) else baseline
        opened = ls.open_document(uri)
        if opened is None:
            raise A.InvalidArgs(
                COMMAND, f"unknown document {uri!r}: the editor has not opened it (textDocument/didOpen)"
            )
        doc, state = opened
        if args.version is not None and args.version != doc.version:
            raise A.ContentModified(
                message=f"{COMMAND}: document version {args.version} is not the current one ({doc.version})"
            )
        if kind == "snapshot":
            before = state.snapshot
        elif kind == "git":
            before = await head_text(doc.path)
        else:
            assert isinstance(baseline, BaselineText)
            before = baseline.text
        snap = state.current
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
        result = CheckChangeResult(
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
        return msgspec.to_builtins(result)
