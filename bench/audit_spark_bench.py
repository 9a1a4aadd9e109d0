"""Benchmark: the ZIP-window audit on Spark local[1] and local[2] against DuckDB, same run.

    python bench/audit_spark_bench.py [--rows 10000000] [--formats parquet,csv] [--repeat 1]

For each format (the plays of bench/gen_plays.py, generated once into bench/.data/ and shared
with bench/audit_bench.py), each engine runs in a fresh child process:
- `duckdb`: `run_zip_window` on DuckDB (the query and the report's data; no CLI start-up);
- `local[N]`: the child first starts a SparkSession as `audit deep` does (`start`: the JVM and
  the session, timed apart), then runs the same `run_zip_window` on it (`query`: reading,
  parsing, joins, counts).
All must agree on the counts. With --repeat N the local[1] and local[2] children run in N
interleaved pairs, and the speed-up is the median of the pairs' ratios (a pair shares the
machine's load of the moment). Prints each figure, Spark's ratio to DuckDB, and the query's
speed-up from local[1] to local[2] (target: at least 1.7x; exits 1 when missed). Spark's point
is to scale out: on one small machine a JVM engine is expected to be several times slower.
The speed-up needs both cores free: run it on an idle machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
TARGET_SPEEDUP = 1.7

CHILD = """
import json, sys, time
from compliance_bake.audit.engines.interface import EngineOptions
from compliance_bake.audit.zip_window import run_zip_window
from compliance_bake.clock import parse_instant
from compliance_bake.inputs.fixtures import load_fixtures
from compliance_bake.resources import demo_fixtures_dir

path, master, now = sys.argv[1], sys.argv[2], sys.argv[3]
registry = load_fixtures(demo_fixtures_dir()).registry
moment = parse_instant(now, source="bench")
start = 0.0
options = EngineOptions("duckdb") if master == "duckdb" else EngineOptions("spark", master)
if master != "duckdb":
    # The session as `audit deep` starts it (its JVM options), with room for the driver; the
    # audit below reuses it.
    from compliance_bake.audit.engines.spark import SparkEngine
    t0 = time.perf_counter()
    SparkEngine.open(EngineOptions("spark", master, (("spark.driver.memory", "6g"),
                                                     ("spark.ui.enabled", "false"))))
    start = time.perf_counter() - t0
t0 = time.perf_counter()
for one in path.split(","):
    audit = run_zip_window(one, registry, moment, 90, engine=options)
query = time.perf_counter() - t0
print(json.dumps({"start": start, "query": query,
                  "counts": [audit.total_plays, audit.in_window_plays, audit.violation_count]}))
"""


def _child(path: Path, master: str, now: str) -> dict[str, float | list[int]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryFile() as err:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(path), master, now],
            stdout=subprocess.PIPE,
            stderr=err,
            env=env,
            check=False,
        )
        if done.returncode != 0:
            err.seek(0)
            tail = err.read().decode(errors="replace")[-3000:]
            raise SystemExit(f"{master} on {path.name} exited {done.returncode}:\n{tail}")
    result: dict[str, float | list[int]] = json.loads(done.stdout.decode().splitlines()[-1])
    return result


def main() -> None:
    sys.path.insert(0, str(ROOT))
    from bench.audit_bench import NOW, _data

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--formats", default="parquet,csv")
    parser.add_argument("--repeat", type=int, default=1, help="interleaved local[1]/local[2] pairs")
    args = parser.parse_args()
    masters = ["local[1]", "local[2]"]
    print(f"{args.rows:,} plays, {os.cpu_count()} CPUs; Spark times: start (JVM and session) "
          "+ query")  # fmt: skip
    missed = []
    for fmt in args.formats.split(","):
        path = _data(args.rows, fmt)
        print(f"\n{fmt}: {path.name}, {path.stat().st_size / 1024**2:,.0f} MiB")
        duck = _child(path, "duckdb", NOW)
        print(f"  duckdb     query {duck['query']:8.2f} s")
        queries: dict[str, list[float]] = {m: [] for m in masters}
        for _ in range(args.repeat):
            for master in masters:
                spark = _child(path, master, NOW)
                if spark["counts"] != duck["counts"]:
                    raise SystemExit(f"{master} disagrees: {spark['counts']} != {duck['counts']}")
                query = float(spark["query"])  # type: ignore[arg-type]
                queries[master].append(query)
                print(
                    f"  {master:10} query {query:8.2f} s  start {spark['start']:6.2f} s  "
                    f"x{query / float(duck['query']):.1f} of duckdb"  # type: ignore[arg-type]
                )
        ratios = [a / b for a, b in zip(queries["local[1]"], queries["local[2]"], strict=True)]
        speedup = statistics.median(ratios)
        pairs = ", ".join(f"{r:.2f}x" for r in ratios)
        print(f"  local[2]/local[1] speed-up: {speedup:.2f}x, median of {len(ratios)} "
              f"(pairs: {pairs}; target >= {TARGET_SPEEDUP})")  # fmt: skip
        if speedup < TARGET_SPEEDUP:
            missed.append(f"{fmt}: speed-up {speedup:.2f}x < {TARGET_SPEEDUP}")
        print(f"  counts agree: {duck['counts']} (total, in window, violations)")
    if missed:
        print("\nTARGET MISSED: " + "; ".join(missed))
        sys.exit(1)
    print("\nall targets met")


if __name__ == "__main__":
    main()
