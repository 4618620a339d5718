# toolcall-harness: `make demo` runs the example suite, `make test` runs the checks.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-dev

BENCH_VENV  ?= .venv-bench
BENCH_PY    := $(BENCH_VENV)/bin/python
BENCH_STAMP := $(BENCH_VENV)/.installed-bench

.PHONY: venv demo test lint typecheck unit bench clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

demo: $(STAMP)
	mkdir -p reports
	$(VENV)/bin/harness run scenarios/ --junit-xml reports/junit.xml --json reports/results.json

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: $(STAMP)
	$(VENV)/bin/mypy harness tracing

unit: $(STAMP)
	$(PY) -m pytest -q

test: lint typecheck unit

$(BENCH_STAMP): pyproject.toml
	test -x $(BENCH_PY) || $(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_PY) -m pip install --quiet --upgrade pip
	$(BENCH_PY) -m pip install --quiet -e ".[bench]"
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(BENCH_PY) benchmarks/bench_metrics.py

clean:
	rm -rf $(VENV) $(BENCH_VENV) reports .pytest_cache .mypy_cache .ruff_cache .hypothesis
