"""Benchmark: `audit deep` over 10,000,000 plays against the bare DuckDB query and plain pandas.

    python bench/audit_bench.py [--rows 10000000] [--repeat 3] [--formats csv,parquet]

One run does everything:
1. generates the plays (bench/gen_plays.py: clean, about 4 in 100 outside the window, 1 in 100
   not enriched) as CSV and Parquet into bench/.data/ (git-ignored), once: later runs reuse them;
2. for each format, --repeat rounds, each timing three fresh child processes one after the other:
   - `audit`: the real command line, `python -m compliance_bake audit deep --plays FILE --now ...
     --json` (start-up, licences, the ZIP database, the query, the report written atomically);
   - `bare`: the bare DuckDB count-and-join query in Python: the same ZIP relation from the same
     ZIP database, then `SELECT count(*), count(*) FILTER (in window), count(z.zip) FROM plays
     LEFT JOIN zips` with `enriched_at` cast to TIMESTAMPTZ and nothing checked;
   - `pandas` (first round only, it is slow): read every column as text, `to_datetime(utc=True)`,
     merge with the ZIPs, count the same three numbers;
   the wall time is measured around each child and its peak RSS read from `os.wait4`, through a
   fresh launcher (bench/peak.py), so each figure is one process alone: not the peak it would
   inherit from this process. The plays are generated in a child of their own for the same
   reason (before, every figure of a first run read the generator's 3.2 GiB).
   All three must agree on the counts.
3. prints the medians and the ratios to `bare`, measured in the same run.

Targets: `audit` within 1.5x `bare` on both formats, its peak memory under 1 GiB. Exits 1 if
one is missed. The machine is shared: rerun when figures look noisy.
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
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.peak import measure  # noqa: E402

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
DATA_DIR = BENCH_DIR / ".data"
NOW = "2026-11-22T04:06:00Z"
DAYS = 90
MAX_RATIO = 1.5
MAX_MEMORY = 1024**3
BENCH_SECRET = "bench-only-signing-secret-0123456789abcd"

BARE = """
import sys, duckdb
from compliance_bake.inputs.zipindex import zip_index
path, since, now = sys.argv[1], sys.argv[2], sys.argv[3]
index = zip_index()
con = duckdb.connect()
con.execute("SET TimeZone = 'UTC'")
con.execute("SET enable_progress_bar = false")
con.execute(
    "CREATE TABLE zips AS SELECT unnest($1::VARCHAR[]) AS zip, unnest($2::VARCHAR[]) AS state",
    [list(index.places), [p.state for p in index.places.values()]],
)
read = (
    f"read_csv('{path}', header = true, all_varchar = true)" if path.endswith(".csv")
    else f"read_parquet('{path}')"
)
total, inside, zipped = con.execute(f'''
    SELECT count(*),
           count(*) FILTER (WHERE try_cast(enriched_at AS TIMESTAMPTZ)
                            BETWEEN '{since}'::TIMESTAMPTZ AND '{now}'::TIMESTAMPTZ),
           count(z.zip)
    FROM {read} p LEFT JOIN zips z ON z.zip = p.zip
''').fetchall()[0]
print(total, inside, zipped)
"""

PANDAS = """
import sys
import pandas as pd
from compliance_bake.inputs.zipindex import zip_index
path, since, now = sys.argv[1], sys.argv[2], sys.argv[3]
index = zip_index()
states = [p.state for p in index.places.values()]
zips = pd.DataFrame({"zip": list(index.places), "zip_state": states})
if path.endswith(".csv"):
    plays = pd.read_csv(path, dtype=str, keep_default_na=False)
else:
    plays = pd.read_parquet(path)
enriched = pd.to_datetime(plays["enriched_at"], utc=True, errors="coerce", format="ISO8601")
inside = enriched.between(pd.Timestamp(since), pd.Timestamp(now))
merged = plays[["zip", "state"]].merge(zips, on="zip", how="left")
print(len(plays), int(inside.sum()), int(merged["zip_state"].notna().sum()))
"""


def _data(rows: int, fmt: str) -> Path:
    path = DATA_DIR / f"plays-{rows}.{fmt}"
    if not path.exists():
        print(f"generating {path.name} (once; cached in bench/.data/) ...", flush=True)
        partial = path.with_name(f".{path.name}.partial{path.suffix}")
        # In a child of its own: the generator's peak must not become this process's, which
        # every later child would inherit (bench/peak.py).
        generator = [sys.executable, str(BENCH_DIR / "gen_plays.py"), "--rows", str(rows)]
        subprocess.run([*generator, "--out", str(partial), "--now", NOW], check=True)
        partial.replace(path)
    return path


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, int, str]:
    """Wall seconds, peak RSS in bytes and stdout of one child process alone (bench/peak.py:
    through a fresh launcher, so no peak is inherited from this process)."""
    result = measure(argv, env)
    if result.exit_code != 0:
        raise SystemExit(f"{argv[:4]} exited {result.exit_code}: {result.stderr}")
    return result.wall_s, result.peak_bytes, result.stdout


def _window() -> tuple[str, str]:
    from datetime import datetime, timedelta

    now = datetime.fromisoformat(NOW.replace("Z", "+00:00"))
    return (now - timedelta(days=DAYS)).isoformat(), now.isoformat()


def _round(path: Path, first: bool, env: dict[str, str], out: Path) -> dict[str, Any]:
    since, now = _window()
    py = sys.executable
    figures: dict[str, Any] = {}
    wall, peak, text = _timed(
        [py, "-m", "compliance_bake", "audit", "deep", "--plays", str(path), "--now", NOW,
         "--out", str(out), "--json"],
        env,
    )  # fmt: skip
    summary = json.loads(text)
    if not summary["ok"]:
        raise SystemExit(f"the benchmark plays did not audit clean: {summary['byReason']}")
    window = summary["zipWindow"]
    figures["audit"] = (wall, peak, (window["totalPlays"], window["inWindowPlays"]))
    wall, peak, text = _timed([py, "-c", BARE, str(path), since, now], env)
    total, inside, _ = (int(x) for x in text.split())
    figures["bare"] = (wall, peak, (total, inside))
    if first:
        wall, peak, text = _timed([py, "-c", PANDAS, str(path), since, now], env)
        total, inside, _ = (int(x) for x in text.split())
        figures["pandas"] = (wall, peak, (total, inside))
    counts = {name: f[2] for name, f in figures.items()}
    if len(set(counts.values())) != 1:
        raise SystemExit(f"the implementations disagree on (total, in window): {counts}")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--formats", default="csv,parquet")
    args = parser.parse_args()
    env = {**os.environ, "REPORT_SIGNING_SECRET": BENCH_SECRET, "PYTHONPATH": str(ROOT)}
    env.pop("SOURCE_DATE_EPOCH", None)
    missed: list[str] = []
    print(f"{args.rows:,} plays, window {DAYS} days to {NOW}, {os.cpu_count()} CPUs")
    for fmt in args.formats.split(","):
        path = _data(args.rows, fmt)
        size = path.stat().st_size / 1024**2
        with tempfile.TemporaryDirectory() as tmp:
            rounds = [_round(path, n == 0, env, Path(tmp)) for n in range(args.repeat)]
        total, inside = rounds[0]["audit"][2]
        print(f"\n{fmt}: {path.name}, {size:,.0f} MiB, {inside:,}/{total:,} plays in the window")
        median = {
            name: statistics.median(r[name][0] for r in rounds if name in r)
            for name in ("audit", "bare", "pandas")
        }
        peak = {name: max(r[name][1] for r in rounds if name in r) for name in median}
        pairs = [r["audit"][0] / r["bare"][0] for r in rounds]
        for name in ("bare", "audit", "pandas"):
            runs = ", ".join(f"{r[name][0]:.2f}" for r in rounds if name in r)
            print(
                f"  {name:7} {median[name]:7.2f} s  peak {peak[name] / 1024**2:6.0f} MiB  "
                f"x{median[name] / median['bare']:.2f} of bare   (runs: {runs})"
            )
        ratio = statistics.median(pairs)
        print(f"  audit/bare, median of paired rounds: {ratio:.2f} (target <= {MAX_RATIO})")
        if ratio > MAX_RATIO:
            missed.append(f"{fmt}: audit {ratio:.2f}x bare > {MAX_RATIO}")
        if peak["audit"] >= MAX_MEMORY:
            missed.append(f"{fmt}: audit peak {peak['audit'] / 1024**2:.0f} MiB >= 1 GiB")
    if missed:
        print("\nTARGET MISSED: " + "; ".join(missed))
        sys.exit(1)
    print("\nall targets met")


if __name__ == "__main__":
    main()
