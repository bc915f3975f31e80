"""How often the embedded model's moved cache changes its answer: the approximation of reusing the KV
cache after an edited line (local_llama_direct), measured on real code.

    EDIT_FIDELITY_DATA=../shared/data .venv/bin/python -m tools.bench.bench_kv_reuse \\
        [--model qwen2.5-coder-0.5b] [--documents 20] [--tokens 48]

For each of the first CanItEdit problems (`before`, the descriptive instruction, the server's prompt with
the document first): one line in the middle of the document gets a comment appended (the editor's case:
a small edit, then the same request again). The answer is computed twice, greedy:
  exact  the changed document as another document: the prefix before the line from the cache, the rest
         computed;
  warm   the changed document as the same open document: the cache after the line moved into place.
It prints, per document, the tokens computed for each and whether the answers are equal, then the share
of equal answers and the mean length of their common prefix (characters). Moved cells attended to the
old line, so an answer may differ; a share well below 1 would make the reuse a bad default.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from benchmark.datadir import DataError, data_dir
from benchmark.suites.canitedit import problems as canitedit
from server.backends.local_backend import LocalBackend, local_backend_config
from server.backends.prompts import ChatMessage, build_messages
from server.models.catalog import CATALOG, is_fetched


def changed(text: str) -> str:
    """The document with a comment appended to the non-blank line nearest its middle."""
    lines = text.splitlines(keepends=True)
    middle = len(lines) // 2
    at = min((i for i, line in enumerate(lines) if line.strip()), key=lambda i: abs(i - middle))
    body = lines[at].rstrip("\r\n")
    lines[at] = body + "  # edited" + lines[at][len(body) :]
    return "".join(lines)


async def measure(model: str, problems: list[canitedit.Problem], tokens: int) -> int:
    backend = LocalBackend(local_backend_config(f"local:{model}", max_tokens=tokens, timeout_s=3600.0), ignore_eos=True)
    equal, prefix = 0, 0
    try:
        ready = await backend.start()
        if ready.api != "direct":
            print(f"the direct engine did not start ({ready.api}): nothing to measure", file=sys.stderr)
            return 1
        print(f"{model}, {ready.threads} thread(s), {tokens} new tokens per answer")
        print(f"{'problem':<28} {'prompt':>6} {'exact computed':>14} {'warm computed':>13} {'equal':>5}")
        for i, p in enumerate(problems):

            def ask(text: str, instruction: str = p.instruction_descriptive) -> list[ChatMessage]:
                return build_messages(instruction, text, style="minimal", document_first=True)

            after = changed(p.before)
            await backend.complete(ask(p.before), document=f"doc{i}")
            exact = await backend.complete(ask(after), document=f"other{i}")
            exact_stats = backend.last_stats
            await backend.complete(ask(p.before), document=f"doc{i}")  # the editor's cache again
            warm = await backend.complete(ask(after), document=f"doc{i}")
            warm_stats = backend.last_stats
            assert exact_stats is not None and warm_stats is not None
            same = warm.text == exact.text
            equal += same
            prefix += len(os.path.commonprefix([warm.text, exact.text]))
            print(
                f"{p.full_name[:28]:<28} {warm_stats.prompt_tokens:>6} "
                f"{exact_stats.prompt_tokens - exact_stats.cached_tokens:>14} "
                f"{warm_stats.prompt_tokens - warm_stats.cached_tokens:>13} {'yes' if same else 'no':>5}",
                flush=True,
            )
    finally:
        await backend.aclose()
    n = len(problems)
    print(f"equal answers: {equal}/{n} ({equal / n:.0%}); mean common prefix {prefix / n:.0f} characters")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--model", default="qwen2.5-coder-0.5b", help="a catalogued GGUF model (edit-fidelity model list)")
    ap.add_argument("--documents", type=int, default=20)
    ap.add_argument("--data", help="the benchmark data directory (default: $EDIT_FIDELITY_DATA)")
    ap.add_argument("--tokens", type=int, default=48)
    args = ap.parse_args()
    if args.model not in CATALOG:
        ap.error(f"--model: unknown {args.model!r}; known: {', '.join(CATALOG)}")
    if not is_fetched(CATALOG[args.model]):
        ap.error(f"--model: {args.model} is not fetched; run: edit-fidelity model fetch {args.model}")
    if args.documents < 1 or args.tokens < 1:
        ap.error("--documents and --tokens must be at least 1")
    try:
        problems = canitedit.load(data_dir(args.data), limit=args.documents)
    except DataError as exc:
        ap.error(str(exc))
    os.environ.setdefault("EDIT_FIDELITY_LOCAL_THREADS", "1")
    return asyncio.run(measure(args.model, problems, args.tokens))


if __name__ == "__main__":
    raise SystemExit(main())
