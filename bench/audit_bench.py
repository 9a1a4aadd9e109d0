"""Benchmark: `audit deep` over 10,000,000 plays against the bare DuckDB query and plain pandas.

    python bench/audit_bench.py [--rows 10000000] [--repeat 3] [--formats csv,parquet] [--no-pandas]

One run does everything:
1. generates the plays (bench/gen_plays.py: clean, about 4 in 100 outside the window, 1 in 100
   not enriched) as CSV and Parquet into bench/.data/ (git-ignored), once: later runs reuse them;
2. for each format, --repeat rounds, each timing fresh child processes one after the other (the
   audit first in even rounds, last in odd ones):
   - `audit`: the real command line, `python -m compliance_bake audit deep --plays FILE --now ...
     --json` (start-up, licences, the ZIP database, the query, the report written atomically);
   - `bare`: the least a correct audit cannot avoid, as one bare DuckDB query in Python: the same
     ZIP relation from the same ZIP database, the same read (every column the audit checks:
     `partner`, `state`, `zip`, `enriched_at`, as text), the window (`enriched_at` cast to
     TIMESTAMPTZ, leniently: nothing checked) and the ZIP join: `SELECT count(*),
     count(*) FILTER (in window), count(z.zip) FILTER (WHERE z.state = p.state),
     count(p.partner) FROM plays LEFT JOIN zips`;
   - `bare-2`: the bare query issue 14 set the target against, which reads only `zip` and
     `enriched_at` (`count(*), count(*) FILTER (in window), count(z.zip)`), for comparison;
   - `pandas` (first round only, it is slow; not with --no-pandas): read every column as text,
     `to_datetime(utc=True)`, merge with the ZIPs, count the same three numbers;
   the wall time is measured around each child, and its CPU time (user + system, all threads)
   and peak RSS read from `os.wait4`, through a fresh launcher (bench/peak.py), so each figure is
   one process alone: not the peak it would inherit from this process. The plays are generated
   in a child of their own for the same reason (before, every figure of a first run read the
   generator's 3.2 GiB). All must agree on the counts.
3. prints the medians and, for `audit` against each bare query, the median of the rounds' paired
   ratios, of wall time (the target) and of CPU time (steadier on a shared machine).

Targets (issue 14): `audit` within 1.25x `bare` (wall, median of paired rounds) on both formats,
its peak memory under 1 GiB. Exits 1 if one is missed. The machine is shared: rerun when figures
look noisy.
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
MAX_RATIO = 1.25
MAX_MEMORY = 1024**3
BENCH_SECRET = "bench-only-signing-secret-0123456789abcd"

_BARE = """
import sys, duckdb
from compliance_bake.inputs.zipindex import zip_index
path, since, now = sys.argv[1], sys.argv[2], sys.argv[3]
index = zip_index()
con = duckdb.connect()
con.execute("SET TimeZone = 'UTC'")
con.execute("SET enable_progress_bar = false")
con.execute(
    "CREATE TABLE zips AS SELECT unnest($1::VARCHAR[]) AS zip, unnest($2::VARCHAR[]) AS state",
    list(index.zip_states()),
)
read = (
    f"read_csv('{path}', header = true, all_varchar = true)" if path.endswith(".csv")
    else f"read_parquet('{path}')"
)
total, inside, *_ = con.execute(f'''
    SELECT count(*),
           count(*) FILTER (WHERE try_cast(enriched_at AS TIMESTAMPTZ)
                            BETWEEN '{since}'::TIMESTAMPTZ AND '{now}'::TIMESTAMPTZ),
           COUNTS
    FROM {read} p LEFT JOIN zips z ON z.zip = p.zip
''').fetchall()[0]
print(total, inside)
"""
# The same read as the audit's: every column it checks.
BARE = _BARE.replace("COUNTS", "count(z.zip) FILTER (WHERE z.state = p.state), count(p.partner)")
# Issue 14's bare query: `zip` and `enriched_at` only.
BARE_2 = _BARE.replace("COUNTS", "count(z.zip)")
BARES = {"bare": BARE, "bare-2": BARE_2}

PANDAS = """
import sys
import pandas as pd
from compliance_bake.inputs.zipindex import zip_index
path, since, now = sys.argv[1], sys.argv[2], sys.argv[3]
index = zip_index()
codes, states = index.zip_states()
zips = pd.DataFrame({"zip": codes, "zip_state": states})
if path.endswith(".csv"):
    plays = pd.read_csv(path, dtype=str, keep_default_na=False)
else:
    plays = pd.read_parquet(path)
enriched = pd.to_datetime(plays["enriched_at"], utc=True, errors="coerce", format="ISO8601")
inside = enriched.between(pd.Timestamp(since), pd.Timestamp(now))
merged = plays[["zip", "state"]].merge(zips, on="zip", how="left")
print(len(plays), int(inside.sum()))
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


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, int, str, float]:
    """Wall seconds, peak RSS in bytes, stdout and CPU seconds of one child process alone
    (bench/peak.py: through a fresh launcher, so no peak is inherited from this process)."""
    result = measure(argv, env)
    if result.exit_code != 0:
        raise SystemExit(f"{argv[:4]} exited {result.exit_code}: {result.stderr}")
    return result.wall_s, result.peak_bytes, result.stdout, result.cpu_s


def _window() -> tuple[str, str]:
    from datetime import datetime, timedelta

    now = datetime.fromisoformat(NOW.replace("Z", "+00:00"))
    return (now - timedelta(days=DAYS)).isoformat(), now.isoformat()


def _round(path: Path, n: int, pandas: bool, env: dict[str, str], out: Path) -> dict[str, Any]:
    """One round: name -> (wall s, peak bytes, (total, in window), CPU s)."""
    since, now = _window()
    py = sys.executable
    figures: dict[str, Any] = {}

    def audit() -> None:
        wall, peak, text, cpu = _timed(
            [py, "-m", "compliance_bake", "audit", "deep", "--plays", str(path), "--now", NOW,
             "--out", str(out), "--json"],
            env,
        )  # fmt: skip
        summary = json.loads(text)
        if not summary["ok"]:
            raise SystemExit(f"the benchmark plays did not audit clean: {summary['byReason']}")
        window = summary["zipWindow"]
        figures["audit"] = (wall, peak, (window["totalPlays"], window["inWindowPlays"]), cpu)

    def query(name: str, code: str) -> None:
        wall, peak, text, cpu = _timed([py, "-c", code, str(path), since, now], env)
        total, inside = (int(x) for x in text.split())
        figures[name] = (wall, peak, (total, inside), cpu)

    if n % 2 == 0:
        audit()
    for name, code in BARES.items():
        query(name, code)
    if n % 2 == 1:
        audit()
    if pandas and n == 0:
        query("pandas", PANDAS)
    counts = {name: f[2] for name, f in figures.items()}
    if len(set(counts.values())) != 1:
        raise SystemExit(f"the implementations disagree on (total, in window): {counts}")
    return figures


def _report(fmt: str, path: Path, rounds: list[dict[str, Any]]) -> list[str]:
    """Print one format's figures; the targets it missed."""
    total, inside = rounds[0]["audit"][2]
    size = path.stat().st_size / 1024**2
    print(f"\n{fmt}: {path.name}, {size:,.0f} MiB, {inside:,}/{total:,} plays in the window")
    names = [name for name in ("bare", "bare-2", "audit", "pandas") if name in rounds[0]]
    median = {name: statistics.median(r[name][0] for r in rounds if name in r) for name in names}
    cpu = {name: statistics.median(r[name][3] for r in rounds if name in r) for name in names}
    peak = {name: max(r[name][1] for r in rounds if name in r) for name in names}
    for name in names:
        runs = ", ".join(f"{r[name][0]:.2f}" for r in rounds if name in r)
        print(
            f"  {name:7} {median[name]:7.2f} s  cpu {cpu[name]:6.2f} s  peak "
            f"{peak[name] / 1024**2:6.0f} MiB  x{median[name] / median['bare']:.2f} of bare   "
            f"(runs: {runs})"
        )
    missed = []
    for bare in ("bare", "bare-2"):
        ratio = statistics.median(r["audit"][0] / r[bare][0] for r in rounds)
        by_cpu = statistics.median(r["audit"][3] / r[bare][3] for r in rounds)
        target = f"(target <= {MAX_RATIO})" if bare == "bare" else "(issue 14's query)"
        print(
            f"  audit/{bare}, median of paired rounds: {ratio:.2f} {target}; "
            f"of CPU time: {by_cpu:.2f}"
        )
        if bare == "bare" and ratio > MAX_RATIO:
            missed.append(f"{fmt}: audit {ratio:.2f}x bare > {MAX_RATIO}")
    if peak["audit"] >= MAX_MEMORY:
        missed.append(f"{fmt}: audit peak {peak['audit'] / 1024**2:.0f} MiB >= 1 GiB")
    return missed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--formats", default="csv,parquet")
    parser.add_argument("--no-pandas", action="store_true", help="skip the (slow) pandas run")
    args = parser.parse_args()
    env = {**os.environ, "REPORT_SIGNING_SECRET": BENCH_SECRET, "PYTHONPATH": str(ROOT)}
    env.pop("SOURCE_DATE_EPOCH", None)
    missed: list[str] = []
    print(f"{args.rows:,} plays, window {DAYS} days to {NOW}, {os.cpu_count()} CPUs")
    print(f"load average before: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for fmt in args.formats.split(","):
        path = _data(args.rows, fmt)
        with tempfile.TemporaryDirectory() as tmp:
            rounds = [
                _round(path, n, not args.no_pandas, env, Path(tmp)) for n in range(args.repeat)
            ]
        missed += _report(fmt, path, rounds)
    print(f"\nload average after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if missed:
        print("\nTARGET MISSED: " + "; ".join(missed))
        sys.exit(1)
    print("\nall targets met")


if __name__ == "__main__":
    main()
