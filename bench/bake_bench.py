"""Benchmark: CPU and wall time of bake, verify and diff on 500,000-row snapshots, and their peaks.

    python bench/bake_bench.py [--states 50] [--partners 10000] [--seed 0] [--repeat 5]

One run does everything:
1. generates two fixture sets (tests/support/gen_fixtures.py) into bench/.data/ (git-ignored):
   OLD, and NEW with every licence of ten partners revoked and one partner removed (so the diff
   matches the rows by key, its costlier comparison);
2. measures each operation in a fresh child process of its own (tests/support/peak.py: a small
   launcher starts it, so its peak RSS is its own), --repeat times, taking the median: the child
   imports what the CLI imports, then times the operation alone with `time.process_time()` (CPU:
   user plus system, every thread of the process) and `time.perf_counter()` (wall):
   - bake: `run_bake` of OLD into out-old/ (fixture load, board, matrix, signing, validation,
     rendering, atomic write); NEW is baked once into out-new/ the same way;
   - floor: what a signed bake of this report cannot avoid, on the snapshot the bake wrote
     (loaded before the clock starts): the bytes of the three JSON files in their layout (the
     very bytes the bake wrote), the snapshot's canonical bytes and two SHA3-256 passes over
     them (its shadow and integrity digests each cover every row), the four files written and
     fsynced;
   - verify: `verify_source` of out-old/ and of out-new/ with the bench secret (each snapshot
     read through the one path, then every check);
   - diff: `run_diff` of out-old/ and out-new/, with its JSON rendering.
3. prints each figure, CPU beside wall, and checks the targets: bake CPU <= 3x the floor's CPU;
   verify CPU (of OLD) <= the bake's CPU; diff CPU <= verify's CPU on OLD plus on NEW; every
   peak RSS < 1 GiB. Exits 1 if one is missed (the figures are printed either way).

CPU is the figure checked, not wall time: it does not depend on how many cores are idle, and
no command forks or threads to lower it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent))
DATA_DIR = BENCH_DIR / ".data"
OLD_NOW, NEW_NOW = "2026-11-22T04:06:00Z", "2026-11-23T04:06:00Z"
# A fixed signing secret for the bench only (40 characters); never a real one.
BENCH_SECRET = "bench-only-signing-secret-0123456789abcd"
MAX_FLOOR_RATIO = 3.0
MAX_PEAK = 1024**3
OUT_FILES = (
    "api/compliance.json",
    "registry/compliance-enhancements.json",
    "registry/compliance-shadow.json",
    "portal/compliance/index.html",
)


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPORT_SIGNING_SECRET")}
    env["REPORT_SIGNING_SECRET"] = BENCH_SECRET
    env.pop("SOURCE_DATE_EPOCH", None)
    return env


class _Clock:
    """CPU (user + system, all threads) and wall seconds since it was made."""

    def __init__(self) -> None:
        self.cpu, self.wall = time.process_time(), time.perf_counter()

    def read(self) -> dict[str, float]:
        return {"cpu": time.process_time() - self.cpu, "wall": time.perf_counter() - self.wall}


def _bake(fixtures: Path, out: Path, now: str) -> dict[str, Any]:
    import compliance_bake.bake as bake  # imported before the clock starts, as the CLI has it

    clock = _Clock()
    result = bake.run_bake(
        fixtures_dir=fixtures, out_dir=out, now=now, secret_file=None, console_depth=2
    )
    figures = clock.read()
    if not result.ok:
        raise SystemExit(f"the bake ran but a check failed: {result.summary()['integrity']}")
    return {**figures, "rows": len(result.snapshot.shadow.rows)}


def _json_files(snapshot: dict[str, Any]) -> list[Any]:
    """The values of the three JSON files: the snapshot and its two registry blocks."""
    return [snapshot, snapshot["enhancements"], snapshot["shadow"]]


def _floor(out: Path) -> dict[str, Any]:
    """The floor, on the snapshot the bake wrote.

    What no bake of this snapshot can skip: the bytes of its three JSON files in their layout
    (2-space indent, checked equal to the baked files before the clock starts), the snapshot's
    canonical bytes (sorted keys, compact: what its digests are over) and two SHA3-256 passes
    over them (the shadow digest and the integrity digest each cover every row), and the four
    files written and fsynced. Not in it: reading the fixtures, the matrix, the schema check,
    the portal rendering, the signatures' small blocks.

    It runs once in its process, as the bake does: a second run in the same process reuses the
    memory the first one touched and the pages it faulted in, which no bake has, and would be
    a floor the bake could never reach (docs/benchmarks.md gives both figures)."""
    import orjson

    from compliance_bake.inputs.jsonio import dumps_pretty

    snapshot = orjson.loads((out / OUT_FILES[0]).read_bytes())
    for name, value in zip(OUT_FILES, _json_files(snapshot), strict=False):
        if dumps_pretty(value) != (out / name).read_bytes():
            raise SystemExit(f"the floor's {name} differs from the baked file")
    portal = (out / OUT_FILES[3]).read_bytes()
    folder = DATA_DIR / "floor"
    for name in OUT_FILES:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
    clock = _Clock()
    blobs = [dumps_pretty(value) for value in _json_files(snapshot)]
    canonical = orjson.dumps(snapshot, option=orjson.OPT_SORT_KEYS)
    for _digest in ("shadow", "integrity"):
        hashlib.sha3_256(canonical).hexdigest()
    for name, blob in zip(OUT_FILES, [*blobs, portal], strict=True):
        with open(folder / name, "wb") as handle:
            handle.write(blob)
            handle.flush()
            os.fsync(handle.fileno())
    return clock.read()


def _verify(out: Path) -> dict[str, Any]:
    from compliance_bake.signing.secret import Secret
    from compliance_bake.verify.verifier import KeyMaterial, verify_source

    clock = _Clock()
    report = verify_source(str(out), KeyMaterial(Secret(BENCH_SECRET, "bench")))
    figures = clock.read()
    if not report.ok:
        raise SystemExit(f"verify refused {out}: {[f.what for f in report.failures][:3]}")
    return figures


def _diff(old: Path, new: Path) -> dict[str, Any]:
    from compliance_bake.diff.run import run_diff
    from compliance_bake.signing.secret import Secret

    clock = _Clock()
    result = run_diff(str(old), str(new), secret=Secret(BENCH_SECRET, "bench"))
    text = json.dumps(result.as_json())
    figures = clock.read()
    return {**figures, "counts": json.loads(text)["counts"], "authentic": result.authenticated}


def _child(job: str, paths: list[Path]) -> dict[str, Any]:
    if job == "bake":
        return _bake(paths[0], paths[1], OLD_NOW if paths[1].name == "out-old" else NEW_NOW)
    if job == "floor":
        return _floor(paths[0])
    if job == "verify":
        return _verify(paths[0])
    return _diff(paths[0], paths[1])


def _measure(job: str, *paths: Path) -> dict[str, Any]:
    """One operation in a fresh child: its figures, and its own peak RSS."""
    from tests.support.peak import measure

    result = DATA_DIR / f"result-{job}.json"
    command = [sys.executable, str(Path(__file__).resolve()), "--child", job, "--result"]
    command += [str(result), *map(str, paths)]
    done = measure(command, env=_env())
    if done.exit_code != 0:
        raise SystemExit(f"the {job} child failed (exit {done.exit_code}): {done.stderr[-2000:]}")
    figures: dict[str, Any] = json.loads(result.read_text())
    return {**figures, "peak": done.peak_bytes}


def _fixtures(states: int, partners: int, seed: int) -> tuple[Path, Path]:
    sys.path.insert(0, str(BENCH_DIR.parent))
    from tests.support.gen_fixtures import generate, write_fixtures

    root = DATA_DIR / f"fixtures-{states}x{partners}-seed{seed}"
    licences, geo = generate(states, partners, seed)
    write_fixtures(root / "old", licences, geo)
    for partner in licences["partners"][100:110]:
        partner["licences"] = []
    gone = licences["partners"].pop(partners // 2)["nodeId"]
    geo["partners"] = [p for p in geo["partners"] if p["nodeId"] != gone]
    write_fixtures(root / "new", licences, geo)
    return root / "old", root / "new"


def _median(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(run[key] for run in runs)


def _line(name: str, runs: list[dict[str, Any]]) -> str:
    cpu = ", ".join(f"{run['cpu']:.2f}" for run in runs)
    return (
        f"{name:<14} CPU {_median(runs, 'cpu'):6.2f} s  wall {_median(runs, 'wall'):6.2f} s  "
        f"peak {max(run['peak'] for run in runs) / 1024**2:6,.0f} MiB   (CPU of each run: {cpu})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--states", type=int, default=50, help="states, 2 to 50 (default 50)")
    parser.add_argument("--partners", type=int, default=10_000, help="partners (default 10000)")
    parser.add_argument("--seed", type=int, default=0, help="fixture seed (default 0)")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each, median taken (5)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("paths", type=Path, nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        args.result.write_text(json.dumps(_child(args.child, args.paths)))
        return 0

    DATA_DIR.mkdir(parents=True, exist_ok=True)
    old_fixtures, new_fixtures = _fixtures(args.states, args.partners, args.seed)
    old, new = DATA_DIR / "out-old", DATA_DIR / "out-new"
    for out in (old, new):
        shutil.rmtree(out, ignore_errors=True)
    repeat = max(1, args.repeat)
    bakes = [_measure("bake", old_fixtures, old) for _ in range(repeat)]
    new_bake = [_measure("bake", new_fixtures, new)]
    floors = [_measure("floor", old) for _ in range(repeat)]
    verifies = [_measure("verify", old) for _ in range(repeat)]
    verifies_new = [_measure("verify", new) for _ in range(repeat)]
    diffs = [_measure("diff", old, new) for _ in range(repeat)]

    print(f"shadow rows: {bakes[0]['rows']:,} (OLD), {new_bake[0]['rows']:,} (NEW)")
    print(f"diff's changes: {diffs[0]['counts']} (authenticated: {diffs[0]['authentic']})")
    print(f"medians of {repeat} runs, each in a fresh process; CPU = user + system")
    for name, runs in (
        ("bake OLD", bakes),
        ("bake NEW", new_bake),
        ("floor", floors),
        ("verify OLD", verifies),
        ("verify NEW", verifies_new),
        ("diff OLD NEW", diffs),
    ):
        print(_line(name, runs))
    bake_cpu, floor_cpu = _median(bakes, "cpu"), _median(floors, "cpu")
    verify_cpu, verify_new_cpu = _median(verifies, "cpu"), _median(verifies_new, "cpu")
    diff_cpu = _median(diffs, "cpu")
    both = verify_cpu + verify_new_cpu
    peak = max(
        run["peak"] for run in [*bakes, *new_bake, *floors, *verifies, *verifies_new, *diffs]
    )
    checks = [
        (
            f"bake CPU {bake_cpu:.2f} s <= {MAX_FLOOR_RATIO:g}x floor CPU {floor_cpu:.2f} s "
            f"({bake_cpu / floor_cpu:.2f}x)",
            bake_cpu <= MAX_FLOOR_RATIO * floor_cpu,
        ),
        (
            f"verify CPU {verify_cpu:.2f} s <= bake CPU {bake_cpu:.2f} s "
            f"({verify_cpu / bake_cpu:.2f}x)",
            verify_cpu <= bake_cpu,
        ),
        (
            f"diff CPU {diff_cpu:.2f} s <= verify CPU on both sides {both:.2f} s "
            f"({diff_cpu / both:.2f}x)",
            diff_cpu <= both,
        ),
        (f"every peak RSS < 1 GiB (largest {peak / 1024**2:,.0f} MiB)", peak < MAX_PEAK),
    ]
    for what, ok in checks:
        print(f"{'met' if ok else 'MISSED':>6}: {what}")
    met = all(ok for _, ok in checks)
    print("all targets met" if met else "TARGET MISSED")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
