"""Labels that refer to their texts instead of holding them: the project's own labelled sets
(`heldout_labels.jsonl` beside this module) may not copy the shared data, so an entry names its recorded
run (`archive`, relative to the data directory), the completion file inside it (`member`) and the sample;
the completion, the problem's `before` and gold and the instruction are read from the data directory."""

from __future__ import annotations

import gzip
import tarfile
from functools import cache
from pathlib import Path
from typing import Any

import msgspec

from benchmark.studies.overedits.real_score import LabelsError
from benchmark.suites.canitedit.problems import Problem, load

HELDOUT = Path(__file__).with_name("heldout_labels.jsonl")


class _Completions(msgspec.Struct):
    completions: list[Any]


class References:
    """Fills entries from one data directory, each archive read once."""

    def __init__(self, data: Path) -> None:
        self.data = data
        self._problems: dict[int, Problem] | None = None

    def problem(self, pid: int) -> Problem:
        if self._problems is None:
            self._problems = {p.id: p for p in load(self.data)}
        if pid not in self._problems:
            raise LabelsError(f"CanItEdit has no problem {pid}")
        return self._problems[pid]

    def __call__(self, doc: dict[str, Any]) -> dict[str, Any]:
        try:
            archive, member, sample = str(doc["archive"]), str(doc["member"]), int(doc["sample"])
            pid, kind = int(doc["problem_id"]), str(doc["instruction_kind"])
        except (KeyError, TypeError, ValueError) as exc:
            raise LabelsError(
                f"an entry without texts needs archive, member, sample, problem_id, instruction_kind ({exc})"
            ) from None
        completions = _member(self.data / archive, member)
        if not 0 <= sample < len(completions) or not isinstance(completions[sample], str):
            raise LabelsError(f"{archive} {member} has no completion {sample}")
        problem = self.problem(pid)
        try:
            instruction = problem.instruction(kind)
        except ValueError as exc:
            raise LabelsError(str(exc)) from None
        return {
            **doc,
            "before": problem.before,
            "after": completions[sample],
            "gold": problem.after,
            "instruction": instruction,
        }


@cache
def _member(archive: Path, member: str) -> list[Any]:
    try:
        with tarfile.open(archive, "r:gz") as tar:
            fh = tar.extractfile(member)
            if fh is None:
                raise KeyError(member)
            return msgspec.json.decode(gzip.decompress(fh.read()), type=_Completions).completions
    except (OSError, KeyError, tarfile.TarError, EOFError, msgspec.DecodeError) as exc:
        raise LabelsError(f"{archive}: cannot read {member}: {exc}") from None
