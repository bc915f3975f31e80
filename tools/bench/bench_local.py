"""Speed of the embedded `local` backend against the memory-bandwidth limit, llama.cpp and transformers
in one run.

    .venv/bin/python -m tools.bench.bench_local                      # the catalogued GGUF models that are fetched
    .venv/bin/python -m tools.bench.bench_local --models smollm2-135m --threads 1 --tokens 32
    .venv/bin/python -m tools.bench.bench_local --api direct --cache-reuse 0   # the direct engine, prefix reuse only

Every figure goes through LocalBackend exactly as the server uses it (worker process, pipe protocol,
the document before the instruction, one open document), on a 200-line document in the editor's
`minimal` style, greedy, a fixed number of new tokens. Per engine, model and thread count:
  load      worker start + model load (+ the thread probe when threads are not given), seconds
  cold      first token of the first request (the whole prompt computed), seconds
  warm      first token after one line in the middle of the document changed (same instruction, same
            open document): the direct engine takes the prefix before the change and the runs after it
            from the KV cache (runs of --cache-reuse tokens or more; 0: the prefix only); llama.cpp's
            server engine the prefix only
  exact     whether the warm answer is the one computed without the moved runs (the moved cells saw the
            old line: an approximation; greedy text compared)
  end       first token after the last line changed: everything before it is cached
  decode    tokens/s after the first token
  RSS       the worker's peak resident memory (VmHWM), MB
  cancel    from cancelling a request mid-generation to the worker confirming it stopped, ms
  bound     copy bandwidth / bytes a token reads: the speed memory allows; `of bound` is decode / bound
The transformers rows use random weights in Qwen2.5-Coder-0.5B's exact shape (`--transformers-shape 1.5b`: the
1.5B's; fp32, the same cost per token as the real weights, which are not on these machines in transformers'
format).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import tempfile
import time
from pathlib import Path

from server.backends.local_backend import LocalBackend, LocalProgress, local_backend_config
from server.backends.local_protocol import LlamaApi
from server.backends.prompts import ChatMessage, build_messages
from server.models.bandwidth import copy_bandwidth, read_bandwidth
from server.models.catalog import CATALOG, is_fetched, model_path
from server.models.gguf import read_gguf

INSTRUCTION = "rename `limit` to `max_values` in summarize_3"


def document(lines: int = 200) -> str:
    """A realistic module of `lines` lines: small functions with a docstring, a loop and a condition."""
    out: list[str] = []
    i = 0
    while len(out) < lines:
        out += [
            f"def summarize_{i}(records, key, limit=None):",
            f'    """Group records by key and return the largest values of group {i}."""',
            "    groups = {}",
            "    for record in records:",
            "        value = record.get(key)",
            "        if value is None:",
            "            continue",
            "        groups.setdefault(value, []).append(record)",
            f"    return sorted(groups.items())[: limit or {i + 3}]",
            "",
        ]
        i += 1
    return "\n".join(out[:lines]) + "\n"


def peak_rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def messages(text: str) -> list[ChatMessage]:
    return build_messages(INSTRUCTION, text, style="minimal", document_first=True)  # as the server asks


async def measure(spec: str, threads: int, tokens: int, cache_reuse: int, api: LlamaApi) -> dict:
    backend = LocalBackend(
        local_backend_config(spec, max_tokens=tokens, timeout_s=3600.0),
        threads=threads,
        cache_reuse=cache_reuse,
        llama_api=api,
        ignore_eos=True,
        progress_interval_s=1.0,
    )
    doc = document()
    lines = doc.splitlines(keepends=True)
    middle = "".join(lines[:100] + ["    # changed\n"] + lines[101:])
    end = middle.rstrip("\n") + "  # changed too\n"
    row: dict = {"spec": spec, "threads": threads}
    try:
        t = time.perf_counter()
        ready = await backend.start()
        row["load_s"] = time.perf_counter() - t
        row["engine"], row["api"] = ready.engine, ready.api
        texts: dict[str, str] = {}
        # last, the reference: the changed document's answer computed without moved runs (another
        # document: the prefix before the changed line is exact, the rest is computed)
        steps = (("cold", doc, "bench"), ("warm", middle, "bench"), ("end", end, "bench"), ("reference", middle, "ref"))
        for label, text, key in steps:
            done = await backend.complete(messages(text), document=key)
            texts[label] = done.text
            st = backend.last_stats
            assert st is not None and st.ttft_ms is not None
            if label in ("cold", "warm", "end"):
                row[label] = st.ttft_ms / 1000.0
                row[f"{label}_cached"] = st.cached_tokens
                row["prompt"] = st.prompt_tokens
            if label == "cold":
                row["decode"] = (st.completion_tokens - 1) / ((st.gen_ms - st.ttft_ms) / 1000.0)
            if ready.engine != "gguf":
                break  # no prompt cache in the transformers engine: warm is cold
        row["exact"] = texts.get("warm") == texts.get("reference")
        worker = backend._worker
        row["rss_mb"] = peak_rss_mb(worker.proc.pid) if worker is not None else None
        row["cancel_ms"] = await cancel_latency_ms(backend, messages(end), tokens)
    finally:
        await backend.aclose()
    return row


async def cancel_latency_ms(backend: LocalBackend, messages: list[ChatMessage], tokens: int) -> float:
    """From cancelling a request mid-generation to the worker's confirmation that it stopped."""
    generating = asyncio.Event()

    def on_progress(progress: LocalProgress) -> None:
        if progress.tokens:
            generating.set()

    task = asyncio.create_task(backend.complete(messages, max_tokens=tokens * 8, on_progress=on_progress))
    await generating.wait()
    worker = backend._worker
    assert worker is not None
    started = time.perf_counter()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    while worker.jobs and worker.alive:
        await asyncio.sleep(0.001)
    return (time.perf_counter() - started) * 1000.0


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--models", default="", help="comma-separated catalog names (default: every fetched one)")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--tokens", type=int, default=64, help="new tokens per request (decoded to the limit)")
    ap.add_argument(
        "--cache-reuse", type=int, default=32, help="direct engine: shortest moved run reused (0: prefix only)"
    )
    ap.add_argument("--api", default="direct,server", help="llama.cpp engines to measure: direct, server")
    ap.add_argument("--no-transformers", action="store_true", help="skip the transformers rows")
    ap.add_argument(
        "--transformers-shape", choices=("0.5b", "1.5b"), default="0.5b", help="the transformers row's model"
    )
    args = ap.parse_args()
    names = [n for n in args.models.split(",") if n] or [n for n, e in CATALOG.items() if is_fetched(e)]
    if unknown := [n for n in names if n not in CATALOG]:
        ap.error(f"--models: unknown {', '.join(unknown)}; known: {', '.join(CATALOG)}")
    apis: list[LlamaApi] = [a for a in ("direct", "server") if a in args.api.split(",")]
    if not apis or len(apis) != len(args.api.split(",")):
        ap.error(f"--api: {args.api!r} is not a comma-separated list of direct, server")
    threads = [int(x) for x in args.threads.split(",") if x.strip().isdigit() and int(x) > 0]
    if len(threads) != len(args.threads.split(",")):
        ap.error(f"--threads: {args.threads!r} is not a comma-separated list of positive counts, e.g. 1,2")
    copy_bw, read_bw = copy_bandwidth(), read_bandwidth()
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    print(
        f"memory bandwidth, one thread: copy {copy_bw / 1e9:.1f} GB/s (bytes copied), "
        + (f"read {read_bw / 1e9:.1f} GB/s" if read_bw else "read: numpy missing")
    )
    runs: list[tuple[str, str, int, LlamaApi]] = []  # (label, spec, bytes per token, llama api)
    for name in names:
        entry = CATALOG[name]
        if not is_fetched(entry):
            print(f"{name}: not fetched (edit-fidelity model fetch {name}); skipped")
            continue
        per_token = read_gguf(model_path(entry)).bytes_per_token()
        runs += [(f"llama.cpp {api} {name}", f"local:{name}", per_token, api) for api in apis]
    tmp = tempfile.TemporaryDirectory(prefix="bench-local-hf-")
    if not args.no_transformers:
        from tools.doubles.local_tiny import DEFAULT_MODEL_SHAPE, QWEN_15B_SHAPE, build_tiny_model

        shape = QWEN_15B_SHAPE if args.transformers_shape == "1.5b" else DEFAULT_MODEL_SHAPE
        path = build_tiny_model(tmp.name, **shape)  # type: ignore[arg-type]
        params = sum(f.stat().st_size for f in Path(path).glob("*.safetensors"))  # fp32: 4 bytes a weight
        runs.append((f"transformers {args.transformers_shape.upper()}-shape fp32", f"local:{path}", params, "auto"))
    header = (
        f"{'engine and model':<32} {'thr':>3} {'load s':>6} {'prompt':>6} {'cold s':>6} {'warm s':>6} "
        f"{'exact':>5} {'end s':>6} {'tok/s':>6} {'RSS MB':>7} {'B/token':>8} {'bound':>6} {'of bound':>8} {'cancel ms':>9}"
    )
    print(header)
    for label, spec, per_token, api in runs:
        for n in threads:
            r = asyncio.run(measure(spec, n, args.tokens, args.cache_reuse, api))
            bound = copy_bw / per_token
            gguf = r["engine"] == "gguf"
            warm = f"{r['warm']:.2f}" if gguf else "-"
            end = f"{r['end']:.2f}" if gguf else "-"
            exact = ("yes" if r["exact"] else "no") if gguf else "-"
            print(
                f"{label:<32} {n:>3} {r['load_s']:>6.1f} {r['prompt']:>6} {r['cold']:>6.2f} "
                f"{warm:>6} {exact:>5} {end:>6} "
                f"{r['decode']:>6.1f} {r['rss_mb'] or 0:>7.0f} {per_token / 1e6:>7.0f}M {bound:>6.1f} "
                f"{r['decode'] / bound:>8.0%} {r['cancel_ms']:>9.0f}",
                flush=True,
            )
            if gguf:
                print(f"{'':<32}     cached tokens: warm {r['warm_cached']} of {r['prompt']}, end {r['end_cached']}")
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
