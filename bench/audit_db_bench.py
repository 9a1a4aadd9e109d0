"""Benchmark: `audit deep` over plays in PostgreSQL against getting the rows out at all.

    python bench/audit_db_bench.py [--rows 1000000,10000000] [--repeat 1]

For each size, bench/gen_plays.py's clean plays (Parquet, generated once into bench/.data/) are
loaded into a table of a throwaway PostgreSQL cluster (tests/_pg_helpers.py: Debian's server on
a free loopback port, password authentication), and each round runs, as fresh child processes
one after the other:
- `audit`: the real command line, `python -m compliance_bake audit deep --plays postgresql://...
  --plays-table plays --now ... --json` (start-up, the connection, the row count, the Arrow
  stream of the five audited columns, the one pass, the report);
- `copy-out`: `psql -c "\\copy (SELECT play_id, partner, state, zip, enriched_at FROM plays) TO
  '/dev/null'"`: the cost of getting the same columns out of the server at all;
- `reader`: the reader alone, in a bare Python process: the same five columns through the ADBC
  driver as an Arrow stream that DuckDB counts (what the audit's reading costs before any rule);
- `parquet`: the same audit over the same plays as a Parquet file.
CPU (user + system of the child and its threads, from `os.wait4` through tests/support/peak.py)
and wall time of each; the server's own CPU is in neither (it is another process), so the wall
times say what the server adds. Prints the medians and the ratios audit/copy-out and
audit/parquet. The audit and the Parquet audit must agree on every count.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests._pg_helpers import Cluster, start_cluster  # noqa: E402
from tests.support.peak import measure  # noqa: E402

BENCH_DIR = Path(__file__).resolve().parent
DATA_DIR = BENCH_DIR / ".data"
NOW = "2026-11-22T04:06:00Z"
COLUMNS = "play_id, partner, state, zip, placed_at, enriched_at, wager_type, stake"
# The reader alone. argv: URL, table.
READER = """
import sys
import adbc_driver_manager as adbc
import adbc_driver_postgresql as pg
import duckdb

database = pg.connect(sys.argv[1])
connection = adbc.AdbcConnection(database)
statement = adbc.AdbcStatement(connection)
statement.set_sql_query(f"SELECT play_id, partner, state, zip, enriched_at FROM {sys.argv[2]}")
stream, _ = statement.execute_query()
con = duckdb.connect()
con.execute("SET enable_progress_bar = false")  # it would print on stdout
con.register("plays", stream)
print(con.execute("SELECT count(*) FROM plays").fetchone()[0])
"""


def _plays(rows: int) -> Path:
    path = DATA_DIR / f"plays-{rows}.parquet"
    if not path.exists():
        DATA_DIR.mkdir(exist_ok=True)
        from bench.gen_plays import generate

        print(f"generating {rows:,} plays into {path} ...", flush=True)
        generate(rows, path, NOW)
    return path


def _load(cluster: Cluster, parquet: Path, table: str) -> None:
    """The plays into `table` (text columns) through psql's \\copy of a CSV DuckDB writes."""
    import duckdb

    with tempfile.TemporaryDirectory() as folder:
        csv = Path(folder) / "plays.csv"
        con = duckdb.connect()
        con.execute(
            f"COPY (SELECT {COLUMNS} FROM read_parquet('{parquet}')) TO '{csv}' "
            "(FORMAT csv, HEADER false)"
        )
        con.close()
        os.chmod(folder, 0o755)
        cluster.psql(
            f"DROP TABLE IF EXISTS {table}; CREATE TABLE {table} "
            f"({', '.join(c + ' TEXT' for c in COLUMNS.split(', '))})"
        )
        cluster.psql(f"\\copy {table} FROM '{csv}' (FORMAT csv)")
        cluster.psql(f"VACUUM ANALYZE {table}")


def _audit(plays: str, *extra: str, env: dict[str, str]) -> tuple[Any, dict[str, Any]]:
    with tempfile.TemporaryDirectory() as out:
        run = measure(
            [sys.executable, "-m", "compliance_bake", "audit", "deep", "--plays", plays,
             *extra, "--now", NOW, "--out", out, "--json", "--allow-empty-window"],
            env=env,
        )  # fmt: skip
    if run.exit_code not in (0, 1):
        raise SystemExit(f"audit failed ({run.exit_code}): {run.stderr.strip()[-500:]}")
    summary: dict[str, Any] = json.loads(run.stdout)
    return run, summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1000000,10000000")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    password = "bench-" + os.urandom(8).hex()
    env = {
        **os.environ,
        "PGPASSWORD": password,
        "REPORT_SIGNING_SECRET": "bench-only-signing-secret-0123456789abcd",
    }
    cluster = start_cluster(password)
    try:
        print(f"PostgreSQL {cluster.psql('SHOW server_version').strip()} on 127.0.0.1:"
              f"{cluster.port}; {os.cpu_count()} cores")  # fmt: skip
        header = f"{'plays':>11} {'run':<9} {'cpu s':>7} {'wall s':>7}  ratios (cpu, wall)"
        for rows in [int(r) for r in args.rows.split(",")]:
            parquet = _plays(rows)
            table = f"plays_{rows}"
            print(f"loading {rows:,} plays into {table} ...", flush=True)
            _load(cluster, parquet, table)
            times: dict[str, list[tuple[float, float]]] = {
                "audit": [], "copy-out": [], "reader": [], "parquet": []
            }  # fmt: skip
            pairs: dict[str, list[tuple[float, float]]] = {
                "copy-out": [], "reader": [], "parquet": []
            }  # fmt: skip
            for _ in range(args.repeat):
                db, summary = _audit(cluster.url(password=False), "--plays-table", table, env=env)
                copy = measure(
                    [str(cluster.bin / "psql"), "-X", "-q", "-h", "127.0.0.1", "-p",
                     str(cluster.port), "-U", "postgres", "-d", "plays", "-c",
                     f"\\copy (SELECT play_id, partner, state, zip, enriched_at FROM {table}) "
                     "TO '/dev/null'"],
                    env=env,
                )  # fmt: skip
                if copy.exit_code:
                    raise SystemExit(f"psql failed: {copy.stderr}")
                reader = measure([sys.executable, "-c", READER, cluster.url(password=False), table],
                                 env=env)  # fmt: skip
                if reader.exit_code or int(reader.stdout) != rows:
                    raise SystemExit(f"the reader failed: {reader.stderr[-500:]}")
                pq, pq_summary = _audit(str(parquet), env=env)
                for key in ("zipWindow", "notEnrichedPlays", "violations", "byReason"):
                    if summary[key] != pq_summary[key]:
                        raise SystemExit(f"PostgreSQL and Parquet disagree on {key}")
                if summary["zipWindow"]["totalPlays"] != rows:
                    raise SystemExit(f"audited {summary['zipWindow']['totalPlays']} of {rows}")
                runs = (("audit", db), ("copy-out", copy), ("reader", reader), ("parquet", pq))
                for name, run in runs:
                    times[name].append((run.cpu_s, run.wall_s))
                for name, run in runs[1:]:
                    pairs[name].append((db.cpu_s / run.cpu_s, db.wall_s / run.wall_s))
            print(header)
            for name, values in times.items():
                cpu = statistics.median(v[0] for v in values)
                wall = statistics.median(v[1] for v in values)
                ratio = ""
                if name in pairs:
                    r_cpu = statistics.median(p[0] for p in pairs[name])
                    r_wall = statistics.median(p[1] for p in pairs[name])
                    ratio = f"  audit/{name}: {r_cpu:.2f}x cpu, {r_wall:.2f}x wall"
                print(f"{rows:>11,} {name:<9} {cpu:>7.2f} {wall:>7.2f}{ratio}", flush=True)
            cluster.psql(f"DROP TABLE {table}")
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
