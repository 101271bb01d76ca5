PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-quick test-nocc lint bench bench-goals docs clean

$(BIN)/python:
	$(PY) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/lagsim derive pendulum
	$(BIN)/lagsim simulate pendulum --t-end 10 --samples 11

# The numeric tests again without a C compiler (symengine's LLVM path), as issue 8 asks of CI;
# `make test-nocc` runs the whole suite that way.
NOCC_TESTS := tests/test_compile.py tests/test_integrate.py tests/test_systems_simulate.py \
	tests/test_start.py

# One worker per core (pytest-xdist), a test file to a worker: the suite's files are independent
# (the workers share their session's cache folder), and on this 2-core machine the whole suite
# takes about half the time of one process. The files go out in tests/conftest.py's order, the
# longest first (--no-loadscope-reorder). `make test PARALLEL=` runs it in one process.
PARALLEL ?= -n auto --dist loadfile --no-loadscope-reorder

# mypy's files and settings are pyproject's [tool.mypy] (lagsim/).
test: $(STAMP)
	$(BIN)/ruff check lagsim tests bench
	$(BIN)/python -m mypy
	$(BIN)/python -m pytest -q $(PARALLEL)
	LAGSIM_NO_CC=1 $(BIN)/python -m pytest -q -p no:cacheprovider $(PARALLEL) $(NOCC_TESTS)

# The physics and unit tests only: `--quick` (tests/conftest.py) leaves out the tests marked
# subprocess, signals, cache or slow (pyproject declares them; tests/tiers.py finds the first two).
test-quick: $(STAMP)
	$(BIN)/python -m pytest -q --quick $(PARALLEL)

test-nocc: $(STAMP)
	LAGSIM_NO_CC=1 $(BIN)/python -m pytest -q $(PARALLEL)

lint: $(STAMP)
	$(BIN)/ruff check lagsim tests bench
	$(BIN)/python -m mypy

# Every bench in one go (bench/all.py); `make bench ARGS=--quick` for a smoke run,
# `ARGS=--only modes,stiff` for some of them.
bench: $(STAMP)
	$(BIN)/python bench/all.py $(ARGS)

# Issue 31's goals: their benches one after another, judged, the table written into
# bench/RESULTS.md and bench/README.md (bench/goals.py); `make bench-goals ARGS=--quick` for a
# smoke run that writes nothing, `ARGS=--only=peers` for some of them.
bench-goals: $(STAMP)
	$(BIN)/python bench/goals.py $(ARGS)

# The command outputs shown in README.md and docs/tour.md (tests/test_docs_outputs.py fails when
# one is stale; `python docs/make_docs.py --outputs` makes them alone), then the pictures.
docs: $(STAMP)
	$(BIN)/python docs/make_docs.py

.PHONY: chains
chains: $(STAMP)
	mkdir -p build/chains
	for n in 2 4 8 16 32; do \
		$(BIN)/python -m lagsim.cli.chains $$n -o build/chains/chain_$$n.yaml || exit 1; \
		$(BIN)/python -m lagsim.cli.chains $$n --natural \
			-o build/chains/chain_$${n}_natural.yaml || exit 1; \
	done

clean:
	rm -rf $(VENV) build *.egg-info
