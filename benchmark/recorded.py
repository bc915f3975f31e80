"""Stored completions to replay: a CanItEdit run archive (tar.gz of MultiPL-E completion and result
files) or a results file of ours (`results.jsonl`, or the run directory holding it)."""

from __future__ import annotations

import gzip
import json
import re
import tarfile
from pathlib import Path

import msgspec

from benchmark.store import RESULTS, read_records

_NAME = re.compile(r"(?:^|/)(?P<full>\d+_[^/]+?)_instruction_(?P<kind>descriptive|lazy)(?P<res>\.results)?\.json\.gz$")


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


class RecordedError(Exception):
    pass


def load(path: str | Path) -> Recorded:
    """A recorded run from a file, a run directory, or an https URL (downloaded once into the data
    directory's `recorded/`)."""
    if isinstance(path, str) and path.startswith(("https://", "http://")):
        path = _download(path)
    p = Path(path)
    if not p.exists():
        raise RecordedError(f"recorded run not found: {p}")
    if p.is_dir() and (p / RESULTS).exists():
        p = p / RESULTS
    if p.name.endswith((".tar.gz", ".tgz")):
        return _load_archive(p)
    if p.suffix == ".jsonl":
        return _load_results(p)
    raise RecordedError(f"{p}: expected a CanItEdit run .tar.gz, a results.jsonl or a run directory")


def _missing(value) -> list[int] | None:
    if isinstance(value, str):
        value = json.loads(value) if value.strip() else None
    return [int(x) for x in value] if value is not None else None


def _load_archive(path: Path) -> Recorded:
    completions: dict[str, list[str]] = {}
    verdicts: dict[str, list[bool]] = {}
    missing: dict[str, list[list[int] | None]] = {}
    with tarfile.open(path, "r:gz") as tar:
        for member in tar:
            m = _NAME.search(member.name)
            if not m or not member.isfile():
                continue
            fh = tar.extractfile(member)
            if fh is None:
                continue
            doc = json.loads(gzip.decompress(fh.read()))
            key = f"{m['full']}/{m['kind']}"
            if m["res"]:
                verdicts[key] = [r.get("status") == "OK" for r in doc["results"]]
                missing[key] = [_missing(r.get("coverage_missing")) for r in doc["results"]]
            else:
                completions[key] = [c if isinstance(c, str) else "" for c in doc["completions"]]
    if not completions:
        raise RecordedError(f"{path}: no CanItEdit completion files (*_instruction_<kind>.json.gz) inside")
    return Recorded(source=str(path), completions=completions, verdicts=verdicts, missing=missing)


def _load_results(path: Path) -> Recorded:
    completions: dict[str, dict[int, str]] = {}
    verdicts: dict[str, dict[int, bool]] = {}
    for r in read_records(path):
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
    from urllib.parse import urlsplit

    from benchmark.datadir import DataError, data_dir
    from benchmark.download import fetch

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
