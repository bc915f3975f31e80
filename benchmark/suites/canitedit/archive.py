"""A recorded CanItEdit run: the MultiPL-E archive (tar.gz of `*_instruction_<kind>.json.gz` completion
files and `.results.json.gz` result files), with the recorded verdicts and coverage's missing lines."""

from __future__ import annotations

import gzip
import json
import re
import tarfile
import zlib
from pathlib import Path
from typing import Any

import msgspec

from benchmark.run.recorded import Recorded, RecordedError, why

_NAME = re.compile(r"(?:^|/)(?P<full>\d+_[^/]+?)_instruction_(?P<kind>descriptive|lazy)(?P<res>\.results)?\.json\.gz$")


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


def _missing(value: str | list[int] | None) -> list[int] | None:
    if isinstance(value, str):
        value = json.loads(value) if value.strip() else None
    return [int(x) for x in value] if value is not None else None


def load_archive(path: Path) -> Recorded:
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
        raise RecordedError(
            f"{path}{where}: not a readable CanItEdit run archive ({why(exc)}); "
            "download it again or pass another recorded:PATH"
        ) from None
    if not completions:
        raise RecordedError(f"{path}: no CanItEdit completion files (*_instruction_<kind>.json.gz) inside")
    return Recorded(source=str(path), completions=completions, verdicts=verdicts, missing=missing)
