"""Necessity analysis of a pending proposal: which of its hunks the workspace's tests need.

`editFidelity.analyzeNecessity` {id} runs the workspace test command (`testCommand`) in the sandbox,
never on the host: each run gets a copy of the workspace files the tests need (`necessity.include`,
open buffers as the editor holds them) with the proposal's document replaced by one sub-edit, a
subset of the proposal's change units (each applied with its own edits). The search is the core's ddmin (`server.fidelity.judge.ddmin`): at most
`necessity.maxRuns` runs, `necessity.parallel` at a time, each subset once. The hunks the tests pass
without become diagnostics ("the tests still pass without this hunk") and a code action "Keep only
the needed hunks" applies the needed units (applyProposal, the rest dropped). Those of them that the
instruction asks for neither by kind nor by name are unrequested on the tests' evidence
(`server.fidelity.judge.test_evidence`): the record lists them (`unrequested`) and their diagnostics are
warnings at the severity the unit's kinds have (code `unrequested-for-tests`). The finished analyses
are the server's `analyses` (server.lsp.analyses); what the editor shows of them, server.lsp.necessity.views.

Cancelling ($/cancelRequest or the progress' cancel button) cancels the search and kills the runs in
flight: each analysis has its own sandbox pool, so the uids of its slots run nothing else.
"""

from __future__ import annotations

import asyncio
import fnmatch
import functools
import logging
import os
import re
import threading
import time
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from pygls import uris

from server.fidelity.judge.ddmin import (
    NecessityResult,
    Probe,
    find_needed_units,
    reference_free_excess,
    sub_edit,
)
from server.fidelity.judge.test_evidence import evidence
from server.lsp.analyses import Analysis, stop_runs
from server.lsp.args import ContentModified, InvalidArgs, RequestFailed
from server.lsp.necessity.environment import (
    EnvironmentProblem,
    ensure_environment,
    requirements,
    start_failure,
    start_hint,
)
from server.lsp.progress import WorkDoneToken, WorkProgress
from server.lsp.server import EditFidelityServer
from server.lsp.settings import NecessitySettings
from server.lsp.state import Proposal, owned, same_content
from server.lsp.test_flags import test_flags, unneeded_parts
from server.lsp.views import publish
from server.protocol.commands import NecessityRecord, RunRecord
from server.protocol.names import Command

if TYPE_CHECKING:
    from sandbox import ExecResult, Sandbox  # not on the server's start-up path

logger = logging.getLogger(__name__)

COMMAND = Command.ANALYZE_NECESSITY.value
# Folders never copied: version control, environments, caches, build output.
SKIP_DIRS = frozenset({"__pycache__", "node_modules", "venv", "env", "site-packages", "build", "dist"})


# -- the test command and the workspace ----------------------------------------------------------
def sandbox_argv(command: tuple[str, ...] | list[str]) -> list[str]:
    """The configured command as the sandbox runs it: `python` is the environment's interpreter
    (python3 too), and `pytest` runs as `python -m pytest`."""
    argv = list(command)
    head = PurePosixPath(argv[0]).name
    if head in ("pytest", "py.test"):
        return ["python", "-m", "pytest", *argv[1:]]
    if re.fullmatch(r"python(\d+(\.\d+)*)?", head):
        return ["python", *argv[1:]]
    return argv


def workspace_root(ls: EditFidelityServer, uri: str) -> tuple[Path, str]:
    """The workspace folder holding the document, and the document's path relative to it."""
    path = uris.to_fs_path(uri) if uri.startswith("file:") else None
    if path is None:
        raise RequestFailed(message=f"{COMMAND}: {uri} is not a file on disk: the tests need the workspace")
    doc = Path(path)
    roots = [uris.to_fs_path(f) for f in ls.workspace.folders] + [ls.workspace.root_path]
    found = [Path(r) for r in roots if r and doc.is_relative_to(r)]
    if not found:
        raise RequestFailed(
            message=f"{COMMAND}: {doc} lies outside the workspace folders; the test command "
            "runs on a copy of the workspace folder that holds the document"
        )
    root = max(found, key=lambda r: len(r.parts))
    return root, doc.relative_to(root).as_posix()


def collect_files(
    root: Path, include: tuple[str, ...], max_files: int, max_bytes: int, overrides: dict[str, str]
) -> dict[str, bytes]:
    """The workspace files matching `include` (dot files and folders, caches and environments left
    out; links leaving the workspace too), with `overrides` (relative path -> text) on top."""
    files: dict[str, bytes] = {}
    total = 0
    real_root = root.resolve()
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS)
        for name in sorted(names):
            if name.startswith("."):
                continue
            path = Path(folder, name)
            rel = path.relative_to(root).as_posix()
            if rel in overrides or not any(fnmatch.fnmatch(rel, pat) for pat in include):
                continue
            if path.is_symlink() and not path.resolve().is_relative_to(real_root):
                continue
            try:
                data = path.read_bytes()
            except OSError as exc:
                logger.info("necessity: skipped %s: %s", rel, exc)
                continue
            total += len(data)
            if len(files) + 1 > max_files or total > max_bytes:
                raise RequestFailed(
                    message=f"{COMMAND}: the workspace files matching necessity.include are more "
                    f"than {max_files} files or {max_bytes:,} bytes; narrow "
                    "editFidelity.necessity.include"
                )
            files[rel] = data
    for rel, text in overrides.items():
        files[rel] = text.encode()
    return files


_detected: list[str] = []  # the level found to work here (the machine does not change)


def make_sandbox(setting: str | None, workers: int) -> Sandbox:
    """A pool of its own for one analysis, at the level the `sandbox` setting names; `auto` (or
    none set) picks the strongest that works and refuses to run without isolation. `local` (the VS
    Code setting's "local process with resource limits only") is the `none` level: limits, timeout and
    an unprivileged uid, no namespaces; only when chosen explicitly."""
    from sandbox import LEVELS, Sandbox  # not on the server's start-up path

    level = "none" if setting == "local" else setting
    if level in LEVELS:
        return Sandbox(level, workers=workers, require_isolation=level != "none")
    if setting not in (None, "auto"):
        raise ValueError(f"unknown sandbox setting {setting!r}: auto, local or one of {', '.join(LEVELS)}")
    if not _detected:
        probe = Sandbox(workers=1, require_isolation=True)  # probes the levels once
        _detected.append(probe.level)
        probe.close()
    return Sandbox(_detected[0], workers=workers, require_isolation=True)  # type: ignore[arg-type]


# -- the analysis --------------------------------------------------------------------------------
def _describe(res: NecessityResult, full: ExecResult | None, command: str) -> str:
    n = res.hunks
    if res.status == "no_hunks":
        return "the proposal changes nothing"
    if res.status == "unresolved":
        why = (full.error or full.stderr[-300:]).strip() if full else "no result"
        return f"the sandbox could not run `{command}`: {why}"
    if res.status == "full_fails":
        tail = (full.stderr or full.stdout)[-400:].strip() if full else ""
        status = f"{full.status}, exit code {full.exit_code}" if full else "failed"
        return f"`{command}` fails with the whole proposal ({status}): nothing to conclude" + (
            f"\n{tail}" if tail else ""
        )
    if not res.needed:
        return f"the tests pass on the original: none of the {n} hunks is needed ({res.runs} runs)"
    gone = ", ".join(str(i + 1) for i in res.unnecessary) or "none"
    kept = f"{len(res.needed)} of {n} hunks needed; the tests pass without hunk(s) {gone}"
    if res.status == "budget":
        return f"{kept}; run budget ({res.max_runs}) spent before the rest was shown to be needed"
    return f"{kept} ({res.runs} runs)"


async def analyze(ls: EditFidelityServer, pid: str, token: WorkDoneToken) -> NecessityRecord:
    p = ls.store.proposals.get(pid)
    if p is None:
        raise InvalidArgs(COMMAND, f"no proposal with id {pid!r} (it may have expired or the server restarted)")
    if p.status != "ok" or p.report is None:
        raise RequestFailed(message=f"{COMMAND}: proposal {pid} has no edits: {p.error}")
    if ls.store.apply_state(p).closed:
        raise RequestFailed(message=f"{COMMAND}: proposal {pid} was already applied or rejected")
    docstate = ls.store.docs.get(p.uri)
    if docstate is None:
        raise RequestFailed(message=f"{COMMAND}: the document {p.uri} is not open")
    doc = docstate.current
    if doc.version != p.version or not same_content(docstate, p.version, p.generation, p.original):
        raise ContentModified(
            message=f"{COMMAND}: the document changed since the proposal was computed "
            f"(version {p.version}, now {doc.version})"
        )
    settings = ls.settings
    if not settings.test_command:
        raise RequestFailed(
            message=f"{COMMAND}: no test command: set editFidelity.testCommand "
            '(for example "python -m pytest -x tests/test_x.py")'
        )
    state = ls.analyses
    if pid in state.running:
        raise RequestFailed(message=f"{COMMAND}: an analysis of proposal {pid} is already running")
    root, rel = workspace_root(ls, doc.client_uri)
    state.running.add(pid)
    try:
        return await _analyze(
            ls, p, root, rel, token, settings.necessity, settings.sandbox, list(settings.test_command)
        )
    finally:
        state.running.discard(pid)


async def _analyze(
    ls: EditFidelityServer,
    p: Proposal,
    root: Path,
    rel: str,
    token: WorkDoneToken,
    cfg: NecessitySettings,
    sandbox_setting: str | None,
    command: list[str],
) -> NecessityRecord:
    started = time.perf_counter()
    report = p.report
    assert report is not None and p.edited is not None
    # ddmin over change units, each with its own edits (a rename is one unit over all its occurrences)
    version, original, edits = p.version, p.original, [list(h.edits) for h in report.hunks]
    overrides = _open_buffers(ls, root, cfg.include)
    overrides[rel] = original
    base = await ls.compute(collect_files, root, cfg.include, cfg.max_files, cfg.max_bytes, overrides)
    argv = sandbox_argv(command)
    shown = " ".join(command)
    progress = WorkProgress(ls, token, "Which hunks do the tests need?")
    await progress.start(f"{len(edits)} hunks, at most {cfg.max_runs} runs of `{shown}`")
    try:
        progress.report("the test environment: " + (cfg.environment or ", ".join(requirements(cfg))))
        env = await asyncio.to_thread(ensure_environment, cfg)  # made once (pip), then instant
    except EnvironmentProblem as exc:
        progress.end("no test environment")
        raise RequestFailed(message=f"{COMMAND}: {exc}") from exc
    except BaseException:
        progress.end("cancelled")
        raise
    # held by the server, and not cancelled at shutdown: the sandbox made in the thread must be closed
    making = ls.spawn(
        ls.compute(make_sandbox, sandbox_setting, min(cfg.parallel, cfg.max_runs)),
        name=f"necessity:sandbox:{p.id}",
        cancel=False,
    )
    try:
        box = await asyncio.shield(making)
    except asyncio.CancelledError:  # the pool is made in a thread all the same: release it when it is
        making.add_done_callback(lambda f: None if f.cancelled() or f.exception() else f.result().close())
        progress.end("cancelled")
        raise
    except (ValueError, RuntimeError) as exc:  # IsolationUnavailable is a RuntimeError
        progress.end("no sandbox")
        raise RequestFailed(message=f"{COMMAND}: no sandbox to run the tests in: {exc}") from exc
    boxes = ls.analyses.boxes
    boxes.add(box)
    results: dict[frozenset[int], ExecResult] = {}

    async def run(text: str) -> ExecResult:
        files: dict[str, str | bytes] = dict(base)
        files[rel] = text
        return await box.arun(files, rel, language="python", command=argv, suite=env, timeout_s=cfg.timeout_s)

    async def check(keep: frozenset[int]) -> bool | None:
        res = results[keep] = await run(sub_edit(original, edits, keep))
        return _passed(res)

    async def check_text(text: str) -> bool | None:
        return _passed(await run(text))

    def on_probe(probe: Probe, runs: int, max_runs: int) -> None:
        verdict = {True: "pass", False: "fail", None: "could not run"}[probe.passed]
        progress.report(
            f"run {runs}/{max_runs}: {len(probe.hunks)} of {len(edits)} hunks: {verdict}", int(100 * runs / max_runs)
        )

    try:
        result = await find_needed_units(
            len(edits), check, max_runs=cfg.max_runs, parallel=cfg.parallel, on_probe=on_probe
        )
        parts = await unneeded_parts(ls, p, sub_edit(original, edits, result.needed), result, check_text, cfg)
    except asyncio.CancelledError:
        progress.end("cancelled")
        await asyncio.shield(asyncio.to_thread(_stop_and_close, box, boxes))
        raise
    except BaseException:
        progress.end("failed")
        await asyncio.to_thread(_stop_and_close, box, boxes)
        raise
    await asyncio.to_thread(_close, box, boxes)
    estimate = None
    if result.status in ("minimal", "budget"):
        minimal = sub_edit(original, edits, result.needed)
        estimate = await ls.compute(owned(p.uri, functools.partial(reference_free_excess, original, p.edited, minimal)))
    full = results.get(frozenset(range(len(edits))))
    status, message = result.status, _describe(result, full, shown)
    cannot_start = start_failure(full, base) if status == "full_fails" else None
    unneeded = evidence(result.status, result.needed, result.unnecessary)
    flags = await ls.compute(owned(p.uri, functools.partial(test_flags, ls, p, unneeded))) if unneeded else []
    if cannot_start is not None:  # the command, not the proposal: nothing ran of the workspace
        status = "command_failed"
        message = (
            f"`{shown}` cannot start in the test environment {env!r}: {cannot_start}; {start_hint(cannot_start, cfg)}"
        )
    record = NecessityRecord(
        id=p.id,
        status=status,
        message=message,
        hunks=result.hunks,
        needed=[] if cannot_start else result.needed,
        unnecessary=[] if cannot_start else result.unnecessary,
        runs=result.runs,
        max_runs=result.max_runs,
        cache_hits=result.cache_hits,
        one_minimal=result.one_minimal,
        distance=dict(estimate.distance) if estimate else None,
        d_min=dict(estimate.d_min) if estimate else None,
        excess_ref_free=estimate.excess if estimate else None,
        probes=[_run_record(pr, results.get(frozenset(pr.hunks))) for pr in result.probes],
        test_command=command,
        isolation=box.level,
        environment=env,
        requirements=[] if cfg.environment else list(requirements(cfg)),
        files=len(base),
        elapsed_ms=round((time.perf_counter() - started) * 1000.0, 1),
        unrequested=flags,
        parts=parts.parts,
        part_runs=parts.runs,
        unrequested_parts=[] if cannot_start else parts.flags,
    )
    progress.end(record.message.splitlines()[0])
    st = ls.analyses
    if ls.store.proposals.get(p.id) is p:  # not released (its document closed) meanwhile
        st.done[p.id] = Analysis(proposal_id=p.id, report=report, version=version, result=result, record=record)
    for stale in [k for k in st.done if k not in ls.store.proposals]:
        del st.done[stale]  # the store forgot the proposal: forget its analysis too
    publish(ls, p.uri)
    return record


def _passed(res: ExecResult) -> bool | None:
    return None if res.status == "error" else res.status == "ok"


def _close(box: Sandbox, boxes: set[Sandbox]) -> None:
    box.close()
    boxes.discard(box)  # once closed, whatever cancelled the waiting request


def _stop_and_close(box: Sandbox, boxes: set[Sandbox]) -> None:
    """Kill the runs in flight until the pool's threads are done (a thread may be about to start
    its program as the first sweep passes), then release the pool."""
    closer = threading.Thread(target=_close, args=(box, boxes), name="necessity-close")
    closer.start()
    while closer.is_alive():
        stop_runs(box)
        closer.join(0.05)


def _run_record(probe: Probe, res: ExecResult | None) -> RunRecord:
    return RunRecord(
        hunks=probe.hunks,
        passed=probe.passed,
        status=res.status if res else "unknown",
        wall_s=res.wall_s if res else 0.0,
    )


def _open_buffers(ls: EditFidelityServer, root: Path, include: tuple[str, ...]) -> dict[str, str]:
    """Open documents inside the workspace, as the editor holds them (unsaved changes included)."""
    found: dict[str, str] = {}
    for doc in ls.store.snapshots():
        uri = doc.uri
        path = uris.to_fs_path(uri) if uri.startswith("file:") else None
        if path and Path(path).is_relative_to(root):
            rel = Path(path).relative_to(root).as_posix()
            if not any(part.startswith(".") for part in PurePosixPath(rel).parts) and any(
                fnmatch.fnmatch(rel, pat) for pat in include
            ):
                found[rel] = doc.text
    return found


# -- what the editor shows -----------------------------------------------------------------------
