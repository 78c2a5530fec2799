# The two commands: `make demo` and `make test`. Each creates .venv and installs on its own.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev,ray]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/sortie demo --out demo-out

# The HTML report's tests drive Debian's Chromium; installed here when missing, then required.
test: $(STAMP)
	$(BIN)/ruff check sortie tests bench
	$(BIN)/mypy
	command -v chromium >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)
	SORTIE_REQUIRE_BROWSER=1 $(BIN)/pytest

bench: $(STAMP)
	$(BIN)/python bench/bench_sim.py

clean:
	rm -rf $(VENV) demo-out .pytest_cache .mypy_cache .ruff_cache
