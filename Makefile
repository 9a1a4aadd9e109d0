# One-command entry points. Everything installs into ./.venv from PyPI; nothing is installed by hand.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# Two stamps: the runtime alone (what `make demo` needs) and the locked development environment,
# the runtime with the test, Spark and bench extras at the versions of $(LOCK) (what `make test`,
# `make bench*` and CI need). The second also satisfies the first, so a demo after a test run
# installs nothing.
RUNTIME := $(VENV)/.installed-runtime
STAMP   := $(VENV)/.installed-test
# The development and CI environment, pinned with hashes (`make lock` refreshes it; docs/design.md).
LOCK    := requirements-dev.lock

.PHONY: demo demo-fail lock docs-help portal-screenshots test test-fast test-fuzz test-stress tools lint bench bench-scale bench-startup bench-service bench-target bench-retry bench-audit bench-audit-spark bench-policy bench-key-timing bench-diff bench-log wrk clean

$(BIN)/python:
	@echo "make: creating the virtual environment $(VENV) with $(PYTHON)"
	$(PYTHON) -m venv $(VENV)

$(RUNTIME): pyproject.toml | $(BIN)/python
	@echo "make: installing compliance-bake and its runtime dependencies into $(VENV) (pip install -e .; no test or Spark extras)"
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e .
	touch $(RUNTIME)

$(STAMP): pyproject.toml $(LOCK) | $(BIN)/python
	@echo "make: installing the locked development environment ($(LOCK): the runtime with the test, Spark and bench extras, every version and hash pinned) into $(VENV), then compliance-bake itself (editable, no dependencies)"
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --require-hashes --no-deps -r $(LOCK)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $(STAMP) $(RUNTIME)

## lock: refresh the development and CI lock ($(LOCK)) from pyproject.toml's ranges: the newest
## release within them of every runtime, test, Spark and bench dependency, for every platform
## (--universal) from Python 3.11, with hashes; uv asks PyPI alone (--no-config: no local index).
## Re-run after any change to pyproject's dependencies; tests/product/test_lock.py fails until then
UV_VERSION := 0.13.8
lock: | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check 'uv==$(UV_VERSION)'
	$(BIN)/uv pip compile pyproject.toml --quiet --extra test --extra spark --extra bench \
	  --universal --python-version 3.11 --generate-hashes --no-config \
	  --custom-compile-command 'make lock' -o $(LOCK)

## docs-help: write the `--help` reference at the end of docs/commands.md from the CLI itself
## (tests/cli/test_help_reference.py fails when it is stale)
docs-help: $(RUNTIME)
	$(BIN)/python scripts/help_reference.py

## portal-screenshots: the portal of a passing and a failing signed bake at 1280 and 390 px, in
## Debian's chromium, as docs/portal-{pass,fail}-{1280,390}.png (docs/portal.md shows them)
portal-screenshots: $(STAMP) tools
	$(BIN)/python scripts/portal_screenshots.py

## demo: set up (the runtime only), mint a local signing secret if there is none, bake the bundled
## fixtures (and the ZIP-window audit of the demo plays) into out/ on the demo's own clock with the
## in-process engine, verify it
DEMO_NOW := 2026-11-22T04:06:00Z
demo: $(RUNTIME)
	@if [ -n "$$REPORT_SIGNING_SECRET$$REPORT_SIGNING_SECRET_FILE" ]; then \
	  echo "demo: signing with the secret from the environment"; \
	elif [ -f .compliance-bake/report-signing.secret ]; then \
	  echo "demo: signing with the local secret .compliance-bake/report-signing.secret"; \
	else \
	  echo "demo: minting a local report-signing secret (development only, git-ignored)"; \
	  $(BIN)/compliance-bake secret mint; \
	fi
	@echo "demo: baking the bundled fixtures with the in-process engine, auditing fixtures/plays.csv, clock $(DEMO_NOW), into out/"
	$(BIN)/compliance-bake bake snapshot --deep-audit fixtures/plays.csv --now $(DEMO_NOW)
	@echo "demo: verifying out/ offline (schemas, digests, HMACs, every rule of the spec)"
	$(BIN)/compliance-bake verify out
	@echo "demo: done; open out/portal/compliance/index.html in a browser"

## demo-fail: the failure the bake exists to catch, rehearsed: the in-process engine (the service)
## answers from fixtures/drifted/, whose licences drifted from the registry in fixtures/ that the
## shadow reads; bakes into out-fail/ on the demo's clock. Exit 1 is the expected outcome (make
## succeeds); any other exit fails make
demo-fail: $(RUNTIME)
	@[ -n "$$REPORT_SIGNING_SECRET$$REPORT_SIGNING_SECRET_FILE" ] \
	  || [ -f .compliance-bake/report-signing.secret ] || $(BIN)/compliance-bake secret mint
	@echo "demo-fail: baking with the service's licences from fixtures/drifted/ against the registry in fixtures/, clock $(DEMO_NOW), into out-fail/"
	@$(BIN)/compliance-bake bake snapshot --service-fixtures fixtures/drifted --out out-fail \
	  --now $(DEMO_NOW); code=$$?; \
	if [ $$code -eq 1 ]; then \
	  echo "demo-fail: exit 1, as expected: the mismatches above are the drift to fix"; \
	else \
	  echo "demo-fail: expected exit 1 (a check failed), got $$code" >&2; \
	  exit $$(( code == 0 ? 1 : code )); \
	fi

## tools: jq and openssl, which the auditor recipe test runs, xmllint, with which the JUnit tests
## validate against Jenkins' schema, chromium, in which the portal
## tests open the page (Debian: installed when missing; Playwright drives it, never downloads one),
## Java (17+) for the Spark tests (without it they skip and say why), PostgreSQL (server and
## psql: the database-source tests start a throwaway cluster) with Debian's PostgreSQL and SQLite
## JDBC drivers (Spark reads database plays through them), and Bun, which runs the
## TypeScript compliance service the target-profile tests bake against (npm's
## @oven/bun-linux-x64 into .tools/, when missing; npm from Debian when that is missing too)
BUN := .tools/node_modules/@oven/bun-linux-x64/bin/bun
tools: $(BUN)
$(BUN):
	@command -v npm >/dev/null || { \
	  command -v apt-get >/dev/null || { echo "install npm (or bun), then re-run" >&2; exit 2; }; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq npm >/dev/null; }
	@echo "installing bun from npm into .tools/ (the target-profile tests run a Bun service)" >&2
	npm install --prefix .tools --no-audit --no-fund --no-save --silent @oven/bun-linux-x64
	@test -x $(BUN) && $(BUN) --version >/dev/null
tools:
	@command -v jq >/dev/null && command -v openssl >/dev/null && command -v xmllint >/dev/null && test -x /usr/bin/chromium || { \
	  command -v apt-get >/dev/null || { echo "install jq, openssl, xmllint and chromium, then re-run" >&2; exit 2; }; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq jq openssl libxml2-utils chromium >/dev/null; }
	@command -v java >/dev/null || [ -n "$$JAVA_HOME" ] || ! command -v apt-get >/dev/null || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq openjdk-17-jre-headless >/dev/null \
	  || echo "no Java 17 installed: the Spark tests will skip" >&2; }
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && command -v psql >/dev/null \
	  && test -f /usr/share/java/postgresql.jar && test -f /usr/share/java/sqlite-jdbc.jar || { \
	  command -v apt-get >/dev/null || { echo "install PostgreSQL (server and psql) and the PostgreSQL and SQLite JDBC drivers, then re-run" >&2; exit 2; }; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq \
	    postgresql libpostgresql-jdbc-java libxerial-sqlite-jdbc-java >/dev/null; }

## test: set up and run lint, types and the whole test suite (in parallel: one worker per core,
## at most 4; the tests share nothing but the machine)
test: $(STAMP) tools
	$(BIN)/ruff check compliance_bake tests bench
	$(BIN)/ruff format --check --quiet compliance_bake tests bench
	$(BIN)/mypy
	$(BIN)/python -m pytest -q -n auto --maxprocesses 4

## test-fast: the unit tier alone (no Spark, browser, database, service, attack or product test),
## in parallel: the minute-long loop while working; `make test` runs every tier
FAST_TIER := not (spark or browser or database or service or attack or product)
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -n auto --maxprocesses 4 -m "$(FAST_TIER)"

## test-fuzz: the property tests with fresh random cases (make test runs them derandomised)
test-fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=fuzz $(BIN)/python -m pytest -q tests/service/test_service_api.py tests/inputs/test_jsonio.py tests/report/test_shadow.py tests/signing/test_canon.py

## test-stress: make test 10 times in a row with four CPU hogs beside it
test-stress: $(STAMP) tools
	bash bench/stress_test.sh 10 4

lint: $(STAMP)
	$(BIN)/ruff check compliance_bake tests bench
	$(BIN)/ruff format --check --quiet compliance_bake tests bench
	$(BIN)/mypy

## bench: CPU (user+sys), wall and peak of bake, its floor, verify and diff at 500,000 rows (checks
## bake CPU <= 3x floor, verify <= bake, diff <= verify of both sides, every peak < 1 GiB); then one
## transparency-log append on logs of 1,000 to 100,000 entries
bench: $(STAMP)
	$(BIN)/python bench/bake_bench.py
	$(BIN)/python bench/log_bench.py

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

## bench-target: `bake snapshot --target` checks/s on 50 x 1,000 against wrk on the same route,
## and with the policy's questions against wrk on a boundary question
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

## bench-log: one transparency-log append at 1,000, 10,000 and 100,000 entries (median of 20)
bench-log: $(STAMP)
	$(BIN)/python bench/log_bench.py

## bench-policy: the policy's questions in process (50 states x 10,000 partners with limit rows)
## against the same decisions in a plain loop
bench-policy: $(STAMP)
	$(BIN)/python bench/policy_bench.py

## bench-diff: `diff` of two 500,000-row snapshots (rows aligned, rows keyed) against verify of each side
bench-diff: $(STAMP)
	$(BIN)/python bench/diff_bench.py

## bench-audit-spark: the audit on Spark local[1] and local[2] vs DuckDB, 10,000,000 plays (REPEAT=N pairs)
bench-audit-spark: $(STAMP)
	$(BIN)/python bench/audit_spark_bench.py --repeat $(or $(REPEAT),1)

## bench-audit-db: the audit over 1,000,000 and 10,000,000 plays in PostgreSQL (a throwaway
## cluster) against psql's \copy of the same columns to /dev/null, and against the same plays as
## Parquet: CPU and wall, in one run (REPEAT=N rounds)
bench-audit-db: $(STAMP) tools
	$(BIN)/python bench/audit_db_bench.py --repeat $(or $(REPEAT),1)

clean:
	rm -rf $(VENV) build dist .pytest_cache .mypy_cache .ruff_cache
