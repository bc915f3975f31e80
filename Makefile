# The two commands in the README: `make run` (main job on its embedded default) and `make test`.
VENV ?= .venv
BIN := $(VENV)/bin
export EDIT_FIDELITY_DATA ?= $(abspath ../shared/data)

.PHONY: setup run test bench
setup:
	@scripts/setup

run: setup
	$(BIN)/edit-fidelity check --example

test: setup
	$(BIN)/python -m pytest -q
	@if [ -x scripts/test-vscode ]; then scripts/test-vscode; fi

bench: setup
	$(BIN)/python -m benchmark.bench_fidelity
	$(BIN)/python -m server.bench_lsp
	$(BIN)/python -m benchmark.bench_sandbox
