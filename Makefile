# The two commands: `make demo` and `make test`. Each creates .venv and installs on its own.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

.PHONY: demo test test-llm train-homiebot train-navigator lint bench bench-peers clean

# The package and the OCR extra: the demo runs the heuristic agent, which reads text.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[ocr]'
	touch $(STAMP)

# Tests also cover the Ray executor, the embedding judge (torch), OCR, the unrealcv and airsim
# backends (their real clients against local test servers), the MissionBench importer and the
# exports (datasets, and TRL training on them), and the training loop at toy size (TRL, PEFT and
# transformers' server).
$(TEST_STAMP): $(STAMP)
	$(BIN)/pip install -q -e '.[dev,ray,judge,ocr,unreal,airsim,missionbench,export,train]'
	touch $(TEST_STAMP)

demo: $(STAMP)
	$(BIN)/sortie demo --out demo-out

# Two test processes (pytest-xdist), one a core of the 2-core machine this is timed on; not -n
# auto: several tests start processes of their own (worker pools, Ray, the fingerprints' three),
# and a process imports about 1 GB (torch, transformers). TEST_WORKERS=0 runs them in one.
TEST_WORKERS ?= 2

# The HTML report's tests drive Debian's Chromium; installed here when missing, then required.
test: $(TEST_STAMP)
	$(BIN)/ruff check sortie tests bench docs
	$(BIN)/ruff format --check sortie tests bench docs
	$(BIN)/mypy
	$(BIN)/lint-imports
	command -v chromium >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)
	SORTIE_REQUIRE_BROWSER=1 $(BIN)/pytest -n $(TEST_WORKERS)

# About 8 minutes on the shared machine (what each measures, and the figures:
# docs/benchmarks.md). The simulator rows are the ground worlds; the oracle runs twice, the
# second time with its navigation graphs cached.
bench: $(TEST_STAMP)
	$(BIN)/python bench/bench_sim.py --worlds ground
	$(BIN)/python bench/bench_floor.py --worlds ground
	$(BIN)/python bench/bench_navigation.py
	$(BIN)/python bench/bench_records.py
	$(BIN)/python bench/bench_oracle.py --workers 2 --runs 2
	$(BIN)/python bench/bench_household.py --repeats 3 --workers 2

# Opt-in: sortie beside ViZDoom (and MiniWorld) per step at 160×120 and 640×480, RGB + depth +
# semantic, in a venv of its own so that neither becomes a dependency of sortie: sortie from this
# tree, vizdoom (its engine and WADs ship in the wheel) and miniworld (OpenGL through the system's
# Mesa EGL; skipped with a note when there is none). About 3 minutes; PEERS_ARGS passes options,
# e.g. PEERS_ARGS='--worlds apartment --sizes 640x480'.
PEERS := bench/.venv-peers
$(PEERS)/.installed: pyproject.toml setup.py
	$(PYTHON) -m venv $(PEERS)
	$(PEERS)/bin/pip install -q --upgrade pip
	$(PEERS)/bin/pip install -q -e . vizdoom==1.3.2 miniworld==2.1.0
	touch $@

bench-peers: $(PEERS)/.installed
	$(PEERS)/bin/python bench/bench_peers.py $(PEERS_ARGS)

# Opt-in: the model agents against a real local server (llama.cpp, Gemma 3 270M, text mode),
# one episode each, with their per-call latency. Not part of `make test`: the server
# (llama-cpp-python) is compiled from source at install, a CPU-bound C++ build (4 to 9 min on an
# idle 2-core machine; 34 min wall, 625 CPU s, on a loaded one), and the episodes take minutes
# on a CPU (a line as each starts and ends).
test-llm: $(TEST_STAMP)
	@echo "installing sortie[llm]: llama-cpp-python compiles from source, CPU-bound (4-9 min on 2 idle cores, 30+ min on busy ones)"
	$(BIN)/pip install -e '.[llm]'
	SORTIE_REAL_SERVERS=1 $(BIN)/python -m pytest -q tests/models/test_real_servers.py
	$(BIN)/python bench/bench_llm.py

# Opt-in: EMMOE's training loop closed on this machine: the oracle's train-split rounds, Gemma
# 3 270M fine-tuned with LoRA (TRL's SFT, then DPO on the oracle's corrections of the SFT
# model's own lost rounds), served by transformers on loopback, homiebot scored on the
# held-out test split against both and against the untrained base. About 2.5 hours on 2
# cores (docs/training.md); resumes where it stopped. TRAIN_ARGS passes more options, e.g.
# TRAIN_ARGS='--dpo-steps 0' (SFT only) or, on a GPU machine, a larger base and more steps.
train-homiebot: $(STAMP)
	$(BIN)/pip install -q -e '.[train,gemma]'
	$(BIN)/sortie train homiebot --out train-homiebot $(TRAIN_ARGS)

# Opt-in: RescueBench's fine-tuning experiment with the learned rescue navigator: training
# episodes of every level disjoint from the committed suites, the oracle's demos, one model on
# 10 % of them and one on all (behaviour cloning, one DAgger round each), both scored with
# oracle, explorer, explorer-nomem and random on rescue-l1..l5-v2; prints the table. Within
# 90 minutes on 2 cores (time per phase: docs/benchmarks.md); resumes where it stopped.
# TRAIN_ARGS passes more options, e.g. on a GPU machine TRAIN_ARGS='--device cuda --episodes 400'.
train-navigator: $(STAMP)
	$(BIN)/pip install -q -e '.[train]'
	$(BIN)/sortie train navigator --out train-navigator --workers 2 $(TRAIN_ARGS)

clean:
	rm -rf $(VENV) $(PEERS) demo-out .pytest_cache .mypy_cache .ruff_cache
