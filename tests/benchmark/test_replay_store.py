"""The append-only results store: torn tails, duplicates, resume rules, no secrets in the config."""

import msgspec
import pytest

from benchmark.run.records import RunConfig, SampleRecord
from benchmark.run.store import CONFIG, RESULTS, ResultsStore, RunDirError, read_records


def cfg(**kw) -> RunConfig:
    base = {"suite": "canitedit", "backend": "gold", "samples": 2, "limit": 3, "conditions": ["descriptive", "lazy"]}
    base.update(kw)
    return RunConfig(**base)


def rec(task="1_a", cond="lazy", sample=0, outcome="pass") -> SampleRecord:
    return SampleRecord(
        suite="canitedit",
        task_id=task,
        task="a",
        condition=cond,
        backend="gold",
        sample=sample,
        outcome=outcome,
        completion="x = 1\n",
    )


def test_append_and_reload(tmp_path):
    with ResultsStore(tmp_path / "run", cfg(), resume=False) as store:
        store.append(rec(sample=0))
        store.append(rec(sample=1, outcome="fail"))
        store.append(rec(sample=1, outcome="pass"))  # same key: ignored
    records = read_records(tmp_path / "run" / RESULTS)
    assert [(r.sample, r.outcome) for r in records] == [(0, "pass"), (1, "fail")]
    assert msgspec.json.decode((tmp_path / "run" / CONFIG).read_bytes(), type=RunConfig).backend == "gold"


def test_existing_run_needs_resume_and_the_same_config(tmp_path):
    ResultsStore(tmp_path, cfg(), resume=False).close()
    with pytest.raises(RunDirError, match="--resume"):
        ResultsStore(tmp_path, cfg(), resume=False)
    with pytest.raises(RunDirError, match="different run"):
        ResultsStore(tmp_path, cfg(samples=5), resume=True)
    ResultsStore(tmp_path, cfg(), resume=True).close()


def test_torn_last_line_is_dropped_on_resume(tmp_path):
    with ResultsStore(tmp_path, cfg(), resume=False) as store:
        store.append(rec(sample=0))
    path = tmp_path / RESULTS
    whole = msgspec.json.encode(rec(sample=1)) + b"\n"
    with open(path, "ab") as fh:  # what kill -9 in the middle of a write would leave
        fh.write(whole[: len(whole) // 2])
    assert [r.sample for r in read_records(path)] == [0]
    with ResultsStore(tmp_path, cfg(), resume=True) as store:
        assert store.done == {("1_a", "lazy", "gold", 0)}
        store.append(rec(sample=1))
    assert [r.sample for r in read_records(path)] == [0, 1]
    assert path.read_bytes().count(b"\n") == 2


def test_duplicate_lines_in_the_file_count_once(tmp_path):
    path = tmp_path / RESULTS
    line = msgspec.json.encode(rec()) + b"\n"
    path.write_bytes(line + line)
    assert len(read_records(path)) == 1


def test_a_corrupt_complete_line_is_an_error(tmp_path):
    path = tmp_path / RESULTS
    path.write_bytes(b'{"not": "a record"}\n')
    with pytest.raises(RunDirError, match="not a result record"):
        read_records(path)


def test_resume_runs_failed_samples_again_and_the_retry_supersedes_them(tmp_path):
    with ResultsStore(tmp_path, cfg(), resume=False) as store:
        store.append(rec(sample=0, outcome="fail"))
        timeout = rec(sample=1, outcome="backend_error")
        timeout.error_kind = "timeout"
        store.append(timeout)
        missing = rec(task="2_b", outcome="backend_error")
        missing.error_kind = "missing"  # the recorded run has no such sample: retrying cannot help
        store.append(missing)
        store.append(rec(task="3_c", outcome="sandbox_error"))
    with ResultsStore(tmp_path, cfg(), resume=True, retry_errors=False) as kept:
        assert len(kept.done) == 4 and kept.retrying == 0
    with ResultsStore(tmp_path, cfg(), resume=True) as store:
        assert store.done == {("1_a", "lazy", "gold", 0), ("2_b", "lazy", "gold", 0)} and store.retrying == 2
        store.append(rec(sample=1, outcome="pass"))
        store.append(rec(task="3_c", outcome="fail"))
        assert sorted((r.task_id, r.sample, r.outcome) for r in store.records) == [
            ("1_a", 0, "fail"),
            ("1_a", 1, "pass"),
            ("2_b", 0, "backend_error"),
            ("3_c", 0, "fail"),
        ]
    records = read_records(tmp_path / RESULTS)
    assert sorted((r.task_id, r.sample, r.outcome) for r in records) == [
        ("1_a", 0, "fail"),
        ("1_a", 1, "pass"),
        ("2_b", 0, "backend_error"),
        ("3_c", 0, "fail"),
    ]
    with ResultsStore(tmp_path, cfg(), resume=True) as store:
        assert store.retrying == 0
        store.append(rec(sample=1, outcome="fail"))  # a verdict is never superseded
    assert [r.outcome for r in read_records(tmp_path / RESULTS) if r.sample == 1] == ["pass"]
