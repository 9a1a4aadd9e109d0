"""Benchmark: `diff` of two 500,000-row snapshots, in two scenarios, against `verify` of each side.

    python bench/diff_bench.py [--states 50] [--partners 10000] [--seed 0] [--repeat 3]

Generates OLD's fixtures and two NEW ones: `aligned`, every licence of ten partners revoked (the
rows line up, as on most days); `keyed`, that and one partner removed (the rows no longer line up
and the diff matches pairs by key). Bakes the three, then for each scenario measures, each in a
fresh process (bench/bake_bench.py's children, tests/support/peak.py's launcher): `run_diff` OLD
NEW with its JSON rendering, and `verify_source` of OLD and of NEW. Prints CPU (user + system)
beside wall time and the peak RSS, medians of --repeat runs, and checks: diff CPU <= verify CPU
of OLD plus that of NEW, every peak < 1 GiB. Exits 1 if one is missed.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent))

from bench.bake_bench import DATA_DIR, MAX_PEAK, _line, _measure, _median  # noqa: E402

SCENARIOS = {
    "aligned": "every licence of ten partners revoked (the rows line up)",
    "keyed": "the same, and one partner removed (rows matched by key)",
}


def _prepare(states: int, partners: int, seed: int) -> tuple[Path, dict[str, Path]]:
    sys.path.insert(0, str(BENCH_DIR.parent))
    from tests.support.gen_fixtures import generate, write_fixtures

    root = DATA_DIR / f"diff-{states}x{partners}-seed{seed}"
    licences, geo = generate(states, partners, seed)
    write_fixtures(root / "fixtures-old", licences, geo)
    for partner in licences["partners"][100:110]:
        partner["licences"] = []
    write_fixtures(root / "fixtures-aligned", licences, geo)
    gone = licences["partners"].pop(partners // 2)["nodeId"]
    geo["partners"] = [p for p in geo["partners"] if p["nodeId"] != gone]
    write_fixtures(root / "fixtures-keyed", licences, geo)
    outs = {}
    for side in ("old", *SCENARIOS):
        out = root / ("out-old" if side == "old" else f"out-new-{side}")
        shutil.rmtree(out, ignore_errors=True)
        _measure("bake", root / f"fixtures-{side}", out)
        outs[side] = out
    old = outs.pop("old")
    return old, outs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--states", type=int, default=50, help="states, 2 to 50 (default 50)")
    parser.add_argument("--partners", type=int, default=10_000, help="partners (default 10000)")
    parser.add_argument("--seed", type=int, default=0, help="fixture seed (default 0)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each, median taken (3)")
    args = parser.parse_args(argv)
    print(f"baking three {args.states * args.partners:,}-row snapshots ...", flush=True)
    old, news = _prepare(args.states, args.partners, args.seed)
    repeat = max(1, args.repeat)
    verify_old = [_measure("verify", old) for _ in range(repeat)]
    met = True
    for scenario, new in news.items():
        verify_new = [_measure("verify", new) for _ in range(repeat)]
        diffs = [_measure("diff", old, new) for _ in range(repeat)]
        print(f"\n{scenario}: {SCENARIOS[scenario]}; changes: {diffs[0]['counts']}")
        for name, runs in (("verify OLD", verify_old), ("verify NEW", verify_new), ("diff", diffs)):
            print(_line(name, runs))
        both = _median(verify_old, "cpu") + _median(verify_new, "cpu")
        diff_cpu = _median(diffs, "cpu")
        peak = max(run["peak"] for run in [*verify_old, *verify_new, *diffs])
        cpu_ok, peak_ok = diff_cpu <= both, peak < MAX_PEAK
        print(f"{'met' if cpu_ok else 'MISSED':>6}: diff CPU {diff_cpu:.2f} s <= {both:.2f} s")
        print(f"{'met' if peak_ok else 'MISSED':>6}: peak {peak / 1024**2:,.0f} MiB < 1 GiB")
        met = met and cpu_ok and peak_ok
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
