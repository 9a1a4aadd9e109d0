"""Benchmark: `audit deep` against a hand-written DuckDB query of the same classification.

    python bench/audit_bench.py [--rows 1000000,10000000] [--formats csv,parquet] [--repeat 1]
        [--kinds clean,dirty]

The plays are bench/gen_plays.py's, generated once into bench/.data/ (git-ignored): clean, and
dirty (about 1 play in 100 violating, four reasons). For each size, kind and format, --repeat
rounds each time two fresh child processes one after the other (the audit first in even rounds,
last in odd ones):
- `audit`: the real command line, `python -m compliance_bake audit deep --plays FILE --now ...
  --json` (start-up, licences, the ZIP index, the one pass, the report written atomically);
- `baseline`: one hand-written DuckDB query in a bare Python process, as a data engineer would
  write it to compute the audit's numbers: the plays read as text, `enriched_at` checked with
  the audit's ISO 8601 regex and cast, the ZIP, state and licence joins, and one row of counts
  (total, in window, not enriched, one per reason). It lists no violating play and cannot count
  a malformed row; the audit does both.
First, the start-up: `audit deep` on a file of two plays, the median CPU of 5 runs (target:
at most 0.35 s). Each child's CPU time (user + system, all threads) and wall time come from
`os.wait4` through a fresh launcher (tests/support/peak.py). Both must agree on every count. Prints,
per case, the medians and the median of the rounds' paired ratios audit/baseline, of CPU and of
wall time, and per size and format the audit's CPU dirty/clean: each round audits the clean and
the dirty file one after the other, and the ratio is the median of the rounds' paired ratios.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.support.peak import measure  # noqa: E402

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
DATA_DIR = BENCH_DIR / ".data"
NOW = "2026-11-22T04:06:00Z"
DAYS = 90
BENCH_SECRET = "bench-only-signing-secret-0123456789abcd"

# The baseline: one query, written by hand. argv: plays file, format, since, now (ISO 8601).
BASELINE = """
import json, sys
import duckdb
from compliance_bake.audit.sql import INSTANT
from compliance_bake.inputs.zipindex import zip_index
from compliance_bake.resources import demo_fixtures_dir

path, fmt, since, now = sys.argv[1:5]
licences = json.loads((demo_fixtures_dir() / "licences.json").read_text())
con = duckdb.connect()
con.execute("SET TimeZone = 'UTC'")
con.execute("SET enable_progress_bar = false")  # it would print on stdout, as the audit's would
zips, states = zip_index().zip_states()
con.execute("CREATE TABLE zips AS SELECT unnest($z) AS zip, unnest($s) AS state",
            {"z": zips, "s": states})
regulated = sorted(s["code"] for s in licences["states"])
known = sorted(zip_index().jurisdictions | set(regulated))
con.execute("CREATE TABLE states AS SELECT unnest($s) AS state, unnest($r) AS regulated",
            {"s": known, "r": [s in regulated for s in known]})
pairs = [(p["nodeId"], x["state"]) for p in licences["partners"]
         for x in p["licences"] if x["status"] == "active"]
con.execute("CREATE TABLE licences AS SELECT unnest($p) AS partner, unnest($s) AS state",
            {"p": [p for p, _ in pairs], "s": [s for _, s in pairs]})
source = (f"read_parquet('{path}')" if fmt == "parquet"
          else f"read_csv('{path}', header = true, all_varchar = true)")
reasons = ["malformed-timestamp", "enriched-in-future", "malformed-zip", "unknown-state",
           "zip-not-real", "zip-in-other-state", "state-not-regulated", "partner-not-licensed"]
row = con.execute(f'''
WITH p AS (
  SELECT partner, state, zip, CAST(enriched_at AS VARCHAR) AS enriched_at,
         CASE WHEN regexp_full_match(CAST(enriched_at AS VARCHAR), '{INSTANT}')
              THEN try_cast(CAST(enriched_at AS VARCHAR) AS TIMESTAMPTZ) END AS ts
  FROM {source}
), c AS (
  SELECT coalesce(p.enriched_at, '') = '' AS not_enriched,
         p.ts BETWEEN $since::TIMESTAMPTZ AND $now::TIMESTAMPTZ AS in_window,
         CASE
           WHEN coalesce(p.enriched_at, '') <> '' AND p.ts IS NULL THEN 'malformed-timestamp'
           WHEN p.ts > $now::TIMESTAMPTZ THEN 'enriched-in-future'
           WHEN NOT regexp_full_match(coalesce(p.zip, ''), '[0-9]{{5}}') THEN 'malformed-zip'
           WHEN s.state IS NULL THEN 'unknown-state'
           WHEN p.ts IS NULL OR p.ts < $since::TIMESTAMPTZ THEN NULL
           WHEN z.zip IS NULL THEN 'zip-not-real'
           WHEN z.state <> p.state THEN 'zip-in-other-state'
           WHEN NOT s.regulated THEN 'state-not-regulated'
           WHEN l.partner IS NULL THEN 'partner-not-licensed'
         END AS reason
  FROM p
  LEFT JOIN zips z ON z.zip = p.zip
  LEFT JOIN states s ON s.state = p.state
  LEFT JOIN licences l ON l.partner = p.partner AND l.state = p.state
)
SELECT count(*), count(*) FILTER (WHERE in_window), count(*) FILTER (WHERE not_enriched),
       {", ".join(f"count(*) FILTER (WHERE reason = '{r}')" for r in reasons)}
FROM c''', {"since": since, "now": now}).fetchone()
print(json.dumps(dict(zip(["total", "in_window", "not_enriched", *reasons], row))))
"""


def _data(rows: int, fmt: str, dirty: bool = False) -> Path:
    """The plays file of this size, format and kind (generated once, in a child of its own)."""
    path = DATA_DIR / f"plays-{rows}{'-dirty' if dirty else ''}.{fmt}"
    if not path.exists():
        print(f"generating {path.name} (once; kept in bench/.data/) ...", flush=True)
        partial = path.with_name(f".{path.name}.partial{path.suffix}")
        generator = [sys.executable, str(BENCH_DIR / "gen_plays.py"), "--rows", str(rows)]
        generator += ["--out", str(partial), "--now", NOW, *(["--dirty"] if dirty else [])]
        subprocess.run(generator, check=True, env={"PYTHONPATH": str(ROOT)})
        partial.replace(path)
    return path


def _window() -> tuple[str, str]:
    from datetime import datetime, timedelta

    now = datetime.fromisoformat(NOW.replace("Z", "+00:00"))
    return (now - timedelta(days=DAYS)).isoformat(), now.isoformat()


def _child(
    argv: list[str], env: dict[str, str], codes: tuple[int, ...]
) -> tuple[float, float, str]:
    result = measure(argv, env)
    if result.exit_code not in codes:
        raise SystemExit(f"{argv[:5]} exited {result.exit_code}: {result.stderr}")
    return result.cpu_s, result.wall_s, result.stdout


def _audit_counts(summary: dict[str, Any]) -> dict[str, int]:
    window = summary["zipWindow"]
    counts = {
        "total": window["totalPlays"],
        "in_window": window["inWindowPlays"],
        "not_enriched": summary["notEnrichedPlays"],
    }
    counts.update({k: v for k, v in summary["byReason"].items() if k != "malformed-row"})
    return counts


def _round(path: Path, fmt: str, env: dict[str, str], out: Path, first: str) -> dict[str, Any]:
    since, now = _window()
    audit = [sys.executable, "-m", "compliance_bake", "audit", "deep", "--plays", str(path),
             "--now", NOW, "--days", str(DAYS), "--out", str(out), "--json"]  # fmt: skip
    baseline = [sys.executable, "-c", BASELINE, str(path), fmt, since, now]
    found: dict[str, tuple[float, float, str]] = {}
    for name in ("audit", "baseline") if first == "audit" else ("baseline", "audit"):
        argv = audit if name == "audit" else baseline
        found[name] = _child(argv, env, (0, 1) if name == "audit" else (0,))
    summary = json.loads(found["audit"][2])
    if summary["byReason"]["malformed-row"]:
        raise SystemExit(f"{path.name}: the audit found malformed rows; the baseline cannot")
    ours, theirs = _audit_counts(summary), json.loads(found["baseline"][2])
    if ours != theirs:
        raise SystemExit(f"{path.name}: the counts disagree: audit {ours}, baseline {theirs}")
    return {n: (cpu, wall) for n, (cpu, wall, _) in found.items()} | {"counts": ours}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1000000,10000000")
    parser.add_argument("--formats", default="csv,parquet")
    parser.add_argument("--kinds", default="clean,dirty")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    env = {"PYTHONPATH": str(ROOT), "REPORT_SIGNING_SECRET": BENCH_SECRET, "NO_COLOR": "1"}
    with tempfile.TemporaryDirectory() as scratch:
        two = Path(scratch) / "two.csv"
        demo = (ROOT / "fixtures" / "plays.csv").read_text().splitlines(keepends=True)
        two.write_text("".join(demo[:3]))
        small = [sys.executable, "-m", "compliance_bake", "audit", "deep", "--plays", str(two),
                 "--now", NOW, "--out", str(Path(scratch) / "o"), "--json"]  # fmt: skip
        cpus = sorted(_child(small, env, (0,))[0] for _ in range(5))
        print(f"start-up: audit deep on 2 plays, median CPU of 5 runs {statistics.median(cpus):.3f}"
              f" s (runs: {', '.join(f'{c:.3f}' for c in cpus)}; target <= 0.35 s)\n")  # fmt: skip
    header = "audit/baseline CPU / wall (median of paired rounds); audit and baseline medians"
    print(f"{header}\n{'plays':>10} {'kind':5} {'format':7} {'CPU':>6} {'wall':>6}   "
          f"{'audit CPU':>9} {'wall':>6}  {'base CPU':>8} {'wall':>6}  violations")  # fmt: skip
    # Per size and format, each round runs every kind once, so dirty/clean is paired too.
    dirty_clean: dict[tuple[int, str], float] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for rows in (int(r) for r in args.rows.split(",")):
            for fmt in args.formats.split(","):
                kinds = args.kinds.split(",")
                paths = {kind: _data(rows, fmt, dirty=kind == "dirty") for kind in kinds}
                rounds: dict[str, list[dict[str, Any]]] = {kind: [] for kind in kinds}
                for i in range(args.repeat):
                    for kind in kinds:
                        first = "audit" if i % 2 else "x"
                        out = Path(scratch) / "out"
                        rounds[kind].append(_round(paths[kind], fmt, env, out, first))
                for kind in kinds:
                    _print_case(rows, kind, fmt, rounds[kind])
                if "clean" in rounds and "dirty" in rounds:
                    pairs = zip(rounds["dirty"], rounds["clean"], strict=True)
                    ratios = [d["audit"][0] / c["audit"][0] for d, c in pairs]
                    dirty_clean[(rows, fmt)] = statistics.median(ratios)
    print("\naudit CPU, dirty/clean (median of the rounds' paired ratios):")
    for (rows, fmt), ratio in dirty_clean.items():
        print(f"{rows:>10,} {fmt:7} {ratio:5.2f}x")


def _print_case(rows: int, kind: str, fmt: str, rounds: list[dict[str, Any]]) -> None:
    """One line: the medians of the rounds, and the median of their paired ratios."""

    def med(name: str, i: int) -> float:
        return statistics.median(r[name][i] for r in rounds)

    def ratio(i: int) -> float:
        return statistics.median(r["audit"][i] / r["baseline"][i] for r in rounds)

    bad = sum(v for k, v in rounds[0]["counts"].items() if "-" in k)
    print(f"{rows:>10,} {kind:5} {fmt:7} {ratio(0):5.2f}x {ratio(1):5.2f}x   "
          f"{med('audit', 0):8.2f}s {med('audit', 1):5.2f}s  "
          f"{med('baseline', 0):7.2f}s {med('baseline', 1):5.2f}s  {bad:,}",
          flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
