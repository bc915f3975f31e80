"""Stored completions to replay: a results file of ours (`results.jsonl`, or the run directory holding it),
from a path or an https URL. A suite with a format of its own reads it in its `Suite.load_recorded` hook and
leaves the rest to `load` (CanItEdit's run archives, tar.gz of MultiPL-E files:
`benchmark.suites.canitedit.archive`)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import msgspec

from benchmark.datadir import DataError, data_dir
from benchmark.download import fetch
from benchmark.run.store import RESULTS, RunDirError, read_records


class Recorded(msgspec.Struct, frozen=True):
    """Completions per (task_id, condition), in sample order, with the recorded verdicts when known."""

    source: str
    completions: dict[str, list[str]]  # key: f"{task_id}/{condition}"
    verdicts: dict[str, list[bool]] = {}
    missing: dict[str, list[list[int] | None]] = {}

    def get(self, task_id: str, condition: str) -> list[str]:
        return self.completions.get(f"{task_id}/{condition}", [])

    def verdict(self, task_id: str, condition: str, sample: int) -> bool | None:
        v = self.verdicts.get(f"{task_id}/{condition}")
        return v[sample] if v is not None and sample < len(v) else None

    def recorded_missing(self, task_id: str, condition: str, sample: int) -> list[int] | None:
        m = self.missing.get(f"{task_id}/{condition}")
        return m[sample] if m is not None and sample < len(m) else None

    @property
    def samples(self) -> int:
        return max((len(v) for v in self.completions.values()), default=0)


class RecordedError(DataError):
    """A recorded run that cannot be used: one line naming the file (and member or line) and the fault."""


ARCHIVES = (".tar.gz", ".tgz")  # a run archive: CanItEdit's format, read by that suite's hook


def locate(path: str | Path) -> Path:
    """The file `recorded:PATH` names: an https URL downloaded once into the data directory's `recorded/`,
    a run directory's `results.jsonl`; RecordedError when there is none."""
    if isinstance(path, str) and path.startswith(("https://", "http://")):
        path = _download(path)
    p = Path(path)
    if not p.exists():
        raise RecordedError(f"recorded run not found: {p}")
    if p.is_dir() and (p / RESULTS).exists():
        p = p / RESULTS
    return p


def load(path: str | Path) -> Recorded:
    """A recorded run of ours from a results file, a run directory, or an https URL (`locate`)."""
    p = locate(path)
    if p.suffix == ".jsonl":
        return _load_results(p)
    if p.name.endswith(ARCHIVES):
        raise RecordedError(
            f"{p}: a run archive is CanItEdit's format: replay it with --suite canitedit, or pass a results.jsonl "
            "or a run directory"
        )
    raise RecordedError(f"{p}: expected a CanItEdit run .tar.gz, a results.jsonl or a run directory")


def why(exc: BaseException) -> str:
    if isinstance(exc, EOFError):
        return "the file is cut short"
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:300]


def _load_results(path: Path) -> Recorded:
    completions: dict[str, dict[int, str]] = {}
    verdicts: dict[str, dict[int, bool]] = {}
    try:
        records = read_records(path)
    except RunDirError as exc:
        raise RecordedError(f"{exc}; pass the results.jsonl of a `bench run` as recorded:PATH") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordedError(f"{path}: cannot read: {why(exc)}") from None
    for r in records:
        if r.completion is None:
            continue
        key = f"{r.task_id}/{r.condition}"
        completions.setdefault(key, {})[r.sample] = r.completion
        verdicts.setdefault(key, {})[r.sample] = r.passed
    if not completions:
        raise RecordedError(f"{path}: no records with a completion")
    return Recorded(
        source=str(path),
        completions={k: [v[i] for i in sorted(v)] for k, v in completions.items()},
        verdicts={k: [v[i] for i in sorted(v)] for k, v in verdicts.items()},
    )


def _download(url: str) -> Path:
    """`URL[#sha256=HEX]`: fetched once into DATA/recorded/, checked against the hash when given."""
    url, _, fragment = url.partition("#")
    sha256 = fragment.removeprefix("sha256=") if fragment.startswith("sha256=") else None
    name = Path(urlsplit(url).path).name
    if not name.endswith((".tar.gz", ".tgz", ".jsonl")):
        raise RecordedError(f"{url}: expected a URL of a CanItEdit run .tar.gz or a results.jsonl")
    dest = data_dir() / "recorded" / name
    if not dest.exists():
        try:
            fetch(url, dest, sha256=sha256, what=f"recorded run {name}", timeout_s=300.0)
        except DataError as exc:
            raise RecordedError(str(exc)) from None
    return dest
