"""A record's typed scores (`SampleRecord.scores`, one Struct per scorer that has its own) are stored flat,
their fields as the record's own keys, as results.jsonl has always had them: a run written before the
scores were typed reads back the same, and a record is written byte for byte as before."""

from __future__ import annotations

import json

import msgspec

from benchmark.run.records import ExcessCode, RecordDecoder, SampleRecord, encode_record

# a CanItEdit record as results.jsonl held it before the scores were typed (the keys in their order)
STORED = (
    b'{"suite":"canitedit","task_id":"1_cipher","task":"cipher","condition":"lazy","backend":"gold","sample":0,'
    b'"outcome":"pass","completion":"x = 1\\n","error":null,"error_kind":null,"exec_status":"ok","exit_code":0,'
    b'"stderr_tail":"","reused_verdict":false,"missing_lines":[3],"missing_statements":[],"differ_lines":4,'
    b'"excess_code":0.25,"excess_code_strict":0.0,"distance":null,"distance_tokens":null,"excess_lev":null,'
    b'"added_cc":null,"cc_delta":null,"hunks":0,"flagged_hunks":0,"flagged_warning":null,"flagged_hint":null,'
    b'"flagged_warning_kinds":null,"identical":false,"units":null,"recorded_pass":null,"recorded_missing":null,'
    b'"metrics":{},"votes":null,"server_ms":0.0,"sandbox_ms":0.0,"scoring_ms":0.0,"executions":null}'
)


def test_scores_read_back_typed_and_are_written_as_before() -> None:
    rec = RecordDecoder().decode(STORED)
    assert rec.scores == ExcessCode(
        missing_lines=[3], missing_statements=[], differ_lines=4, excess_code=0.25, excess_code_strict=0.0
    )
    assert encode_record(rec) == STORED  # byte for byte


def test_a_record_without_scores_has_their_keys_null() -> None:
    rec = SampleRecord(suite="bics", task_id="t", task="t", condition="c", backend="b", sample=0, outcome="fail")
    stored = json.loads(encode_record(rec))
    assert [k for k in stored if k in ExcessCode.__struct_fields__] == list(ExcessCode.__struct_fields__)
    assert all(stored[k] is None for k in ExcessCode.__struct_fields__) and "scores" not in stored
    assert RecordDecoder().decode(encode_record(rec)).scores is None
    # the nested form (a record encoded as the Struct it is) reads back too
    rec.scores = ExcessCode(excess_code=0.5)
    assert RecordDecoder().decode(msgspec.json.encode(rec)).scores == ExcessCode(excess_code=0.5)
