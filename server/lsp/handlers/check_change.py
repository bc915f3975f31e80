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
from server.lsp.judge import measure_windowed
from server.lsp.observe import store_observation
from server.lsp.records import CheckChangeResult
from server.lsp.state import owned

COMMAND = "editFidelity.checkChange"
MAX_BASELINE = 20_000_000


def register(ls) -> None:
    @ls.command(COMMAND)
    async def check_change(ls, params: types.ExecuteCommandParams):
        obj = A.single_object(COMMAND, params.arguments)
        uri = A.get_str(COMMAND, obj, "uri")
        if "baseline" not in obj or obj["baseline"] is None:
            raise A.InvalidArgs(COMMAND, 'missing `baseline` ("snapshot", "git" or {"text": ...})')
        baseline = obj["baseline"]
        kind: str
        if baseline == "snapshot" or baseline == "git":
            kind = baseline
        elif isinstance(baseline, dict):
            if not isinstance(baseline.get("text"), str):
                raise A.InvalidArgs(COMMAND, "`baseline.text` must be a string")
            if len(baseline["text"]) > MAX_BASELINE:
                raise A.InvalidArgs(COMMAND, "`baseline.text` is too large")
            kind = "text"
        else:
            raise A.InvalidArgs(
                COMMAND, f'`baseline` must be "snapshot", "git" or {{"text": ...}}, got {str(baseline)[:60]!r}'
            )
        opened = ls.open_document(uri)
        if opened is None:
            raise A.InvalidArgs(COMMAND, f"unknown document {uri!r}: the editor has not opened it (textDocument/didOpen)")
        doc, state = opened
        if "version" in obj and obj["version"] is not None:
            version = A.get_int(COMMAND, obj, "version")
            if version != doc.version:
                raise A.ContentModified(
                    message=f"{COMMAND}: document version {version} is not the current one ({doc.version})"
                )
        if kind == "snapshot":
            before = state.snapshot
        elif kind == "git":
            before = await head_text(doc.path)
        else:
            before = baseline["text"]
        version, current = state.version, state.text
        report, window = await ls.compute(owned(state.uri, functools.partial(
            measure_windowed, before, current, ls.settings.thresholds.large_file_lines, state.language)))
        still_open = ls.store.docs.get(state.uri) is state  # not closed (and maybe reopened) meanwhile
        obs = store_observation(ls, state, before, current, version, f"checkChange:{kind}", report, window) \
            if still_open and state.version == version else None
        views = obs.views if obs is not None else []
        result = CheckChangeResult(
            report=report.to_builtins(),
            baseline=kind,
            flagged_hunks=[v.index for v in views if v.flagged],
            hunk_messages=[v.message for v in views],
            hunk_severities=[v.severity for v in views],
            version=version,
        )
        out = msgspec.to_builtins(result)
        if window is not None:
            out["window"] = {"startLine": window.start_line, "endLine": window.after_end,
                             "baselineEndLine": window.before_end}
        return out
