"""`edit-fidelity demo`: one edit request answered by the embedded model, with its fidelity report.

The embedded example (a one-token bug, `server/example.py`) goes to the local backend in the editor's
`minimal` style, exactly as the server sends it; the answer's code is spliced in and measured against
the original and the reference fix. No key, no GPU, no network once the model is fetched.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

from server import example


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "demo",
        help="one edit by the embedded model, with its fidelity report",
        description="Ask the embedded model to fix the example's bug and report how faithful its edit is.",
    )
    parser.add_argument("--model", default="local", help="local, local:NAME or local:FILE.gguf (default: local)")
    parser.add_argument("--offline", action="store_true", help="never download: use the fetched models only")
    parser.add_argument("--max-tokens", type=int, default=512)
    parser.add_argument("--threads", type=int, help="llama.cpp threads (default: measured at start)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(_demo(args))
    except KeyboardInterrupt:
        return 130


async def _demo(args: argparse.Namespace) -> int:
    from server.backends.extract import extract_for
    from server.backends.local_backend import LocalBackend, LocalProgress, local_backend_config
    from server.backends.openai_backend import BackendError
    from server.backends.prompts import build_prompt
    from server.fidelity import measure
    from server.report_text import render_report

    def show(p: LocalProgress) -> None:
        text = f"{p.tokens} tokens" if p.phase == "generating" and p.tokens else p.message
        print(f"\r[{p.phase}] {text}".ljust(78), end="" if p.phase == "generating" else "\n", file=sys.stderr)

    try:
        backend = LocalBackend(
            local_backend_config(args.model, max_tokens=args.max_tokens, timeout_s=1800.0),
            offline=args.offline or None,
            threads=args.threads,
        )
    except BackendError as exc:
        print(f"edit-fidelity demo: error: {exc.message}", file=sys.stderr)
        return 2
    plan = build_prompt(example.INSTRUCTION, example.ORIGINAL, style="minimal")
    started = time.perf_counter()
    try:
        ready = await backend.start(show)
        print(f"model: {ready.path} ({ready.threads} thread(s), loaded in {ready.load_s:.1f} s)", file=sys.stderr)
        print(f"instruction: {example.INSTRUCTION}", file=sys.stderr)
        completion = await backend.complete(plan.messages, on_progress=show)
    except BackendError as exc:
        print(f"\nedit-fidelity demo: error: {exc.message}", file=sys.stderr)
        return 2
    finally:
        await backend.aclose()
    stats = backend.last_stats
    print(file=sys.stderr)
    if stats is not None and stats.ttft_ms is not None and stats.completion_tokens > 1:
        rate = (stats.completion_tokens - 1) / max((stats.gen_ms - stats.ttft_ms) / 1000.0, 1e-9)
        print(
            f"{stats.prompt_tokens} prompt tokens, first token after {stats.ttft_ms / 1000:.1f} s, "
            f"{stats.completion_tokens} tokens at {rate:.1f} tokens/s; {time.perf_counter() - started:.1f} s in all",
            file=sys.stderr,
        )
    code = extract_for(completion.text, language="python", mode=plan.extract)
    if code is None:
        print(f"the model answered without code:\n{completion.text}")
        return 1
    edited = code if code.endswith("\n") else code + "\n"
    print("the model's edit:\n" + edited)
    render_report(measure(example.ORIGINAL, edited, gold=example.GOLD), title="fidelity of the edit")
    return 0
