"""The path shared by `requestEdit` and `compareBackends`: validate, ask backends concurrently,
turn each answer into a proposal with its fidelity report, publish.

Cancellation (`$/cancelRequest` or the progress' cancel button) cancels the command task; the
backend calls are child tasks and get cancelled with it, which closes their HTTP requests.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import time
import uuid
from dataclasses import dataclass
from typing import Any

from lsprotocol import types

from server.backends import BackendError, OpenAIBackend
from server.backends.extract import extract_for, parses
from server.backends.local_backend import LocalBackend, LocalProgress
from server.backends.local_spec import dependency_problem
from server.backends.openai_backend import Completion
from server.backends.prompts import WHOLE_DOCUMENT_STYLES, PromptPlan, build_prompt
from server.fidelity import measure
from server.fidelity.lang.table import resolve
from server.lsp.args import ContentModified, InvalidArgs, RequestFailed, span
from server.lsp.flagging import flag_units
from server.lsp.lines import assemble_selection, split_lines, whole_lines
from server.lsp.progress import WorkDoneToken, WorkProgress, as_finished
from server.lsp.server import EditFidelityServer
from server.lsp.state import Proposal, owned, same_content
from server.lsp.unit_views import statement_views, unit_views
from server.lsp.views import publish
from server.protocol.commands import RequestEditArgs

logger = logging.getLogger(__name__)


@dataclass
class EditRequest:
    uri: str
    key: str
    version: int
    text: str
    instruction: str
    selection: tuple[int, int] | None
    backends: list[OpenAIBackend | LocalBackend]
    style: str | None
    warnings: list[str]
    gold: str | None = None  # benchmark-only: the reference edit of the whole buffer, for `excess`
    language: str = "python"  # the document's languageId
    answer_language: str | None = None  # the answer's, when not the document's (a translation)
    n: int = 1  # samples per backend, from one request (the endpoint's `n`)
    generation: int = 0  # the opening of the document the text belongs to (DocState.generation)


def parse_request(ls: EditFidelityServer, command: str, args: RequestEditArgs) -> EditRequest:
    """The request checked against the buffer and the configured backends (the arguments are decoded)."""
    uri, version, instruction, style, gold = args.uri, args.version, args.instruction, args.style, args.gold
    rng = span(args.range)
    names = list(dict.fromkeys(args.backends)) if args.backends is not None else None
    n = args.n or 1
    answer_language = args.answer_language
    if answer_language is not None and rng is not None:
        raise InvalidArgs(command, "`answerLanguage` rewrites whole documents: leave out `range`")
    if style in WHOLE_DOCUMENT_STYLES and rng is not None:
        raise InvalidArgs(command, f"style {style!r} edits whole documents (the paper's format): leave out `range`")
    doc = ls.store.snapshot(uri)
    if doc is None:
        raise InvalidArgs(command, f"unknown document {uri!r}: the editor has not opened it (textDocument/didOpen)")
    if doc.version != version:
        raise ContentModified(
            message=f"{command}: document version {version} is not the current one ({doc.version}); "
            "the buffer changed, request again"
        )
    text = doc.text
    selection = None
    if rng is not None:
        n_lines = len(split_lines(text))
        (sl, sc), (el, ec) = rng
        if sl > max(n_lines - 1, 0) or el > n_lines:
            raise InvalidArgs(command, f"`range` lies outside the document ({n_lines} lines)")
        selection = whole_lines(text, (sl, sc), (el, ec))

    if len(ls.pool) == 0:
        raise RequestFailed(
            message=f"{command}: no backends configured (settings: editFidelity.backends)"
            + (f"; rejected entries: {'; '.join(ls.config_problems)}" if ls.config_problems else "")
            + ("; for the embedded CPU model: pip install 'edit-fidelity[local]'" if dependency_problem() else "")
        )
    if names is None:
        chosen = [ls.pool.get(n) for n in ls.pool.names()]
    else:
        unknown = [n for n in names if ls.pool.get(n) is None]
        if unknown:
            raise InvalidArgs(
                command,
                f"unknown backend{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
                f"configured: {', '.join(ls.pool.names())}",
            )
        chosen = [ls.pool.get(n) for n in names]
    warnings = []
    language = doc.language_id or "python"
    if language == "python" and text.strip() and not parses(text):
        warnings.append("the buffer does not parse as Python; the fidelity report covers what it can")
    return EditRequest(
        uri=doc.client_uri,
        key=doc.uri,
        version=version,
        text=text,
        instruction=instruction,
        selection=selection,
        backends=[b for b in chosen if b is not None],
        style=style,
        warnings=warnings,
        gold=gold,
        language=language,
        n=n,
        generation=doc.generation,
        answer_language=answer_language if answer_language != language else None,
    )


def _match_line_endings(original: str, code: str) -> str:
    """Models answer with \\n; a CRLF buffer keeps its CRLF (else every line would be a change)."""
    if "\r\n" in original and "\r\n" not in code and original.count("\r\n") * 2 >= original.count("\n"):
        return code.replace("\n", "\r\n")
    return code


def _normalise_whole_file(original: str, code: str) -> str:
    if original.endswith(("\n", "\r")) and not code.endswith(("\n", "\r")):
        return code + ("\r\n" if original.endswith("\r\n") else "\n")
    if not original.endswith(("\n", "\r")) and code.endswith("\n"):
        return code.rstrip("\r\n")
    return code


async def _ask(
    backend: OpenAIBackend | LocalBackend,
    plan: PromptPlan,
    n: int,
    progress: WorkProgress | None,
    document: str | None = None,
) -> Completion:
    if plan.prompt is not None:
        if isinstance(backend, LocalBackend):
            raise BackendError(
                "unsupported",
                f"backend {backend.name!r} (the embedded model) has no text-completion endpoint: use a chat style",
            )
        return await backend.complete_prompt(plan.prompt, stop=plan.stop, n=n)
    if isinstance(backend, LocalBackend):
        if n > 1:
            raise BackendError(
                "unsupported",
                f"backend {backend.name!r} (the embedded model) samples one answer per request: leave out `n`",
            )
        if progress is not None:
            # a CPU model takes a while: say what it does (downloading, loading, tokens so far)
            def on_progress(e: LocalProgress, name: str = backend.name) -> None:
                text = f"{e.tokens}/{e.max_tokens} tokens" if e.phase == "generating" else e.message
                progress.report(f"{name}: {text}")

            return await backend.complete(plan.messages, on_progress=on_progress, document=document)
        return await backend.complete(plan.messages, document=document)
    return await backend.complete(plan.messages, n=n)


async def ask_backend(
    ls: EditFidelityServer,
    req: EditRequest,
    backend: OpenAIBackend | LocalBackend,
    progress: WorkProgress | None = None,
) -> list[Proposal]:
    """One request to one backend; a proposal per sample (`req.n`), or one error proposal."""
    style = req.style or backend.config.style or ls.settings.default_style
    if req.selection is not None and style in WHOLE_DOCUMENT_STYLES:
        style = ls.settings.default_style if ls.settings.default_style not in WHOLE_DOCUMENT_STYLES else "minimal"

    def proposal(sample: int, **answer: Any) -> Proposal:
        return Proposal(
            id=uuid.uuid4().hex,
            uri=req.key,
            version=req.version,
            backend=backend.name,
            instruction=req.instruction,
            style=style,
            original=req.text,
            target=req.selection,
            client_uri=req.uri,
            sample=sample,
            generation=req.generation,
            **answer,
        )

    started = time.perf_counter()
    try:
        plan = build_prompt(
            req.instruction,
            req.text,
            style=style,
            selection=req.selection,
            language=req.language,
            answer_language=req.answer_language,
            document_first=isinstance(backend, LocalBackend),  # its KV cache then keeps the document
        )
        # one opening of the document: the embedded model reuses its cache across versions of it
        completion = await _ask(backend, plan, req.n, progress, f"{req.uri}#{req.generation}")
    except BackendError as exc:
        latency_ms = (time.perf_counter() - started) * 1000.0
        return [
            proposal(
                0, status="error", error=exc.message, error_kind=exc.kind, attempts=exc.attempts, latency_ms=latency_ms
            )
        ]
    answers = [(completion.text, completion.finish_reason), *completion.more]
    out = []
    for i, (text, finish) in enumerate(answers):
        p = proposal(
            i,
            latency_ms=completion.latency_ms,
            prompt_tokens=completion.prompt_tokens,
            cached_tokens=completion.cached_tokens,
            completion_tokens=completion.completion_tokens if len(answers) == 1 else None,
            attempts=completion.attempts,
            truncated=finish == "length",
            samples=len(answers),
        )
        out.append(await _score(ls, req, backend, plan, text, p))
    return out


async def _score(
    ls: EditFidelityServer,
    req: EditRequest,
    backend: OpenAIBackend | LocalBackend,
    plan: PromptPlan,
    text: str,
    p: Proposal,
) -> Proposal:
    """The proposal for one answer (`p`, with what the backend said of it) completed: the code in the
    answer, the edited document, its fidelity report and the judgment of its units."""
    try:
        code = extract_for(text, language=req.answer_language or req.language, mode=plan.extract)
        if code is None:
            preview = " ".join(text.split())[:120]
            raise BackendError(
                "no_code", f"backend {backend.name!r} answered without code: {preview!r}", attempts=p.attempts
            )
        code = _match_line_endings(req.text, code)
        if req.selection is None:
            edited = _normalise_whole_file(req.text, code)
        else:
            edited = assemble_selection(req.text, req.selection[0], req.selection[1], code)
        target = range(req.selection[0] + 1, req.selection[1] + 2) if req.selection else None
        report = await ls.compute(
            owned(
                req.key,
                functools.partial(
                    measure, req.text, edited, gold=req.gold, target=target, language=resolve(req.language, req.key)
                ),
            )
        )
        distance = report.distance.get("no_comments")
        thresholds = ls.settings.thresholds
        heavy = distance is not None and distance.normalized > thresholds.distance_warning
        p = dataclasses.replace(p, edited=edited, report=report, heavy=heavy)  # kept should the judgment fail
        flagged = flag_units(report, req.instruction, original=req.text, edited=edited)
        return dataclasses.replace(
            p,
            flagged=flagged,
            views=unit_views(report, flagged, thresholds, edited_side=False),
            statement_views=statement_views(report, flagged, thresholds, edited),
        )
    except BackendError as exc:
        return dataclasses.replace(p, status="error", error=exc.message, error_kind=exc.kind)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # a bug must cost one proposal, not the server
        logger.exception("edit request to %s failed", backend.name)
        error = f"internal error: {type(exc).__name__}: {exc}"[:300]
        return dataclasses.replace(p, status="error", error=error, error_kind="internal")


async def run_edit(ls: EditFidelityServer, req: EditRequest, token: WorkDoneToken, title: str) -> list[Proposal]:
    progress = WorkProgress(ls, token, title)
    await progress.start(f"asking {len(req.backends)} backend{'s' if len(req.backends) != 1 else ''}")
    tasks = [asyncio.create_task(ask_backend(ls, req, b, progress), name=f"edit:{b.name}") for b in req.backends]

    def describe(ps: list[Proposal]) -> str:
        ok_n = sum(1 for p in ps if p.status == "ok")
        state = "ok" if ok_n == len(ps) else f"error ({ps[0].error_kind})" if len(ps) == 1 else f"{ok_n}/{len(ps)} ok"
        return f"{ps[0].backend}: {state}, {ps[0].latency_ms:.0f} ms"

    done = [p for ps in await as_finished(progress, tasks, describe) for p in ps]
    order = {b.name: i for i, b in enumerate(req.backends)}
    done.sort(key=lambda p: (order.get(p.backend, 0), p.sample))
    if req.key in ls.store.docs:
        for p in done:  # kept even when the buffer moved on: applying one is then refused as stale
            ls.store.add_proposal(p)
        first = next((p for p in done if ls.store.is_pending(p)), None)
        if first is not None:  # the newest answers are what the editor shows; the others a lens away
            ls.store.docs[req.key].active_proposal = first.id
            ls.store.docs[req.key].actions_cache = None
    else:  # closed while the backends worked: nothing to show them on; applying one is refused as stale
        ls.store.forget([p.id for p in done], req.key)
        ls.store.release_document(req.key)
    req.warnings.extend(_heavy(p, ls.settings.thresholds.distance_warning) for p in done if p.heavy)
    n_ok = sum(1 for p in done if p.status == "ok")
    progress.end(
        f"{n_ok} proposal{'s' if n_ok != 1 else ''}, {len(done) - n_ok} error{'s' if len(done) - n_ok != 1 else ''}"
    )
    errors = [p for p in done if p.status == "error"]
    if errors and n_ok == 0:
        ls.show("edit-fidelity: " + "; ".join(p.error or "" for p in errors)[:800], types.MessageType.Error)
    publish(ls, req.key)
    ls.refresh_code_lenses()
    return done


def _heavy(p: Proposal, limit: float) -> str:
    """thresholds.distanceWarning: the proposal rewrites more of the code than an edit should."""
    assert p.report is not None
    d = p.report.distance["no_comments"].normalized
    return (
        f"{p.label}: the proposal rewrites {d:.0%} of the code (no_comments token distance {d:.2f} > "
        f"thresholds.distanceWarning {limit:g})"
    )


def stale_warning(ls: EditFidelityServer, req: EditRequest) -> str | None:
    """Why the answers no longer belong to the buffer, if they do not."""
    state = ls.store.docs.get(req.key)
    if state is None:
        return "the document was closed while the backends worked: these proposals are stale"
    if not same_content(state, req.version, req.generation, req.text):
        return (
            "the document changed while the backends worked (edited, or closed and reopened with other "
            "text): these proposals are stale"
        )
    return None
