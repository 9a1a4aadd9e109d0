"""Benchmark: `diff` of two 500,000-row snapshots against loading the two files with orjson alone.

    python bench/diff_bench.py [--states 50] [--partners 10000] [--seed 0] [--repeat 3]

One run does everything:
1. generates the fixtures (bench/gen_fixtures.py) into bench/.data/ (git-ignored), and two
   copies with known changes, one per scenario: `aligned`, every licence of ten partners
   revoked (the rows line up, as on most days); `keyed`, that and one partner removed (the rows
   no longer line up and the diff matches pairs by key, its slow path);
2. bakes the three with the CLI (a fixed bench-only secret, the new ones a day later);
3. for each scenario, in fresh child processes (subprocesses, so each peak RSS is one diff's
   alone), --repeat times: times `compliance_bake.diff.run.run_diff` end to end (read, parse,
   schema-validate and authenticate both sides, compare; the JSON rendering of the changes
   too) and reads the peak RSS right after it; then, in the same process, times the baseline
   three times (best taken): `orjson.loads` of the two files' bytes, read from disk.

Timings on a shared machine vary by tens of percent from run to run, so each diff is compared
with the baseline measured right after it in the same process; the ratios printed are medians
of those paired ratios, of wall time and of the CPU time of the diff's own process (each side
is parsed and checked in a child of its own while the diff's process compares the rows: the
children's CPU is printed apart, and so is their peak RSS, the largest child's).
Memory is measured on one more, untimed run of `compliance-bake diff OLD NEW --json`: the peak
of the PSS of all its processes summed, sampled every 10 ms (bench/peak.py `tree_peak`), since
one process's peak RSS leaves its children out and counts their shared pages in each.
Targets: the diff within 2 s, and under 1 GiB for all its processes together. Exits 1 if one
is missed (the figures are printed either way).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
DATA_DIR = BENCH_DIR / ".data"
BENCH_SECRET = "bench-only-signing-secret-0123456789abcd"
OLD_NOW, NEW_NOW = "2026-11-22T04:06:00Z", "2026-11-23T04:06:00Z"
MAX_SECONDS = 2.0
MAX_MEMORY = 1024**3
BASELINE_RUNS = 3
SCENARIOS = {
    "aligned": "every licence of ten partners revoked (the rows line up)",
    "keyed": "the same, and one partner removed (rows matched by key)",
}


def _peak_rss() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPORT_SIGNING_SECRET")}
    env["REPORT_SIGNING_SECRET"] = BENCH_SECRET
    env.pop("SOURCE_DATE_EPOCH", None)
    return env


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _baseline(old: Path, new: Path) -> tuple[float, float]:
    """Best wall time of loading both files with orjson, and the CPU time of that run."""
    import orjson

    best = (float("inf"), 0.0)
    for _ in range(BASELINE_RUNS):
        start, cpu = time.perf_counter(), time.process_time()
        documents = [orjson.loads(old.read_bytes()), orjson.loads(new.read_bytes())]
        best = min(best, (time.perf_counter() - start, time.process_time() - cpu))
        del documents
    return best


def _child(old: Path, new: Path, result: Path) -> int:
    import json as stdlib_json

    from compliance_bake.diff.run import run_diff
    from compliance_bake.signing.secret import resolve_secret

    secret = resolve_secret(None)
    start, cpu, children = time.perf_counter(), time.process_time(), _children_cpu()
    diff = run_diff(str(old), str(new), secret=secret)
    text = stdlib_json.dumps(diff.as_json())
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
    children_seconds = _children_cpu() - children
    peak = _peak_rss()
    children_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    baseline, baseline_cpu = _baseline(
        old / "api" / "compliance.json", new / "api" / "compliance.json"
    )
    report = {
        "seconds": seconds,
        "cpu": cpu_seconds,
        "children_cpu": children_seconds,
        "peak": peak,
        "children_peak": children_peak,
        "counts": stdlib_json.loads(text)["counts"],
        "authenticated": diff.authenticated,
        "baseline": baseline,
        "baseline_cpu": baseline_cpu,
    }
    result.write_text(stdlib_json.dumps(report))
    return 0


def _bake(root: Path, side: str, now: str) -> Path:
    out = root / f"out-{side}"
    shutil.rmtree(out, ignore_errors=True)
    command = [sys.executable, "-m", "compliance_bake", "bake", "snapshot", "--now", now]
    command += ["--fixtures", str(root / f"fixtures-{side}"), "--out", str(out)]
    done = subprocess.run(command, env=_env(), check=False, stdout=subprocess.DEVNULL)
    if done.returncode not in (0, 1):
        raise SystemExit(f"baking the {side} side failed with exit code {done.returncode}")
    return out


def _prepare(states: int, partners: int, seed: int) -> tuple[Path, dict[str, Path]]:
    """The old side, and the new sides by scenario: `aligned` (ten partners' licences revoked:
    the rows line up) and `keyed` (that, and one partner removed: matched by key)."""
    sys.path.insert(0, str(BENCH_DIR))
    from gen_fixtures import generate, write_fixtures

    root = DATA_DIR / f"diff-{states}x{partners}-seed{seed}"
    licences, geo = generate(states, partners, seed)
    write_fixtures(root / "fixtures-old", licences, geo)
    for partner in licences["partners"][100:110]:
        partner["licences"] = []
    write_fixtures(root / "fixtures-aligned", licences, geo)
    gone = licences["partners"].pop(partners // 2)["nodeId"]
    geo["partners"] = [p for p in geo["partners"] if p["nodeId"] != gone]
    write_fixtures(root / "fixtures-keyed", licences, geo)
    old = _bake(root, "old", OLD_NOW)
    return old, {name: _bake(root, name, NEW_NOW) for name in SCENARIOS}


def _seconds(runs: list[dict[str, Any]], name: str) -> str:
    return ", ".join(f"{run[name]:.2f}" for run in runs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--states", type=int, default=50, help="states, 2 to 50 (default 50)")
    parser.add_argument("--partners", type=int, default=10_000, help="partners (default 10000)")
    parser.add_argument("--seed", type=int, default=0, help="fixture seed (default 0)")
    parser.add_argument("--repeat", type=int, default=3, help="timed diffs, best taken (3)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--old", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--new", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return _child(args.old, args.new, args.result)

    print(f"baking three {args.states * args.partners:,}-row snapshots ...", flush=True)
    old, news = _prepare(args.states, args.partners, args.seed)
    met = True
    for scenario, new in news.items():
        print(f"\n{scenario}: {SCENARIOS[scenario]}")
        met = _scenario(old, new, args.repeat) and met
    return 0 if met else 1


def _scenario(old: Path, new: Path, repeat: int) -> bool:
    runs: list[dict[str, Any]] = []
    for index in range(repeat):
        result = DATA_DIR / f"diff-result-{index}.json"
        command = [sys.executable, str(Path(__file__).resolve()), "--child"]
        command += ["--old", str(old), "--new", str(new), "--result", str(result)]
        done = subprocess.run(command, env=_env(), check=False)
        if done.returncode != 0:
            raise SystemExit(f"the diff child failed with exit code {done.returncode}")
        runs.append(json.loads(result.read_text()))
    best = min(runs, key=lambda r: r["seconds"])
    ratio = statistics.median(r["seconds"] / r["baseline"] for r in runs)
    cpu_ratio = statistics.median(r["cpu"] / r["baseline_cpu"] for r in runs)
    peak = max(r["peak"] for r in runs)
    children_peak = max(r["children_peak"] for r in runs)
    print(f"changes: {best['counts']} (authenticated: {best['authenticated']})")
    print(f"diff (wall, s):          {_seconds(runs, 'seconds')}")
    children_cpu = _seconds(runs, "children_cpu")
    print(f"diff (CPU, s):           {_seconds(runs, 'cpu')} (+ children {children_cpu})")
    baseline_cpu = _seconds(runs, "baseline_cpu")
    print(f"orjson.loads x2 (s):     {_seconds(runs, 'baseline')} (CPU {baseline_cpu})")
    print(f"ratio diff/baseline:     {ratio:.2f}x wall, {cpu_ratio:.2f}x CPU of the diff process")
    print(
        f"peak RSS of a diff:      {peak / 1024**2:,.0f} MiB, its own (its children, each "
        f"parsing and checking a side: {children_peak / 1024**2:,.0f} MiB, the largest)"
    )
    tree = _tree_memory(old, new)
    print(
        f"memory of a diff:        {tree.pss_bytes / 1024**2:,.0f} MiB, the peak of its "
        f"{tree.processes} processes' PSS summed (`compliance-bake diff`, sampled every 10 ms)"
    )
    time_ok, memory_ok = best["seconds"] <= MAX_SECONDS, tree.pss_bytes < MAX_MEMORY
    verdict = "met" if time_ok else "MISSED"
    print(f"target <= {MAX_SECONDS:.0f} s: {verdict} (best {best['seconds']:.2f} s)")
    print(f"target < 1 GiB (all its processes): {'met' if memory_ok else 'MISSED'}")
    return bool(time_ok and memory_ok)


def _tree_memory(old: Path, new: Path) -> Any:
    """The memory of the whole diff: it forks a child per side, and each process's own peak RSS
    leaves the others out (and counts their shared pages in each). One more run, untimed."""
    from bench.peak import tree_peak

    command = [sys.executable, "-m", "compliance_bake", "diff", str(old), str(new), "--json"]
    tree = tree_peak(command, env=_env())
    if tree.exit_code not in (0, 1):
        raise SystemExit(f"the sampled diff failed with exit code {tree.exit_code}")
    return tree


if __name__ == "__main__":
    sys.exit(main())
