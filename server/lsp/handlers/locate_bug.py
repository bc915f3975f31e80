"""`editFidelity.locateBug` {uri, version, range?, backends?} -> {answers, warnings}: where is the syntax bug?

Each chosen backend gets the Bug In The Code Stack prompt over the document (or the selected lines,
numbered with their document line numbers) and answers `<line_number>, <bug_type>`. Every answer is
returned as it came (`raw`) with its parse: `status` "ok" (line and bug type), "unparseable" (the
answer is not in that format; `problem` says why; nothing is guessed) or "error" (the backend failed).
An answered line inside the lines the model was shown gets a warning diagnostic on that line,
published with the document's other diagnostics (`views.bug_diagnostics`) until the document changes.

Progress and cancellation as for requestEdit: one report per backend; `$/cancelRequest` or the
progress' cancel button cancels the backend calls, which closes their HTTP requests.
"""

from __future__ import annotations

import asyncio
import time

from lsprotocol import types

from server.backends import BackendError, OpenAIBackend
from server.backends.local_backend import LocalBackend, LocalProgress
from server.backends.locate import (
    LocatedBug,
    build_messages,
    document_lines,
    parse_answer,
)
from server.backends.prompts import ChatMessage
from server.lsp.args import ContentModified, InvalidArgs, RequestFailed, span
from server.lsp.lines import whole_lines
from server.lsp.progress import WorkDoneToken, WorkProgress, as_finished
from server.lsp.server import EditFidelityServer
from server.lsp.state import BugMark, same_content
from server.lsp.views import publish
from server.protocol.commands import BugAnswer, LocateBugArgs, LocateBugResult, Usage
from server.protocol.names import Command

COMMAND = Command.LOCATE_BUG.value
RAW_LIMIT = 20_000  # characters of the answer returned as `raw`


Backend = OpenAIBackend | LocalBackend


def _choose_backends(ls: EditFidelityServer, names: list[str] | None) -> list[Backend]:
    if len(ls.pool) == 0:
        raise RequestFailed(
            message=f"{COMMAND}: no backends configured (settings: editFidelity.backends)"
            + (f"; rejected entries: {'; '.join(ls.config_problems)}" if ls.config_problems else "")
        )
    if names is None:
        names = ls.pool.names()
    unknown = [n for n in names if ls.pool.get(n) is None]
    if unknown:
        raise InvalidArgs(
            COMMAND,
            f"unknown backend{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(map(repr, unknown))}; configured: {', '.join(ls.pool.names())}",
        )
    return [b for n in names if (b := ls.pool.get(n)) is not None]


def _said(a: BugAnswer) -> str:
    return f"{a.backend}: " + (f"line {a.line}, {a.bug_type}" if a.status == "ok" else a.status)


async def _ask(
    backend: Backend, messages: list[ChatMessage], first: int, last: int, progress: WorkProgress
) -> BugAnswer:
    started = time.perf_counter()
    try:
        if isinstance(backend, LocalBackend):

            def on_progress(e: LocalProgress, name: str = backend.name) -> None:
                progress.report(
                    f"{name}: {f'{e.tokens}/{e.max_tokens} tokens' if e.phase == 'generating' else e.message}"
                )

            completion = await backend.complete(messages, on_progress=on_progress)
        else:
            completion = await backend.complete(messages)
    except BackendError as exc:
        return BugAnswer(
            backend=backend.name,
            status="error",
            error=exc.message,
            error_kind=exc.kind,
            latency_ms=round((time.perf_counter() - started) * 1000.0, 2),
            attempts=exc.attempts,
        )
    parsed: LocatedBug = parse_answer(completion.text)
    usage = None
    if completion.prompt_tokens is not None or completion.completion_tokens is not None:
        usage = Usage(completion.prompt_tokens, completion.completion_tokens)
    answer = BugAnswer(
        backend=backend.name,
        status="ok" if parsed.parseable else "unparseable",
        raw=completion.text[:RAW_LIMIT],
        problem=parsed.problem,
        latency_ms=round(completion.latency_ms, 2),
        usage=usage,
        attempts=completion.attempts,
    )
    if parsed.parseable:
        answer.line, answer.bug_type, answer.known_type = parsed.line, parsed.bug_type, parsed.known_type
        answer.in_range = parsed.line is not None and first <= parsed.line <= last
    return answer


class LocateBugHandler:
    name = Command.LOCATE_BUG

    async def run(self, ls: EditFidelityServer, args: LocateBugArgs, work_done: WorkDoneToken) -> LocateBugResult:
        uri, version, rng = args.uri, args.version, span(args.range)
        names = list(dict.fromkeys(args.backends)) if args.backends is not None else None
        doc = ls.store.snapshot(uri)
        if doc is None:
            raise InvalidArgs(COMMAND, f"unknown document {uri!r}: the editor has not opened it (textDocument/didOpen)")
        if doc.version != version:
            raise ContentModified(
                message=f"{COMMAND}: document version {version} is not the current one "
                f"({doc.version}); the buffer changed, request again"
            )
        text = doc.text
        n_lines = len(document_lines(text))
        if n_lines == 0:
            raise InvalidArgs(COMMAND, "the document is empty: there is no line to find a bug on")
        selection = None
        if rng is not None:
            (sl, sc), (el, ec) = rng
            if sl > n_lines - 1 or el > n_lines:
                raise InvalidArgs(COMMAND, f"`range` lies outside the document ({n_lines} lines)")
            selection = whole_lines(text, (sl, sc), (el, ec))
            selection = (selection[0], min(selection[1], n_lines - 1))
        backends = _choose_backends(ls, names)
        first, last = (selection[0] + 1, selection[1] + 1) if selection else (1, n_lines)
        messages = build_messages(text, selection)

        progress = WorkProgress(ls, work_done, "Locating the syntax bug")
        await progress.start(f"asking {len(backends)} backend{'s' if len(backends) != 1 else ''}")
        tasks = [
            asyncio.create_task(_ask(b, messages, first, last, progress), name=f"locate:{b.name}") for b in backends
        ]
        answers = await as_finished(progress, tasks, _said)
        order = {b.name: i for i, b in enumerate(backends)}
        answers.sort(key=lambda a: order.get(a.backend, 0))
        n_ok = sum(a.status == "ok" for a in answers)
        progress.end(f"{n_ok} answer{'s' if n_ok != 1 else ''} in the expected format")

        warnings = []
        for a in answers:
            if a.status == "ok" and not a.in_range:
                warnings.append(f"{a.backend} answered line {a.line}, outside the lines it was shown ({first}-{last})")
        current = ls.store.document(uri)
        if current is None or current.version != version or not same_content(current, version, doc.generation, text):
            # edited, closed, or closed and reopened with other text (versions restart on reopen)
            warnings.append("the document changed while the backends worked: no diagnostics were published")
        else:
            current.bug_marks = [
                BugMark(line=a.line - 1, bug_type=a.bug_type or "", backend=a.backend, version=version)
                for a in answers
                if a.status == "ok" and a.in_range and a.line is not None
            ]
            publish(ls, current.uri)
        errors = [a for a in answers if a.status == "error"]
        if errors and len(errors) == len(answers):
            ls.show("edit-fidelity: " + "; ".join(a.error or "" for a in errors)[:800], types.MessageType.Error)
        return LocateBugResult(
            answers=answers, uri=doc.client_uri, version=version, first_line=first, last_line=last, warnings=warnings
        )
