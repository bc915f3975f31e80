"""Speed of the embedded `local` backend: model load, time to first token, decode tokens per second.

    .venv/bin/python -m benchmark.bench_local                       # the tiny random model (built here)
    .venv/bin/python -m benchmark.bench_local --model local         # the default model (downloads ~1 GB once)
    .venv/bin/python -m benchmark.bench_local --model local:/path/to/model --threads 1,2,4

Each request goes through LocalBackend exactly as the server sends it (worker process, pipe protocol),
with a realistic edit prompt (build_messages on a ~40-line function, style `minimal`), greedy decoding
and a fixed token count. Figures per thread count:
  load      worker start + import + model load (+ download on first use), seconds
  TTFT      request received by the worker -> first generated token (tokenise + prefill + 1 step), ms
  decode    tokens per second after the first token
  overhead  end-to-end latency seen by the caller minus the worker's own generation time (IPC, queue), ms

Measured on the development machines (2 shared cores, no GPU; the other sessions' tests ran too), tiny
random model (2 layers, hidden 32, vocab 600), prompt 600 tokens, 200 new tokens:
  threads 1: load ~3-6 s, TTFT ~10-25 ms, decode ~250-450 tok/s, overhead ~1-3 ms
  threads 2: decode drops to ~40-70 tok/s on a busy machine (two OpenMP threads spin against each other)
These are Python-loop bound (transformers' generate costs ~2-4 ms a step whatever the model).

Expected for the default model Qwen/Qwen2.5-Coder-0.5B-Instruct (494 M parameters, float32, ~2 GB in
memory), NOT measured here (the hub is unreachable from these machines); to be measured with
`--model local` where it can be downloaded. Decode is memory-bandwidth bound (every token reads all
weights): ~8-15 tok/s on 2 cores / ~20 GB/s, ~20-40 tok/s on a recent 8-core laptop; prefill is compute
bound (~1 TFLOP for a 1,000-token prompt): TTFT ~5-15 s on 2 cores, ~1-3 s on 8 cores. A 40-line edit
(~400 answer tokens) therefore takes ~30-60 s on 2 cores and ~10-20 s on a laptop. `--dtype bfloat16`
halves memory; it is faster only on CPUs with native bf16 (AVX512-BF16/AMX).
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
            "threads": ready.threads, "load_s": load_s, "prompt": prompt, "tokens": statistics.median(produced),
            "ttft_ms": statistics.median(ttft), "tok_s": statistics.median(decode) if decode else float("nan"),
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
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="tiny-model-") as tmp:
        model = args.model
        if model is None:
            from server.backends.local_tiny import build_tiny_model

            model = f"local:{build_tiny_model(tmp)}"
            print("model: tiny random Qwen2 (2 layers, hidden 32, vocab 600), built in", tmp)
        else:
            print("model:", model)
        print(f"{'threads':>7} {'load s':>7} {'prompt':>6} {'tokens':>6} {'TTFT ms':>8} {'tok/s':>7} {'overhead ms':>11}")
        for n in [int(x) for x in args.threads.split(",")]:
            r = asyncio.run(measure(model, n or None, args.tokens, args.rounds, args.dtype))
            print(f"{r['threads']:>7} {r['load_s']:>7.1f} {r['prompt']:>6} {r['tokens']:>6.0f} {r['ttft_ms']:>8.1f} "
                  f"{r['tok_s']:>7.0f} {r['overhead_ms']:>11.1f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
