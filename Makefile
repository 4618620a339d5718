# toolcall-harness: `make demo` runs the example suite, `make test` runs the checks.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-dev

BENCH_VENV  ?= .venv-bench
BENCH_PY    := $(BENCH_VENV)/bin/python
BENCH_STAMP := $(BENCH_VENV)/.installed-bench

.PHONY: venv demo test lint typecheck unit docs bench clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e . --group dev --group docs
	touch $(STAMP)

demo: $(STAMP)
	mkdir -p reports
	$(VENV)/bin/harness run scenarios/ --junit-xml reports/junit.xml --json reports/results.json
	@echo "== the same suites replayed from their committed cassettes (cassettes/): no model is built"
	$(VENV)/bin/harness run scenarios/ --replay -q
	@echo "== production traces (examples/traces/, scripts/production_traces.sh) against policies:"
	@echo "   the shipped violations stay within each rule's max_rate or are warnings, so this exits 0"
	$(VENV)/bin/harness eval-traces examples/traces/production.jsonl.gz --rules scenarios/policies.yaml

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports

typecheck: $(STAMP)
	$(VENV)/bin/mypy harness tracing

unit: $(STAMP) browser-deps
	$(PY) -m pytest -q -n auto

# The documentation site (mkdocs.yml, docs/) into site/: --strict fails on a broken link or anchor
# and on a page left out of the nav (not with --quiet: it hides the warnings and passes).
# NO_MKDOCS_2_WARNING silences mkdocs-material's notice about MkDocs 2.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

test: lint typecheck docs unit

$(BENCH_STAMP): pyproject.toml
	test -x $(BENCH_PY) || $(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_PY) -m pip install --quiet --upgrade pip
	$(BENCH_PY) -m pip install --quiet -e . --group bench
	touch $(BENCH_STAMP)

# Every benchmark runs even if one fails; `make bench` then exits non-zero.
# bench_metrics needs Ragas, so it runs in .venv-bench; the others run in the main .venv.
# Extra options go to every benchmark, e.g. `make bench BENCH_ARGS=--quick`.
BENCH_ARGS ?=
BENCH_MAIN := bench_matching bench_capture bench_runner bench_eval_traces bench_online

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

# The HTML report's browser test (tests/e2e/browser/) drives Debian's Chromium through Playwright;
# Playwright never downloads a browser. Installs the `chromium` package only when it is missing.
.PHONY: browser-deps
browser-deps:
	@test -x /usr/bin/chromium || { \
		sudo=$$(test "$$(id -u)" -eq 0 || echo sudo); \
		$$sudo apt-get update && $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; \
	}

clean:
	rm -rf $(VENV) $(BENCH_VENV) reports site .pytest_cache .mypy_cache .ruff_cache .hypothesis

# Lower bounds: a fresh .venv-lowest where uv resolves every direct dependency of the package to
# the floor pyproject.toml declares (`--resolution lowest-direct`), with the test tools at the
# floors of the `dev` group; the demo suites and the capture tests must pass there. The three
# suites named here need only the base dependencies (the others need `langchain` v1), and
# tests/tracing/test_parity.py is left out: the instrumentors at the dev group's floors record
# nothing on langchain-core 1.x, and one of them needs opentelemetry 1.43, far above the base floor.
# The `[dask]` extra is installed too: the Dask executor's tests run on its floor's LocalCluster.
# `make test-lowest LOWEST_PYTHON=python3.10` checks the floors of the oldest Python we support.
# The venv is kept while what it is made of stays the same: [project] (dependencies, extras),
# the test tools' floors, the scripts and entry points, and the Python (LOWEST_STAMP holds their
# hash); anything else in pyproject.toml can change without a reinstall.
LOWEST_VENV     ?= .venv-lowest
LOWEST_PYTHON   ?= $(PYTHON)
LOWEST_PY       := $(LOWEST_VENV)/bin/python
LOWEST_STAMP    := $(LOWEST_VENV)/.floors
LOWEST_TOOLS_RE := pytest|pytest-asyncio|hypothesis|junitparser
LOWEST_TOOLS    := sed -n '/^\[dependency-groups\]/,/^\[/p' pyproject.toml \
	| grep -oE '"($(LOWEST_TOOLS_RE))([ <>=!~;[][^"]*)?"' | tr -d '"'
LOWEST_KEY      := { sed -n '/^\[project\]/,/^\[dependency-groups\]/p' pyproject.toml; \
	$(LOWEST_TOOLS); sed -n '/^\[project\.scripts\]/,/^\[tool\./p' pyproject.toml; \
	$(LOWEST_PYTHON) -c 'import sys; print(sys.version)'; } | sha256sum | cut -c1-16
LOWEST_SUITES   := scenarios/travel.yaml scenarios/orders.yaml scenarios/calculator.yaml
LOWEST_TESTS    := tests/tracing/langchain/test_recorder.py tests/tracing/otel/test_span_emitter.py \
	tests/tracing/otel/test_span_exporter.py tests/tracing/test_capture_concurrency.py \
	tests/tracing/test_records.py tests/harness/run/test_demo_agents.py \
	tests/harness/run/test_runner.py tests/harness/online/test_processor.py \
	tests/harness/parallel/test_dask_executor.py

.PHONY: test-lowest lowest-venv
test-lowest:
	@key=$$($(LOWEST_KEY)); \
	if test -x $(LOWEST_PY) && test "$$(cat $(LOWEST_STAMP) 2>/dev/null)" = "$$key"; then \
		echo "test-lowest: $(LOWEST_VENV) kept: the floors are unchanged ($$key)"; \
	else \
		$(MAKE) --no-print-directory lowest-venv LOWEST_FLOORS=$$key; \
	fi
	$(LOWEST_VENV)/bin/harness run $(LOWEST_SUITES)
	$(LOWEST_PY) -m pytest -q -p no:cacheprovider $(LOWEST_TESTS)

# A fresh .venv-lowest at the floors; `make test-lowest` calls it when the stamp is stale.
lowest-venv:
	rm -rf $(LOWEST_VENV)
	$(LOWEST_PYTHON) -m venv $(LOWEST_VENV)
	$(LOWEST_PY) -m pip install --quiet --disable-pip-version-check uv
	$(LOWEST_TOOLS) > $(LOWEST_VENV)/test-tools.txt
	test $$(wc -l < $(LOWEST_VENV)/test-tools.txt) -eq $(words $(subst |, ,$(LOWEST_TOOLS_RE))) || { \
		echo "test-lowest: expected the floors of $(LOWEST_TOOLS_RE) in [dependency-groups] dev"; exit 1; }
	$(LOWEST_VENV)/bin/uv pip install --quiet --python $(LOWEST_PY) --resolution lowest-direct \
		-e '.[dask]' -r $(LOWEST_VENV)/test-tools.txt
	@echo "test-lowest: $$($(LOWEST_VENV)/bin/uv pip freeze --python $(LOWEST_PY) --exclude-editable | tr '\n' ' ')"
	echo $(or $(LOWEST_FLOORS),$$($(LOWEST_KEY))) > $(LOWEST_STAMP)
