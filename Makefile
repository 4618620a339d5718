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
	$(PY) -m pip install --quiet -e . --group dev
	touch $(STAMP)

demo: $(STAMP)
	mkdir -p reports
	$(VENV)/bin/harness run scenarios/ --junit-xml reports/junit.xml --json reports/results.json

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: $(STAMP)
	$(VENV)/bin/mypy harness tracing

unit: $(STAMP) browser-deps
	$(PY) -m pytest -q

test: lint typecheck unit

$(BENCH_STAMP): pyproject.toml
	test -x $(BENCH_PY) || $(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_PY) -m pip install --quiet --upgrade pip
	$(BENCH_PY) -m pip install --quiet -e . --group bench
	touch $(BENCH_STAMP)

# Every benchmark runs even if one fails; `make bench` then exits non-zero.
# bench_metrics needs Ragas, so it runs in .venv-bench; the others run in the main .venv.
# Extra options go to every benchmark, e.g. `make bench BENCH_ARGS=--quick`.
BENCH_ARGS ?=
BENCH_MAIN := bench_matching bench_capture bench_runner

bench: $(BENCH_STAMP) $(STAMP)
	@status=0; \
	echo "== benchmarks/bench_metrics.py ($(BENCH_VENV))"; \
	RAGAS_DO_NOT_TRACK=true $(BENCH_PY) benchmarks/bench_metrics.py $(BENCH_ARGS) || status=1; \
	for name in $(BENCH_MAIN); do \
		test -f benchmarks/$$name.py || continue; \
		echo "== benchmarks/$$name.py ($(VENV))"; \
		$(PY) benchmarks/$$name.py $(BENCH_ARGS) || status=1; \
	done; \
	exit $$status

# Integration tests need a real Phoenix, kept out of the package in its own cached virtualenv.
PHOENIX_VENV    ?= .cache/phoenix-venv
PHOENIX_VERSION ?= 20.26.1
PHOENIX_STAMP   := $(PHOENIX_VENV)/.installed-$(PHOENIX_VERSION)

.PHONY: test-integration

$(PHOENIX_STAMP):
	test -x $(PHOENIX_VENV)/bin/python || $(PYTHON) -m venv $(PHOENIX_VENV)
	$(PHOENIX_VENV)/bin/python -m pip install --quiet --disable-pip-version-check "arize-phoenix==$(PHOENIX_VERSION)"
	touch $(PHOENIX_STAMP)

test-integration: $(STAMP) $(PHOENIX_STAMP)
	HARNESS_INTEGRATION=1 PHOENIX_VENV=$(PHOENIX_VENV) $(PY) -m pytest -q -p no:cacheprovider --durations=5 tests/integration

# The HTML report's browser test (tests/browser/) drives Debian's Chromium through Playwright;
# Playwright never downloads a browser. Installs the `chromium` package only when it is missing.
.PHONY: browser-deps
browser-deps:
	@test -x /usr/bin/chromium || { \
		sudo=$$(test "$$(id -u)" -eq 0 || echo sudo); \
		$$sudo apt-get update && $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; \
	}

clean:
	rm -rf $(VENV) $(BENCH_VENV) reports .pytest_cache .mypy_cache .ruff_cache .hypothesis
