"""Behaviour unchanged? One digest per result of a fixed set of runs, to compare two checkouts.

    EDIT_FIDELITY_DATA=../shared/data .venv/bin/python tools/bench/bench_identity.py OUT [--only NAME,...]

Runs, into OUT, with the code of the checkout this file lies in (every child gets PYTHONPATH=that checkout;
the first line printed says where `server` and `benchmark` were imported from):

- `bench run` replays that finish in minutes on 2 cores: CanItEdit gold (20 problems) and a recorded run
  (10 problems, 4 samples), the over-editing suite's gold (40 tasks, every task in the `base` environment),
  BICS gold, can-ai-code gold, CodeEditorBench gold and identity (polish, scored on run time, left out);
  digests of `summary.json` as written, and of `results.jsonl` with what moves with the machine's load or
  the order samples finish in left out (times, executions, measured memory, which of two identical
  programs ran), records sorted by key;
- `edit-fidelity check --format json` on the example, five over-editing pairs, a JavaScript pair and a git
  work tree with a rename: the digest of its output with every object key folded (underscores dropped,
  lower case), so two key cases compare equal; and with `--json-keys snake`, where the checkout has it, the
  raw bytes (the digest the older checkout's plain output has);
- the wire: `editFidelity.requestEdit` (over-editing pairs, answered by a scripted endpoint, with and without
  a gold) and `editFidelity.checkChange` as a language client receives them (ids, URIs, latencies dropped);
- `python -m benchmark.studies.overedits.real --format json` on the real-edit labels and the held-out set, and
  `python -m benchmark.studies.overedits.models --format json` on the two recorded runs of DATA/canitedit_runs.

The last lines are `digest NAME SHA256` sorted by name: run it in both checkouts and diff those lines.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if __name__ == "__main__" and str(ROOT) not in sys.path[:1]:
    sys.path.insert(0, str(ROOT))

DATA = Path(os.environ.get("EDIT_FIDELITY_DATA", ROOT.parent / "shared" / "data"))
# what moves with the machine's load or the order samples finish in, not with the code
VOLATILE = {"server_ms", "sandbox_ms", "scoring_ms", "executions", "reused_verdict"}
VOLATILE_METRICS = {"cpu_s", "memory_mb", "time_margin", "opt_score", "t_cpu_s", "T_cpu_s", "t_sd", "T_sd"}
VOLATILE_METRICS |= {"m_mb", "M_mb", "m_sd", "M_sd"}  # CodeEditorBench's measured time and memory
WIRE_VOLATILE = {"id", "uri", "latencyMs", "proposalId"}
CEB = ["--suite", "codeeditorbench", "--conditions", "debug,switch,translate", "--limit", "2"]
RECORDED = "qwen2.5-coder-7b-instruct-baseline-canitedit-20260410T235720Z-slot1-548423436.tar.gz"


def runs() -> dict[str, list[str]]:
    return {
        "canitedit-gold": ["--suite", "canitedit", "--backend", "gold", "--limit", "20"],
        "canitedit-recorded": [
            "--suite",
            "canitedit",
            "--backend",
            f"recorded:{DATA / 'canitedit_runs' / RECORDED}",
            "--limit",
            "10",
            "--samples",
            "4",
        ],
        "overedit-gold": ["--suite", "overedit", "--backend", "gold", "--limit", "40"],
        "bics-gold": ["--suite", "bics", "--backend", "gold", "--conditions", "dataset,inserted", "--limit", "5"],
        "canaicode-gold": ["--suite", "canaicode", "--backend", "gold", "--limit", "4"],
        # polish is scored on measured run time: left out
        "codeeditorbench-gold": [*CEB, "--backend", "gold"],
        "codeeditorbench-identity": [*CEB, "--backend", "identity"],
    }


def env() -> dict[str, str]:
    out = {**os.environ, "PYTHONPATH": str(ROOT), "EDIT_FIDELITY_DATA": str(DATA)}
    out["EDIT_FIDELITY_OVEREDIT_ENV"] = "base"  # stdlib-only environment, as CI runs the suite
    out.pop("EDIT_FIDELITY_CODEEDITORBENCH_SET", None)
    return out


def sh(args: list[str], *, cwd: Path = ROOT, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    done = subprocess.run(args, cwd=cwd, env=env(), capture_output=True, check=False)
    if check and done.returncode != 0:
        raise SystemExit(f"failed ({done.returncode}): {' '.join(args)}\n{done.stderr.decode()[-3000:]}")
    return done


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def folded(value: Any) -> Any:
    """Every object key without underscores, lower case: snake_case and camelCase keys compare equal."""
    if isinstance(value, dict):
        return {k.replace("_", "").lower(): folded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [folded(v) for v in value]
    return value


def canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, ensure_ascii=False).encode()


# ---- bench run ---------------------------------------------------------------------------------


def bench_runs(out: Path, only: set[str] | None) -> dict[str, str]:
    found: dict[str, str] = {}
    for name, argv in runs().items():
        if only and name not in only:
            continue
        run_dir = out / name
        if not (run_dir / "summary.json").is_file():
            cmd = [sys.executable, "-m", "benchmark.cli", "bench", "run", *argv, "--out", str(run_dir)]
            sh([*cmd, "--quiet", "--workers", "2", *(["--resume"] if run_dir.exists() else [])])
        found[f"{name}/summary.json"] = digest((run_dir / "summary.json").read_bytes())
        records = []
        for line in (run_dir / "results.jsonl").read_text().splitlines():
            rec = {k: v for k, v in json.loads(line).items() if k not in VOLATILE}
            rec["metrics"] = {k: v for k, v in rec.get("metrics", {}).items() if k not in VOLATILE_METRICS}
            records.append(rec)
        records.sort(key=lambda r: (r["task_id"], r["condition"], r["backend"], r["sample"]))
        (run_dir / "records.canonical.json").write_bytes(canonical(records))
        found[f"{name}/records"] = digest(canonical(records))
    return found


# ---- check --format json -----------------------------------------------------------------------


def check_inputs(work: Path) -> list[list[str]]:
    rows = [json.loads(line) for line in (DATA / "overedit" / "corrupted_solutions_manual_easy_400.jsonl").open()][:5]
    cases: list[list[str]] = [["--example"]]
    for i, row in enumerate(rows):
        a, b = work / f"pair{i}_before.py", work / f"pair{i}_after.py"
        a.write_text(row["corrupted_solution"])
        b.write_text(row["canonical_solution"])
        cases.append([str(a), str(b)] + (["--gold", str(b)] if i % 2 else ["--target", "1:4"]))
    js_a, js_b = work / "sum.js", work / "sum_edited.js"
    js_a.write_text("function sum(xs) {\n  let s = 0;\n  for (const x of xs) s += x;\n  return s;\n}\n")
    js_b.write_text(
        "// sums\nfunction total(values) {\n  let s = 0;\n  for (const v of values) { s += v; }\n  return s;\n}\n"
    )
    cases.append([str(js_a), str(js_b)])
    repo = work / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    (repo / "a.py").write_text(rows[0]["corrupted_solution"])
    (repo / "b.py").write_text(rows[1]["corrupted_solution"])
    sh([*git, "init", "-q"], cwd=repo)
    sh([*git, "add", "."], cwd=repo)
    sh([*git, "commit", "-q", "-m", "x"], cwd=repo)
    (repo / "a.py").write_text(rows[0]["canonical_solution"])
    (repo / "b.py").rename(repo / "c.py")
    cases.append(["--git", "HEAD", "--cwd", str(repo)])
    return cases


def checks(out: Path) -> dict[str, str]:
    work = out / "check"
    if work.exists():
        subprocess.run(["rm", "-rf", str(work)], check=True)
    work.mkdir(parents=True)
    snake = b"--json-keys" in sh([sys.executable, "-m", "server.cli", "check", "--help"]).stdout
    found: dict[str, str] = {}
    for i, case in enumerate(check_inputs(work)):
        cwd = ROOT
        if "--cwd" in case:
            cwd = Path(case[case.index("--cwd") + 1])
            case = case[: case.index("--cwd")]
        cmd = [sys.executable, "-m", "server.cli", "check", *case, "--format", "json"]
        plain = sh(cmd, cwd=cwd).stdout
        (work / f"case{i}.json").write_bytes(plain)
        found[f"check/{i}/folded"] = digest(canonical(folded(json.loads(plain))))
        raw = sh([*cmd, "--json-keys", "snake"], cwd=cwd).stdout if snake else plain
        found[f"check/{i}/snake-bytes"] = digest(raw)
    return found


# ---- the wire ----------------------------------------------------------------------------------


def _stripped(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _stripped(v) for k, v in value.items() if k not in WIRE_VOLATILE}
    if isinstance(value, list):
        return [_stripped(v) for v in value]
    return value


async def _wire(out: Path) -> dict[str, str]:
    from benchmark.run.answer_sources import Replay
    from benchmark.run.session import ServerSession

    rows = [json.loads(line) for line in (DATA / "overedit" / "corrupted_solutions_manual_easy_400.jsonl").open()][:8]
    instruction = "Fix the bug in this function."
    found: dict[str, str] = {}
    replay = Replay(kind="recorded")
    with replay.serving(1, 1, "generic") as backends:
        async with ServerSession(backends) as session:
            for i, row in enumerate(rows):
                before, after = row["corrupted_solution"], row["canonical_solution"]
                replay.book.put(replay.slot(0), before, instruction, after)
                uri = session.open(before, name=f"w{i}")
                args = {"uri": uri, "version": 1, "instruction": instruction, "backends": [replay.slot(0)]}
                if i % 2:
                    args["gold"] = after
                reply = await session.execute("editFidelity.requestEdit", args)
                check = await session.execute(
                    "editFidelity.checkChange", {"uri": uri, "baseline": {"text": after}, "version": 1}
                )
                session.close(uri)
                for what, value in (("requestEdit", reply), ("checkChange", check)):
                    data = canonical(_stripped(value))
                    (out / f"wire-{what}-{i}.json").write_bytes(data)
                    found[f"wire/{what}/{i}"] = digest(data)
    return found


def wire(out: Path) -> dict[str, str]:
    done = sh([sys.executable, "-m", "tools.bench.bench_identity", str(out), "--wire-here"])
    return json.loads(done.stdout.decode().strip().splitlines()[-1])


# ---- real edits ---------------------------------------------------------------------------------


def real(out: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for name, labels in (
        ("labels", DATA / "real_edits" / "labels.jsonl"),
        # relative: the report names it (benchmark/overedits/ before issue 29 step 2: only that path differs)
        ("heldout", Path("benchmark") / "studies" / "overedits" / "heldout_labels.jsonl"),
    ):
        got = sh([sys.executable, "-m", "benchmark.studies.overedits.real", str(labels), "--format", "json"]).stdout
        (out / f"real-{name}.json").write_bytes(got)
        found[f"real/{name}"] = digest(got)
    archives = sorted(str(p) for p in (DATA / "canitedit_runs").glob("*.tar.gz"))
    got = sh(
        [sys.executable, "-m", "benchmark.studies.overedits.models", *archives, "--format", "json", "--quiet"]
    ).stdout
    (out / "models.json").write_bytes(got)
    found["real/models"] = digest(got)
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--only", help="comma-separated parts: runs, check, wire, real, or a run's name")
    ap.add_argument("--wire-here", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.wire_here:
        print(json.dumps(asyncio.run(_wire(args.out))))
        return 0
    where = sh([sys.executable, "-c", "import server, benchmark; print(server.__file__, benchmark.__file__)"])
    print("imports:", where.stdout.decode().strip())
    if any(not p.startswith(str(ROOT)) for p in where.stdout.decode().split()):
        raise SystemExit(f"the children do not import this checkout ({ROOT})")
    only = set(args.only.split(",")) if args.only else None
    found: dict[str, str] = {}
    run_names = None if not only or "runs" in only else only & set(runs())
    if not only or "runs" in only or run_names:
        found |= bench_runs(args.out, run_names)
    for part, fn in (("check", checks), ("wire", wire), ("real", real)):
        if not only or part in only:
            found |= fn(args.out)
    for name in sorted(found):
        print(f"digest {name} {found[name]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
