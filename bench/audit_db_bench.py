"""Benchmark: `audit deep` over plays in PostgreSQL, pushed down and streamed, against getting the
rows out at all.

    python bench/audit_db_bench.py [--rows 1000000,10000000] [--repeat 1]

For each size, bench/gen_plays.py's clean plays (Parquet, generated once into bench/.data/) are
loaded into a table of a throwaway PostgreSQL cluster (tests/_pg_helpers.py: Debian's server on
a free loopback port, password authentication, its default settings: two parallel workers per
query), and each round runs, as fresh child processes one after the other:
- `pushdown`: the real command line, `python -m compliance_bake audit deep --plays
  postgresql://... --plays-table plays --now ... --json` (the PostgreSQL engine, the default:
  the statement runs in the server, the counts come back);
- `copy-out`: `psql -c "\\copy (SELECT play_id, partner, state, zip, enriched_at FROM plays) TO
  '/dev/null'"`: the cost of getting the same columns out of the server at all;
- `streamed`: the same command with `--engine duckdb` (the row count, the Arrow stream of the
  five columns, the one pass in DuckDB here).
CPU is user + system of the child and its threads (`os.wait4`, tests/support/peak.py) plus the
server's: the CPU the postmaster's reaped children (the connection's backend and its parallel
workers) used during the run, from /proc/PID/stat. Wall is the child's. Prints the medians and
the ratios pushdown/copy-out and pushdown/streamed. The two audits must agree on every count.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests._pg_helpers import Cluster, start_cluster  # noqa: E402
from tests.support.peak import Measured, measure  # noqa: E402

BENCH_DIR = Path(__file__).resolve().parent
DATA_DIR = BENCH_DIR / ".data"
NOW = "2026-11-22T04:06:00Z"
COLUMNS = "play_id, partner, state, zip, placed_at, enriched_at, wager_type, stake"
RUNS = ("pushdown", "copy-out", "streamed")


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


def _server_cpu(cluster: Cluster) -> float:
    """CPU seconds the postmaster's reaped children used so far (cutime + cstime)."""
    pid = (cluster.folder / "data" / "postmaster.pid").read_text().split()[0]
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


def _with_server(cluster: Cluster, argv: list[str], env: dict[str, str]) -> Measured:
    """The child measured, its server-side CPU added (the backend has exited once the count
    stops moving)."""
    before = _server_cpu(cluster)
    run = measure(argv, env=env)
    after, settled = _server_cpu(cluster), 0
    while settled < 3:
        time.sleep(0.2)
        now = _server_cpu(cluster)
        settled, after = (settled + 1, after) if now == after else (0, now)
    return replace(run, cpu_s=run.cpu_s + after - before)


def _audit(cluster: Cluster, table: str, *extra: str, env: dict[str, str]) -> tuple[Measured, Any]:
    with tempfile.TemporaryDirectory() as out:
        run = _with_server(
            cluster,
            [sys.executable, "-m", "compliance_bake", "audit", "deep", "--plays",
             cluster.url(password=False), "--plays-table", table, *extra, "--now", NOW,
             "--out", out, "--json", "--allow-empty-window"],
            env,
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
              f"{cluster.port}; {os.cpu_count()} cores; load {os.getloadavg()[0]:.1f}")  # fmt: skip
        header = f"{'plays':>11} {'run':<9} {'cpu s':>7} {'wall s':>7}  ratios (cpu, wall)"
        for rows in [int(r) for r in args.rows.split(",")]:
            parquet = _plays(rows)
            table = f"plays_{rows}"
            print(f"loading {rows:,} plays into {table} ...", flush=True)
            _load(cluster, parquet, table)
            times: dict[str, list[tuple[float, float]]] = {name: [] for name in RUNS}
            pairs: dict[str, list[tuple[float, float]]] = {name: [] for name in RUNS[1:]}
            for _ in range(args.repeat):
                pushed, summary = _audit(cluster, table, env=env)
                copy = _with_server(
                    cluster,
                    [str(cluster.bin / "psql"), "-X", "-q", "-h", "127.0.0.1", "-p",
                     str(cluster.port), "-U", "postgres", "-d", "plays", "-c",
                     f"\\copy (SELECT play_id, partner, state, zip, enriched_at FROM {table}) "
                     "TO '/dev/null'"],
                    env,
                )  # fmt: skip
                if copy.exit_code:
                    raise SystemExit(f"psql failed: {copy.stderr}")
                streamed, streamed_summary = _audit(cluster, table, "--engine", "duckdb", env=env)
                if (summary["engine"], streamed_summary["engine"]) != ("postgres", "duckdb"):
                    raise SystemExit(f"engines: {summary['engine']}, {streamed_summary['engine']}")
                for key in ("zipWindow", "notEnrichedPlays", "violations", "byReason"):
                    if summary[key] != streamed_summary[key]:
                        raise SystemExit(f"pushed down and streamed disagree on {key}")
                if summary["zipWindow"]["totalPlays"] != rows:
                    raise SystemExit(f"audited {summary['zipWindow']['totalPlays']} of {rows}")
                runs = (("pushdown", pushed), ("copy-out", copy), ("streamed", streamed))
                for name, run in runs:
                    times[name].append((run.cpu_s, run.wall_s))
                for name, run in runs[1:]:
                    pairs[name].append((pushed.cpu_s / run.cpu_s, pushed.wall_s / run.wall_s))
            print(header)
            for name, values in times.items():
                cpu = statistics.median(v[0] for v in values)
                wall = statistics.median(v[1] for v in values)
                ratio = ""
                if name in pairs:
                    r_cpu = statistics.median(p[0] for p in pairs[name])
                    r_wall = statistics.median(p[1] for p in pairs[name])
                    ratio = f"  pushdown/{name}: {r_cpu:.2f}x cpu, {r_wall:.2f}x wall"
                print(f"{rows:>11,} {name:<9} {cpu:>7.2f} {wall:>7.2f}{ratio}", flush=True)
            print(f"load {os.getloadavg()[0]:.1f}", flush=True)
            cluster.psql(f"DROP TABLE {table}")
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
