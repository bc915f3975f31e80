# The two commands in the README: `make run` (main job on its embedded default) and `make test`.
VENV ?= .venv
BIN := $(VENV)/bin
# the shared data next to the checkout when it is there; else the per-user cache, filled by our downloads
ifneq ($(wildcard ../shared/data),)
export EDIT_FIDELITY_DATA ?= $(abspath ../shared/data)
endif

# the main job's default: a 7B model's recorded CanItEdit run (2 x 105 problems x 20 completions),
# replayed through the language server and the sandbox; --resume makes a second `make run` instant
RECORDED_NAME := qwen2.5-coder-7b-instruct-baseline-canitedit-20260410T235720Z-slot1-548423436.tar.gz
RECORDED_URL := https://raw.githubusercontent.com/Aaditya-Bhatia/CanItEdit/30d5161f1c3ce5e3fd141fb1a3da006ad5ae125e/backups/$(RECORDED_NAME)\#sha256=54c0655ea9c43c6e2ed263b617bb701065626456355daeceb9f91e861c5effee
RECORDED ?= $(if $(wildcard $(EDIT_FIDELITY_DATA)/canitedit_runs/$(RECORDED_NAME)),$(EDIT_FIDELITY_DATA)/canitedit_runs/$(RECORDED_NAME),$(RECORDED_URL))
RUN_DIR ?= runs/canitedit-qwen2.5-coder-7b

.PHONY: setup run test lint bench example
setup:
	@scripts/setup

run: setup
	$(BIN)/edit-fidelity bench run --suite canitedit --backend recorded:$(RECORDED) --out $(RUN_DIR) --resume
	$(BIN)/edit-fidelity bench report $(RUN_DIR) --html $(RUN_DIR)/report.html

example: setup
	$(BIN)/edit-fidelity check --example

# ruff (lint and format) and mypy, configured in pyproject.toml; `make test` runs them first
lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: setup lint
	@scripts/ci-docker-background
	$(BIN)/python -m pytest -q -n 2 --dist loadfile
	@scripts/ci-docker
	@if [ -x scripts/test-vscode ]; then scripts/test-vscode; fi
	@scripts/test-vscode-real-gate

bench: setup
	$(BIN)/python -m tools.bench.bench_fidelity
	$(BIN)/python -m tools.bench.bench_lsp
	$(BIN)/python -m tools.bench.bench_local  # the embedded model: llama.cpp and transformers against the memory bandwidth (issue 30)
	$(BIN)/python -m tools.bench.bench_sandbox
	$(BIN)/python -m tools.bench.bench_lang --targets
	$(BIN)/python -m tools.bench.bench_ray
	$(BIN)/python -m benchmark.studies.overedits.real --tests  # real model edits against their human labels, instruction only and with the tests (issue 28)
	$(BIN)/python -m benchmark.studies.overedits.real benchmark/studies/overedits/heldout_labels.jsonl --tests  # the held-out set, labelled blind
	$(BIN)/python -m benchmark.studies.overedits.models --against Clean_Edit_Qwen2.5-Coder-7B  # unrequested changes per model, the ten recorded runs
	$(BIN)/python -m tools.bench.bench_load  # make run's replay and the gold run, idle and beside 6 busy processes
