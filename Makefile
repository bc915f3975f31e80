# The two commands in the README: `make run` (main job on its embedded default) and `make test`.
VENV ?= .venv
BIN := $(VENV)/bin
export EDIT_FIDELITY_DATA ?= $(abspath ../shared/data)

# the main job's default: a 7B model's recorded CanItEdit run (2 x 105 problems x 20 completions),
# replayed through the language server and the sandbox; --resume makes a second `make run` instant
RECORDED ?= $(EDIT_FIDELITY_DATA)/canitedit_runs/qwen2.5-coder-7b-instruct-baseline-canitedit-20260410T235720Z-slot1-548423436.tar.gz
RUN_DIR ?= runs/canitedit-qwen2.5-coder-7b

.PHONY: setup run test bench example
setup:
	@scripts/setup

run: setup
	$(BIN)/edit-fidelity bench run --suite canitedit --backend recorded:$(RECORDED) --out $(RUN_DIR) --resume
	$(BIN)/edit-fidelity bench report $(RUN_DIR) --html $(RUN_DIR)/report.html

example: setup
	$(BIN)/edit-fidelity check --example

test: setup
	$(BIN)/python -m pytest -q
	@if [ -x scripts/test-vscode ]; then scripts/test-vscode; fi

bench: setup
	$(BIN)/python -m benchmark.bench_fidelity
	$(BIN)/python -m server.bench_lsp
	$(BIN)/python -m benchmark.bench_sandbox
