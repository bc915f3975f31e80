"""Stored completions to replay: a CanItEdit run archive (tar.gz of MultiPL-E completion and result
files) or a results file of ours (`results.jsonl`, or the run directory holding it)."""

from __future__ import annotations

import gzip
import json
import re
import tarfile
import zlib
from pathlib import Path
from typing import Any

import msgspec

from benchmark.datadir import DataError
from benchmark.store import RESULTS, RunDirError, read_records

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


class RecordedError(DataError):
    """A recorded run that cannot be used: one line naming the file (and member or line) and the fault."""


class _Completions(msgspec.Struct):
    """A MultiPL-E completion file: one entry per sample (not a string: an empty completion)."""

    completions: list[Any]


class _Result(msgspec.Struct):
    status: str | None = None
    coverage_missing: Any = None


class _Results(msgspec.Struct):
    results: list[_Result]


# what a damaged archive raises: cut short (EOFError), not gzip or not tar (ReadError, BadGzipFile),
# a corrupt stream (zlib.error), a member that is not the JSON we expect
_DAMAGED = (tarfile.TarError, EOFError, OSError, zlib.error, msgspec.DecodeError, ValueError, TypeError)


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
    where = ""
    try:
        with tarfile.open(path, "r:gz") as tar:
            for member in tar:
                m = _NAME.search(member.name)
                if not m or not member.isfile():
                    continue
                fh = tar.extractfile(member)
                if fh is None:
                    continue
                where = f" (member {member.name})"
                raw = gzip.decompress(fh.read())
                key = f"{m['full']}/{m['kind']}"
                if m["res"]:
                    results = msgspec.json.decode(raw, type=_Results).results
                    verdicts[key] = [r.status == "OK" for r in results]
                    missing[key] = [_missing(r.coverage_missing) for r in results]
                else:
                    doc = msgspec.json.decode(raw, type=_Completions)
                    completions[key] = [c if isinstance(c, str) else "" for c in doc.completions]
                where = ""
    except _DAMAGED as exc:
        if isinstance(exc, (EOFError, tarfile.TarError)):
            where = ""  # the archive itself is damaged, not the member being read
        raise RecordedError(f"{path}{where}: not a readable CanItEdit run archive ({_why(exc)}); "
                            "download it again or pass another recorded:PATH") from None
    if not completions:
        raise RecordedError(f"{path}: no CanItEdit completion files (*_instruction_<kind>.json.gz) inside")
    return Recorded(source=str(path), completions=completions, verdicts=verdicts, missing=missing)


def _why(exc: BaseException) -> str:
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
        raise RecordedError(f"{path}: cannot read: {_why(exc)}") from None
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
    from urllib.parse import urlsplit

    from benchmark.datadir import data_dir
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
