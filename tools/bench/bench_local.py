"""Speed of the embedded `local` backend: model load, time to first token, decode tokens per second.

    .venv/bin/python -m tools.bench.bench_local                       # the tiny random model (built here)
    .venv/bin/python -m tools.bench.bench_local --model local         # the default model (downloads ~1 GB once)
    .venv/bin/python -m tools.bench.bench_local --model local:/path/to/model --threads 1,2,4

Each request goes through LocalBackend exactly as the server sends it (worker process, pipe protocol),
with a realistic edit prompt (build_messages on a ~40-line function, style `minimal`), greedy decoding
and a fixed token count. Figures per thread count:
  load      worker start + import + model load (+ download on first use), seconds
  TTFT      request received by the worker -> first generated token (tokenise + prefill + 1 step), ms
  decode    tokens per second after the first token
  overhead  end-to-end latency seen by the caller minus the worker's own generation time (IPC, queue), ms

Measured on the development machine (2 cores, no GPU, shared with other test runs), tiny random model
(2 layers, hidden 32, vocab 600; its toy tokenizer makes the prompt 873 tokens), 200 new tokens:
  load avg 1.1   threads 1: load 3.0 s, TTFT 9 ms,  919 tok/s, overhead 1.1 ms
                 threads 2: load 3.2 s, TTFT 50 ms, 160 tok/s, overhead 1.4 ms
  load avg 4-7   threads 1: load 4.9 s, TTFT 14 ms, 566 tok/s, overhead 0.8 ms
                 threads 2: load 4.9 s, TTFT 18 ms,  76 tok/s, overhead 1.3 ms
The tiny model is bound by transformers' per-step Python work (~1-2 ms a token), and two OpenMP threads
on two shared cores spin against each other: for tiny models use one thread (OMP_NUM_THREADS=1).
`load` is mostly importing torch + transformers in the worker (~3 s here); the pipe adds ~1 ms a request.

The default model Qwen/Qwen2.5-Coder-0.5B-Instruct (494 M parameters, float32, ~2 GB in memory) cannot
be downloaded here; `--default-shape` builds random weights in exactly its shape (24 layers, hidden 896,
14/2 heads, MLP 4864, vocabulary 151,936, tied head), which cost the same per token as the real ones.
Measured so (`--default-shape --threads 1,2 --tokens 32 --rounds 2`, 2 cores, load avg 2-10):
  threads 1: load 3.2-5.1 s, TTFT 5.0-5.2 s (873-token prompt), decode 6 tok/s
  threads 2: load 4.2-5.4 s, TTFT 4.9-12.6 s, decode 1-5 tok/s (worse than one thread on a busy machine)
Qwen's real tokenizer needs about half as many tokens for the same prompt, so expect TTFT ~2.5 s and
~70 s for a 400-token answer on such a machine. Expected elsewhere (to be measured with `--model local`
where the hub is reachable): decode is memory-bandwidth bound (all 2 GB of weights are read per token),
~15-30 tok/s on a recent 8-core laptop; prefill is compute bound (~0.5 TFLOP for a 500-token prompt),
TTFT ~1-2 s there. `--dtype bfloat16` halves memory; it is faster only on CPUs with native bf16
(AVX512-BF16/AMX). The worker uses half the CPUs by default (OMP_NUM_THREADS or
LocalBackend(threads=...) override it).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time

from server.backends.local_backend import LocalBackend, local_backend_config
from server.backends.prompts import build_messages

FUNCTION = '''def summarize(records, key, limit=None):
    """Group records by key and return count, mean and the largest values per group."""
    groups = {}
    for record in records:
        value = record.get(key)
        if value is None:
            continue
        groups.setdefault(value, []).append(record)
    result = []
    for name, items in sorted(groups.items()):
        amounts = [item["amount"] for item in items if "amount" in item]
        if not amounts:
            result.append({"name": name, "count": len(items), "mean": 0.0, "top": []})
            continue
        mean = sum(amounts) / len(amounts)
        top = sorted(amounts, reverse=True)
        if limit is not None:
            top = top[:limit]
        result.append({"name": name, "count": len(items), "mean": mean, "top": top})
    return result


def render(summary):
    lines = []
    for row in summary:
        lines.append(f"{row['name']}: {row['count']} items, mean {row['mean']:.2f}")
        for value in row["top"]:
            lines.append(f"  - {value}")
    return "\\n".join(lines)


def main(records):
    summary = summarize(records, "category", limit=3)
    print(render(summary))
    return summary
'''


async def measure(model: str, threads: int | None, tokens: int, rounds: int, dtype: str) -> dict:
    backend = LocalBackend(
        local_backend_config(model, max_tokens=tokens, timeout_s=3600.0), threads=threads, dtype=dtype
    )
    messages = build_messages("rename `limit` to `max_values`", FUNCTION, style="minimal")
    try:
        t = time.perf_counter()
        ready = await backend.start(lambda p: print(f"  [{p.phase}] {p.message}", flush=True))
        load_s = time.perf_counter() - t
        await backend.complete(messages, max_tokens=4)  # warm-up: first-call allocations
        ttft, decode, overhead, prompt, produced = [], [], [], 0, []
        for _ in range(rounds):
            done = await backend.complete(messages)
            st = backend.last_stats
            assert st is not None and st.ttft_ms is not None
            prompt = st.prompt_tokens
            produced.append(st.completion_tokens)
            ttft.append(st.ttft_ms)
            if st.completion_tokens > 1:
                decode.append((st.completion_tokens - 1) / ((st.gen_ms - st.ttft_ms) / 1000.0))
            overhead.append(done.latency_ms - st.gen_ms)
        return {
            "threads": ready.threads,
            "load_s": load_s,
            "prompt": prompt,
            "tokens": statistics.median(produced),
            "ttft_ms": statistics.median(ttft),
            "tok_s": statistics.median(decode) if decode else float("nan"),
            "overhead_ms": statistics.median(overhead),
        }
    finally:
        await backend.aclose()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", help="local, local:HUB_ID or local:PATH (default: build the tiny test model)")
    ap.add_argument("--threads", default="1,2", help="comma-separated torch thread counts (0: torch's default)")
    ap.add_argument("--tokens", type=int, default=200, help="new tokens per request (greedy, runs to the limit)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    ap.add_argument(
        "--default-shape",
        action="store_true",
        help="random weights in the default model's shape (Qwen2.5-Coder-0.5B): its real speed, no hub",
    )
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="tiny-model-") as tmp:
        model = args.model
        if model is None and args.default_shape:
            from tools.doubles.local_tiny import DEFAULT_MODEL_SHAPE, build_tiny_model

            t = time.perf_counter()
            model = f"local:{build_tiny_model(tmp, **DEFAULT_MODEL_SHAPE)}"  # type: ignore[arg-type]
            print(f"model: random weights in Qwen2.5-Coder-0.5B's shape, built in {time.perf_counter() - t:.0f} s")
        elif model is None:
            from tools.doubles.local_tiny import build_tiny_model

            model = f"local:{build_tiny_model(tmp)}"
            print("model: tiny random Qwen2 (2 layers, hidden 32, vocab 600), built in", tmp)
        else:
            print("model:", model)
        print(
            f"{'threads':>7} {'load s':>7} {'prompt':>6} {'tokens':>6} {'TTFT ms':>8} {'tok/s':>7} {'overhead ms':>11}"
        )
        for n in [int(x) for x in args.threads.split(",")]:
            r = asyncio.run(measure(model, n or None, args.tokens, args.rounds, args.dtype))
            print(
                f"{r['threads']:>7} {r['load_s']:>7.1f} {r['prompt']:>6} {r['tokens']:>6.0f} {r['ttft_ms']:>8.1f} "
                f"{r['tok_s']:>7.0f} {r['overhead_ms']:>11.1f}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
