# One-command entry points. Everything installs into ./.venv from PyPI; nothing is installed by hand.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test test-fuzz test-stress tools lint bench bench-scale bench-startup bench-service bench-target bench-retry bench-audit bench-audit-spark bench-key-timing bench-diff wrk clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,spark]'
	touch $(STAMP)

## demo: set up, mint a local signing secret if there is none, bake the bundled fixtures (and the
## ZIP-window audit of the demo plays) into out/ on the demo's own clock, verify it
DEMO_NOW := 2026-11-22T04:06:00Z
demo: $(STAMP)
	@test -n "$$REPORT_SIGNING_SECRET$$REPORT_SIGNING_SECRET_FILE" || test -f .compliance-bake/report-signing.secret \
	  || $(BIN)/compliance-bake secret mint
	$(BIN)/compliance-bake bake snapshot --deep-audit fixtures/plays.csv --now $(DEMO_NOW)
	$(BIN)/compliance-bake verify out

## tools: jq and openssl, which the auditor recipe test runs, chromium, in which the portal
## tests open the page (Debian: installed when missing; Playwright drives it, never downloads one),
## and Java (17+) for the Spark tests (without it they skip and say why)
tools:
	@command -v jq >/dev/null && command -v openssl >/dev/null && test -x /usr/bin/chromium || { \
	  command -v apt-get >/dev/null || { echo "install jq, openssl and chromium, then re-run" >&2; exit 2; }; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq jq openssl chromium >/dev/null; }
	@command -v java >/dev/null || [ -n "$$JAVA_HOME" ] || ! command -v apt-get >/dev/null || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq openjdk-17-jre-headless >/dev/null \
	  || echo "no Java 17 installed: the Spark tests will skip" >&2; }

## test: set up and run lint, types and the whole test suite (in parallel: one worker per core,
## at most 4; the tests share nothing but the machine)
test: $(STAMP) tools
	$(BIN)/ruff check compliance_bake tests bench
	$(BIN)/mypy
	$(BIN)/python -m pytest -q -n auto --maxprocesses 4

## test-fuzz: the property tests with fresh random cases (make test runs them derandomised)
test-fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=fuzz $(BIN)/python -m pytest -q tests/test_service_api.py tests/test_properties.py tests/test_canon.py

## test-stress: make test 10 times in a row with four CPU hogs beside it
test-stress: $(STAMP) tools
	bash bench/stress_test.sh 10 4

lint: $(STAMP)
	$(BIN)/ruff check compliance_bake tests bench
	$(BIN)/mypy

## bench: the 500,000-row in-process bake against its floor (orjson+sha3+writes), json.dumps+sha3,
## and verify of the same output
bench: $(STAMP)
	$(BIN)/python bench/bake_bench.py

## bench-scale: the bake at 50k, 500k and 2M rows, the audit at 1M and 10M plays: time and peak per row
bench-scale: $(STAMP)
	$(BIN)/python bench/scale_bench.py

## bench-startup: `compliance-bake --help` against `python -c "import click"`
bench-startup: $(STAMP)
	$(BIN)/python bench/startup_bench.py

## wrk: the load generator the service benchmarks drive (Debian: installed when missing)
wrk:
	@command -v wrk >/dev/null || { \
	  command -v apt-get >/dev/null || { echo "install wrk, then re-run" >&2; exit 2; }; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq wrk >/dev/null; }

## bench-service: wrk on the check route (with a key) against the bare /health route of `serve`
bench-service: $(STAMP) wrk
	$(BIN)/python bench/service_bench.py

## bench-target: `bake snapshot --target` checks/s on 50 x 1,000 against wrk on the same route
bench-target: $(STAMP) wrk
	$(BIN)/python bench/target_bench.py

## bench-key-timing: 401 latency medians, unknown key prefix vs wrong secret part (1,500 each)
bench-key-timing: $(STAMP)
	$(BIN)/python bench/key_timing.py

## bench-retry: the HTTP target's client CPU per check, tenacity from the first failure (shipped)
## against tenacity on every request
bench-retry: $(STAMP)
	$(BIN)/python bench/retry_bench.py

## bench-audit: `audit deep` against a hand-written DuckDB query of the same classification, CPU
## and wall, at 1,000,000 and 10,000,000 plays, clean and dirty, CSV and Parquet (REPEAT=N rounds)
bench-audit: $(STAMP)
	$(BIN)/python bench/audit_bench.py --repeat $(or $(REPEAT),1)

## bench-diff: `diff` of two 500,000-row snapshots against orjson.loads of the two files
bench-diff: $(STAMP)
	$(BIN)/python bench/diff_bench.py

## bench-audit-spark: the audit on Spark local[1] and local[2] vs DuckDB, 10,000,000 plays (REPEAT=N pairs)
bench-audit-spark: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,spark,bench]'
	$(BIN)/python bench/audit_spark_bench.py --repeat $(or $(REPEAT),1)

clean:
	rm -rf $(VENV) build dist .pytest_cache .mypy_cache .ruff_cache
