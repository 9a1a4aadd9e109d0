"""Benchmark: cost as work grows. The bake at 50k, 500k and 2M rows; the audit at 1M and 10M plays.

    python bench/scale_bench.py [--sizes 1000,10000,40000] [--states 50] [--plays 1000000,10000000]

For each size (partners; rows = 50 states x partners) the fixtures are generated
(tests/support/gen_fixtures.py, cached in bench/.data/) and the real command line runs once in a
fresh child, `python -m compliance_bake bake snapshot --fixtures F --out O --now ...`, measured by
tests/support/peak.py (that child's own wall time and peak RSS). Printed: seconds and microseconds
per row, peak RSS and bytes per row, and each per-row figure as a multiple of the smallest size's.
A straight line (no step growing faster than linearly) keeps the per-row multiples near 1; the
fixed start-up (imports, the ZIP database) makes the smallest size's per-row figures the highest.
Then `audit deep` over CSV plays of each --plays size (bench/gen_plays.py, generated once in a
child of its own and cached in bench/.data/), the same way (`--plays none` skips it).
Information only: no target, exit 0 unless a bake fails. The machine is shared: rerun if noisy.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent))
from tests.support.gen_fixtures import generate, write_fixtures  # noqa: E402
from tests.support.peak import measure  # noqa: E402

DATA_DIR = BENCH_DIR / ".data"
NOW = "2026-11-22T04:06:00Z"
BENCH_SECRET = "bench-only-signing-secret-0123456789abcd"


def _fixtures(states: int, partners: int) -> Path:
    folder = DATA_DIR / f"fixtures-{states}x{partners}-seed0"
    if not (folder / "geo.json").exists():
        write_fixtures(folder, *generate(states, partners, 0))
    return folder


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,40000", help="partners per size")
    parser.add_argument("--states", type=int, default=50)
    parser.add_argument("--plays", default="1000000,10000000", help="plays per audit size")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPORT_SIGNING_SECRET")}
    env["REPORT_SIGNING_SECRET"] = BENCH_SECRET
    env.pop("SOURCE_DATE_EPOCH", None)
    out = DATA_DIR / "scale-out"
    rows_of: list[int] = []
    figures: list[tuple[float, int]] = []
    header = ("rows", "seconds", "us/row", "x", "peak MiB", "B/row", "x")
    print("{:>10} {:>8} {:>7} {:>5} {:>9} {:>6} {:>5}".format(*header))
    for partners in (int(size) for size in args.sizes.split(",")):
        fixtures = _fixtures(args.states, partners)
        shutil.rmtree(out, ignore_errors=True)
        command = [sys.executable, "-m", "compliance_bake", "bake", "snapshot"]
        command += ["--fixtures", str(fixtures), "--out", str(out), "--now", NOW, "--json"]
        result = measure(command, env)
        if result.exit_code != 0:
            print(f"the bake of {partners} partners exited {result.exit_code}: {result.stderr}")
            return 1
        rows = args.states * partners
        rows_of.append(rows)
        figures.append((result.wall_s, result.peak_bytes))
        base_rows, (base_s, base_peak) = rows_of[0], figures[0]
        per_row_s, per_row_b = result.wall_s / rows, result.peak_bytes / rows
        print(
            f"{rows:>10,} {result.wall_s:>8.2f} {per_row_s * 1e6:>7.2f} "
            f"{per_row_s / (base_s / base_rows):>5.2f} {result.peak_bytes / 1024**2:>9,.0f} "
            f"{per_row_b:>6.0f} {per_row_b / (base_peak / base_rows):>5.2f}"
        )
    shutil.rmtree(out, ignore_errors=True)
    if args.plays != "none":
        return _audits([int(size) for size in args.plays.split(",")], env)
    return 0


def _plays(rows: int) -> Path:
    path = DATA_DIR / f"plays-{rows}.csv"
    if not path.exists():
        partial = path.with_name(f".{path.name}.partial.csv")
        generator = [sys.executable, str(BENCH_DIR / "gen_plays.py"), "--rows", str(rows)]
        subprocess.run([*generator, "--out", str(partial), "--now", NOW], check=True)
        partial.replace(path)
    return path


def _audits(sizes: list[int], env: dict[str, str]) -> int:
    header = ("plays", "seconds", "us/play", "x", "peak MiB", "B/play", "x")
    print("\n{:>10} {:>8} {:>7} {:>5} {:>9} {:>6} {:>5}".format(*header))
    base: tuple[int, float, int] | None = None
    with tempfile.TemporaryDirectory() as tmp:
        for rows in sizes:
            command = [sys.executable, "-m", "compliance_bake", "audit", "deep"]
            command += ["--plays", str(_plays(rows)), "--now", NOW, "--out", tmp, "--json"]
            result = measure(command, env)
            if result.exit_code != 0:
                print(f"the audit of {rows} plays exited {result.exit_code}: {result.stderr}")
                return 1
            base = base or (rows, result.wall_s, result.peak_bytes)
            per_s, per_b = result.wall_s / rows, result.peak_bytes / rows
            print(
                f"{rows:>10,} {result.wall_s:>8.2f} {per_s * 1e6:>7.3f} "
                f"{per_s / (base[1] / base[0]):>5.2f} {result.peak_bytes / 1024**2:>9,.0f} "
                f"{per_b:>6.0f} {per_b / (base[2] / base[0]):>5.2f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
