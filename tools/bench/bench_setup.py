"""The first run on a fresh machine: how long `make run` takes to its first sample, and where it goes.

    .venv/bin/python -m tools.bench.bench_setup [--variants pip,uv] [--before-rev REV] [--load N]
        [--breakdown] [--no-sample] [--keep DIR]

Each variant builds everything from nothing in a temporary folder, as on a fresh machine: a copy of this
checkout (`--before-rev REV`: that revision's tree, `git archive`, for the `pip` variant), a fresh venv
(VENV), fresh pip and uv caches (PIP_CACHE_DIR, UV_CACHE_DIR) and a fresh sandbox home
(EDIT_FIDELITY_SANDBOX_HOME, sandbox uids from 67000 so no slot of the real home is shared), in
/var/lib/edit-fidelity/bench-setup-* as root (beside the real home, not under /tmp, which the sandbox
hides from its programs). It runs
`make run` there (scripts/setup, scripts/setup-sandbox, then the CanItEdit replay) and stops it once the
first sample is in `results.jsonl`. Variants: `pip` (EDIT_FIDELITY_INSTALLER=pip: the commands set-up
ran before uv) and `uv` (the default path). The real .venv and sandbox home are not touched; system
packages are not (apt-get is a no-op where they are installed: its time on a fresh machine is in
/var/log/apt/history.log).

Printed: every line the set-up prints with the second it came at, each variant's steps, the time to the
first sample, then the comparison: seconds per step, CPU seconds, and whether the environments are the
same in content (the same distributions and versions, the same files; .pyc counts; how much of the
sandbox environment shares inodes with the project venv).

`--load N`: N busy-looping processes run while each variant is measured (started and stopped here).
`--breakdown`: before the variants, where the CanItEdit environment's time goes, one part at a time,
for pip and uv: resolution and downloads, the torch wheel alone, unpacking, bytecode compilation.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
UID_BASE = "67000"  # not the real home's 64000..64999: its uids may be running programs right now
RECORDED = "qwen2.5-coder-7b-instruct-baseline-canitedit-20260410T235720Z-slot1-548423436.tar.gz"
NOISE = ("WARNING: Location ",)  # pip's lines for each package missing from a file:// index


def _data_dir() -> Path:
    explicit = os.environ.get("EDIT_FIDELITY_DATA")
    return Path(explicit) if explicit else ROOT.parent / "shared" / "data"


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


@dataclass
class Variant:
    name: str
    root: Path
    lines: list[tuple[float, str]] = field(default_factory=list)
    setup_s: float | None = None
    first_sample_s: float | None = None
    total_s: float | None = None
    cpu_s: float = 0.0
    load: str = ""
    rc: int | None = None

    @property
    def src(self) -> Path:
        return self.root / "src"

    @property
    def venv(self) -> Path:
        return self.root / "venv"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def run_dir(self) -> Path:
        return self.root / "run"

    def env(self) -> dict[str, str]:
        env = {
            **os.environ,
            "VENV": str(self.venv),
            "EDIT_FIDELITY_SANDBOX_HOME": str(self.home),
            "EDIT_FIDELITY_SANDBOX_UID_BASE": UID_BASE,
            "PIP_CACHE_DIR": str(self.root / "pip-cache"),
            "UV_CACHE_DIR": str(self.root / "uv-cache"),
            "EDIT_FIDELITY_DATA": str(_data_dir()),
        }
        env.pop("VIRTUAL_ENV", None)
        if self.name == "pip":
            env["EDIT_FIDELITY_INSTALLER"] = "pip"
        else:
            env.pop("EDIT_FIDELITY_INSTALLER", None)
        return env


def _copy_tree(dest: Path, rev: str | None) -> None:
    """This checkout's files as git sees them (tracked and untracked, not ignored), or REV's tree."""
    dest.mkdir(parents=True)
    if rev:
        archive = subprocess.run(["git", "archive", rev], cwd=ROOT, check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
        return
    listed = subprocess.run(
        ["git", "ls-files", "-z", "-c", "-o", "--exclude-standard"], cwd=ROOT, check=True, capture_output=True
    ).stdout
    for rel in filter(None, listed.decode().split("\0")):
        source = ROOT / rel
        if source.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / rel)


def _hogs(n: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        proc.terminate()
    for proc in procs:
        proc.wait()


def run_variant(v: Variant, *, rev: str | None, sample: bool, load: int) -> None:
    _copy_tree(v.src, rev)
    v.root.chmod(0o755)  # the sandbox uid walks into the home below it
    hogs = _hogs(load)
    try:
        _measure(v, sample=sample)
    finally:
        _stop(hogs)


def _measure(v: Variant, *, sample: bool) -> None:
    cpu0, load0 = _cpu(), _load()
    started = time.monotonic()
    target = ["run", f"VENV={v.venv}", f"RUN_DIR={v.run_dir}"] if sample else ["setup", f"VENV={v.venv}"]
    proc = subprocess.Popen(
        ["make", "-C", str(v.src), *target],
        env=v.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    assert proc.stdout is not None
    stream = proc.stdout

    def read() -> None:
        with open(v.root / "output.log", "w") as log:
            for line in stream:
                at = time.monotonic() - started
                v.lines.append((at, line.rstrip("\n")))
                log.write(f"{at:7.1f} {line}")
                if not line.startswith(NOISE):
                    print(f"  [{v.name} {at:6.1f} s] {line.rstrip()}", flush=True)
                if v.setup_s is None and "/edit-fidelity bench run " in line:
                    v.setup_s = at  # make echoes the replay's command once the set-up is done

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    results = v.run_dir / "results.jsonl"
    while proc.poll() is None:
        if sample and results.exists() and results.stat().st_size > 0:
            v.first_sample_s = time.monotonic() - started
            os.killpg(proc.pid, signal.SIGTERM)  # the rest of the replay is not what is measured
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
            break
        time.sleep(0.2)
    proc.wait()
    reader.join(10)
    v.total_s = time.monotonic() - started
    if not sample:
        v.setup_s = v.total_s
    v.rc = proc.returncode
    v.cpu_s = _cpu() - cpu0
    v.load = f"{load0} -> {_load()}"


_METADATA = (
    "import importlib.metadata as m, json, sys; "
    "print(json.dumps({d.metadata['Name'].lower().replace('_', '-'): d.version for d in m.distributions()}))"
)
# written by the installer about itself, or by the .pyc step: not the packages' content
_META_FILES = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json", "uv_cache.json"}


def _dists(python: Path) -> dict[str, str]:
    done = subprocess.run([str(python), "-I", "-c", _METADATA], capture_output=True, text=True, check=False)
    return json.loads(done.stdout) if done.returncode == 0 else {}


def _site(prefix: Path) -> Path:
    found = sorted(prefix.glob("lib/python3*/site-packages"))
    return found[0] if found else prefix


def _files(site: Path) -> set[str]:
    return {
        str(p.relative_to(site))
        for p in site.rglob("*")
        if p.is_file()
        and p.name not in _META_FILES
        and not p.name.endswith((".pyc", ".pth"))
        and "__editable__" not in p.name
    }


def _pyc(site: Path) -> int:
    return sum(1 for _ in site.rglob("*.pyc"))


def _pyc_sources(site: Path) -> set[str]:
    return {str(p.relative_to(site)) for p in site.rglob("*.pyc")}


def _du(path: Path) -> str:
    done = subprocess.run(["du", "-sh", str(path)], capture_output=True, text=True, check=False)
    return done.stdout.split("\t")[0] if done.returncode == 0 else "?"


def _shared_inodes(a: Path, b: Path) -> tuple[int, int]:
    """Files under `a` that are the same inode as one under `b`, and all files under `a`."""
    inodes = {(st.st_dev, st.st_ino) for p in b.rglob("*") if p.is_file() for st in [p.stat()]}
    files = [p for p in a.rglob("*") if p.is_file()]
    return sum((p.stat().st_dev, p.stat().st_ino) in inodes for p in files), len(files)


def _steps(v: Variant) -> list[tuple[str, str]]:
    """The set-up's own step lines ("setup: x: 12.3 s", "setup-sandbox: suite ...: 4.5 s")."""
    return [(f"{at:6.1f}", text) for at, text in v.lines if text.startswith(("setup:", "setup-sandbox:"))]


def compare(variants: list[Variant]) -> None:
    print("\n== time to first sample (make run from nothing; apt-get had nothing to install) ==")
    print(f"{'variant':8} {'set-up s':>9} {'first sample s':>15} {'CPU s':>7}  exit  load (1/5/15 min) start -> end")
    for v in variants:
        setup = f"{v.setup_s:.1f}" if v.setup_s is not None else "-"
        first = f"{v.first_sample_s:.1f}" if v.first_sample_s is not None else "-"
        print(f"{v.name:8} {setup:>9} {first:>15} {v.cpu_s:7.1f}  {v.rc!s:>4}  {v.load}")
    for v in variants:
        print(f"\n-- {v.name}: steps (second the line came, the line) --")
        for at, text in _steps(v):
            print(f"  {at} {text}")
    if len(variants) < 2:
        return
    a, b = variants[0], variants[1]
    print(f"\n== content: {a.name} vs {b.name} ==")
    pairs = [("project venv", a.venv, b.venv), ("canitedit env", a.home / "envs/canitedit", b.home / "envs/canitedit")]
    for label, pa, pb in pairs:
        da, db = _dists(pa / "bin" / "python"), _dists(pb / "bin" / "python")
        differ = {k: (da.get(k), db.get(k)) for k in sorted(set(da) | set(db)) if da.get(k) != db.get(k)}
        fa, fb = _files(_site(pa)), _files(_site(pb))
        print(
            f"{label}: {len(da)} vs {len(db)} distributions, differing: {differ or 'none'}; "
            f"files (no .pyc, installer records): {len(fa)} vs {len(fb)}, only in {a.name}: {len(fa - fb)}, "
            f"only in {b.name}: {len(fb - fa)}; .pyc {_pyc(_site(pa))} vs {_pyc(_site(pb))}; "
            f"size {_du(pa)} vs {_du(pb)}"
        )
        for only, names in ((a.name, sorted(fa - fb)[:8]), (b.name, sorted(fb - fa)[:8])):
            if names:
                print(f"  only in {only}: {', '.join(names)}")
        ca, cb = _pyc_sources(_site(pa)), _pyc_sources(_site(pb))
        for only, names in ((a.name, sorted(ca - cb)[:8]), (b.name, sorted(cb - ca)[:8])):
            if names:
                print(f"  .pyc only in {only}: {', '.join(names)}")
        for name, dists in ((a.name, da), (b.name, db)):
            cuda = sorted(d for d in dists if d.startswith(("nvidia-", "cuda-", "triton")))
            if cuda:
                print(f"  WARNING: {name}'s {label} has CUDA packages (a GPU build of torch): {', '.join(cuda)}")
    for v in variants:
        env = v.home / "envs/canitedit"
        if env.is_dir() and v.venv.is_dir():
            shared, total = _shared_inodes(env, v.venv)
            print(f"{v.name}: {shared} of the canitedit env's {total} files are the project venv's own inodes")


# -- --breakdown: the CanItEdit environment's parts, one at a time ---------------------------------------


def _timed(label: str, cmd: list[str], env: Mapping[str, str], results: list[tuple[str, float, float]]) -> None:
    cpu0, started = _cpu(), time.monotonic()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    took, cpu = time.monotonic() - started, _cpu() - cpu0
    results.append((label, took, cpu))
    # compileall exits 1 where a module does not compile (as pip, it goes on): not a failure here
    failed = done.returncode != 0 and not (cmd[1:3] == ["-m", "compileall"] and done.returncode == 1)
    status = f"  (exit {done.returncode}: {done.stderr.strip().splitlines()[-1:]})" if failed else ""
    print(f"  {label}: {took:.1f} s wall, {cpu:.1f} s CPU, load {_load()}{status}", flush=True)


def breakdown(tmp: Path, load: int) -> None:
    sys.path.insert(0, str(ROOT))
    from sandbox import config, envs, installer

    reqs = list(envs.CANITEDIT_REQUIREMENTS)
    base = config.base_python()
    uv = shutil.which("uv", path=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    options = installer.pip_options() or {}
    torch_wheels = [
        w for link in options.get("find-links", "").split() for w in sorted(Path(link).glob("torch-2.13.0+cpu-*.whl"))
    ]

    def pip(py: str) -> list[str]:
        return [sys.executable, "-m", "pip", "--python", py, "install", "-q", "--disable-pip-version-check"]

    results: list[tuple[str, float, float]] = []

    def venv(name: str) -> str:
        subprocess.run([base, "-m", "venv", "--without-pip", str(tmp / name)], check=True)
        return str(tmp / name / "bin" / "python")

    def env(cache: str) -> dict[str, str]:
        return {**os.environ, "PIP_CACHE_DIR": str(tmp / cache), "UV_CACHE_DIR": str(tmp / cache)}

    print(f"\n== breakdown: the canitedit environment, part by part ({load} CPU hogs) ==", flush=True)
    hogs = _hogs(load)
    try:
        _timed("venv --without-pip", [base, "-m", "venv", "--without-pip", str(tmp / "v0")], os.environ, results)
        _timed(
            "pip: resolve + download, cold cache (pip download)",
            [sys.executable, "-m", "pip", "download", "-q", "-d", str(tmp / "dl"), *reqs],
            env("pip-a"),
            results,
        )
        if torch_wheels:
            py = venv("v-torch-pip")
            _timed(
                f"pip: the torch wheel alone ({torch_wheels[0].stat().st_size >> 20} MB), no .pyc",
                [*pip(py), "--no-compile", "--no-deps", str(torch_wheels[0])],
                env("pip-t"),
                results,
            )
        py = venv("v-pip-cold")
        _timed("pip: full install, cold cache (what prepare did)", [*pip(py), *reqs], env("pip-b"), results)
        py = venv("v-pip-nocompile")
        _timed(
            "pip: install --no-compile, warm cache",
            [*pip(py), "--no-compile", *reqs],
            env("pip-b"),
            results,
        )
        site = _site(tmp / "v-pip-nocompile")
        _timed("bytecode, serial (as pip compiles)", [py, "-m", "compileall", "-q", str(site)], os.environ, results)
        if uv:
            args = installer.uv_index_args(options)
            uvenv = {**env("uv-a"), **installer.uv_environment(options)}
            py = venv("v-uv-resolve")
            _timed(
                "uv: resolve only (--dry-run), cold cache",
                [uv, "pip", "install", "--dry-run", "--python", py, *args, *reqs],
                uvenv,
                results,
            )
            if torch_wheels:
                py = venv("v-torch-uv")
                _timed(
                    "uv: the torch wheel alone, cold cache, no .pyc",
                    [uv, "pip", "install", "--python", py, *args, "--no-deps", str(torch_wheels[0])],
                    {**env("uv-t"), **installer.uv_environment(options)},
                    results,
                )
            py = venv("v-uv-cold")
            pins = installer.cpu_torch_pins(tuple(reqs), options, "cp311")
            _timed(
                "uv: install, cold cache, no .pyc",
                [uv, "pip", "install", "--python", py, *args, *reqs, *pins],
                uvenv,
                results,
            )
            py = venv("v-uv-warm")
            _timed(
                "uv: install, warm cache, no .pyc",
                [uv, "pip", "install", "--python", py, *args, *reqs, *pins],
                uvenv,
                results,
            )
            site = _site(tmp / "v-uv-warm")
            _timed(
                "bytecode, parallel (compileall -j 0)",
                [py, "-m", "compileall", "-q", "-j", "0", str(site)],
                os.environ,
                results,
            )
    finally:
        _stop(hogs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--variants", default="pip,uv", help="comma-separated: pip, uv (default both, in that order)")
    parser.add_argument(
        "--before-rev", help="the pip variant builds this revision's tree (e.g. HEAD) instead of the working tree"
    )
    parser.add_argument("--load", type=int, default=0, help="busy-looping processes during the measurements")
    parser.add_argument("--breakdown", action="store_true", help="first time the canitedit environment's parts")
    parser.add_argument("--no-sample", action="store_true", help="only the set-up (make setup), not the first sample")
    parser.add_argument("--keep", type=Path, help="build here and keep it (default: a temporary folder, removed)")
    args = parser.parse_args()
    names = [n for n in args.variants.split(",") if n]
    if not set(names) <= {"pip", "uv"}:
        parser.error("--variants: pip and/or uv")
    if not args.no_sample and not (_data_dir() / "canitedit_runs" / RECORDED).exists():
        parser.error(f"the recorded run is not in {_data_dir()}/canitedit_runs (set EDIT_FIDELITY_DATA or --no-sample)")
    if args.keep:
        tmp = args.keep.resolve()
        tmp.mkdir(parents=True, exist_ok=True)
    else:
        tmp = Path(tempfile.mkdtemp(prefix="bench-setup-", dir=_scratch()))
    if tmp.is_relative_to("/tmp") or tmp.is_relative_to("/var/tmp"):
        parser.error(f"{tmp}: the sandbox hides /tmp and /var/tmp from its programs: build elsewhere")
    tmp.chmod(0o755)
    print(f"building in {tmp}; {os.cpu_count()} cores, load {_load()}, {args.load} CPU hogs", flush=True)
    try:
        if args.breakdown:
            breakdown(tmp / "breakdown", args.load)
        variants = []
        for name in names:
            v = Variant(name, tmp / name)
            print(f"\n== {name}: make {'setup' if args.no_sample else 'run'} from nothing ==", flush=True)
            run_variant(v, rev=args.before_rev if name == "pip" else None, sample=not args.no_sample, load=args.load)
            variants.append(v)
        compare(variants)
    finally:
        _unmount_below(tmp)
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


def _scratch() -> Path:
    """Beside the real sandbox home (never in it), not under /tmp: the sandbox hides /tmp and /var/tmp
    (and, at the unshare level, /home, /root, /opt, /work ...) from its programs."""
    parent = Path("/var/lib/edit-fidelity") if os.geteuid() == 0 else Path.home() / ".cache" / "edit-fidelity"
    parent.mkdir(parents=True, exist_ok=True)
    return parent


def _unmount_below(root: Path) -> None:
    """The slots' work tmpfs and network namespaces that the replay's sandbox mounted in its home."""
    mounts = [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()]
    for point in sorted((m for m in mounts if Path(m).is_relative_to(root)), key=len, reverse=True):
        subprocess.run(["umount", "-l", point], check=False, capture_output=True)


if __name__ == "__main__":
    sys.exit(main())
