"""Benchmark: the whole in-process bake of a 500,000-row matrix against a json.dumps+SHA3 baseline.

    python bench/bake_bench.py [--states 50] [--partners 10000] [--seed 0] [--repeat 3]

One run does everything:
1. generates the fixtures (bench/gen_fixtures.py) into bench/.data/ (git-ignored);
2. in fresh child processes (subprocesses, not forks, so that each peak RSS is one bake's alone),
   --repeat times: times `compliance_bake.bake.run_bake` end to end (fixture load, board, shadow
   matrix, signing, schema validation, rendering, atomic write; the modules the CLI imports
   before it are imported first, the ones the bake imports lazily are timed) and reads the peak
   RSS (getrusage ru_maxrss) right after it; then, in the same process and on the snapshot that
   bake produced, times the baseline three times: stdlib `json.dumps` of the snapshot, then
   SHA3-256 of its UTF-8 bytes. The first child also times `canon()` (the orjson fast path)
   against `rfc8785.dumps` (the reference) on the snapshot and checks that they give the same
   bytes (information; a difference fails the run);
   Right after the baseline, in the same child, the floor of this very report (issue 14), best
   of three: orjson bytes of the snapshot and of both registry blocks, one SHA3-256 pass over
   them, and writing the four files (those three and the portal page the bake wrote, each
   written with one call and fsynced, as publish does); then `verify` of the bake's own out/
   (`verify_out`, in-process, with the bench secret);
3. in one more child process: the same bake under tracemalloc, for the peak of Python
   allocations (tracemalloc slows the bake down, so that run is not a timed one);
4. in a last child, for information, one bake with an empty user cache folder (XDG_CACHE_HOME):
   what the first bake for a user costs (the ZIP database read and copied, the portal template
   compiled); the timed bakes use the user's cache, as every later bake does.

Timings on a shared machine vary by tens of percent from run to run, so each bake is compared
with the baseline measured right after it in the same process (the best of its three runs: noise
only adds time), and the ratio checked is the median of these paired ratios. Targets: the bake
within 5x the baseline, peak memory (RSS and tracemalloc) under 2 GiB; and (issue 14) the bake
within 3x its floor, peak RSS under 1 GiB, verify within 1x the bake. Exits 1 if one is missed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
DATA_DIR = BENCH_DIR / ".data"
NOW = "2026-11-22T04:06:00Z"
# A fixed signing secret for the bench only (40 characters); never a real one.
BENCH_SECRET = "bench-only-signing-secret-0123456789abcd"
MAX_RATIO = 5.0
MAX_MEMORY = 2 * 1024**3
MAX_FLOOR_RATIO = 3.0
MAX_RSS = 1024**3
MAX_VERIFY_RATIO = 1.0
BASELINE_RUNS = 3
OUT_FILES = (
    "api/compliance.json",
    "registry/compliance-enhancements.json",
    "registry/compliance-shadow.json",
    "portal/compliance/index.html",
)


def _peak_rss() -> int:
    """Peak resident set size of this process in bytes (Linux reports KiB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def _bake(fixtures: Path, out: Path) -> tuple[float, dict[str, Any]]:
    from compliance_bake.bake import run_bake

    start = time.perf_counter()
    result = run_bake(
        fixtures_dir=fixtures, out_dir=out, now=NOW, secret_file=None, console_depth=2
    )
    elapsed = time.perf_counter() - start
    if not result.ok:
        raise SystemExit(f"the bake ran but a check failed: {result.summary()['integrity']}")
    return elapsed, result.snapshot.to_json()


def _out_digest(out: Path) -> str:
    """SHA-256 over the written files, to compare outputs between runs and code versions."""
    hasher = hashlib.sha256()
    for name in OUT_FILES:
        hasher.update(name.encode())
        hasher.update(hashlib.sha256((out / name).read_bytes()).digest())
    return hasher.hexdigest()


def _floor(snapshot: dict[str, Any], out: Path) -> tuple[list[float], int]:
    """What a signed bake of this report cannot avoid: serialise it (orjson), hash it once
    (SHA3-256), write the four files. Best-of-three timings and the bytes serialised."""
    import orjson

    portal = (out / OUT_FILES[3]).read_bytes()
    folder = DATA_DIR / "floor"
    (folder / "api").mkdir(parents=True, exist_ok=True)
    (folder / "registry").mkdir(parents=True, exist_ok=True)
    (folder / "portal" / "compliance").mkdir(parents=True, exist_ok=True)
    times: list[float] = []
    size = 0
    for _ in range(BASELINE_RUNS):
        start = time.perf_counter()
        blobs = [
            orjson.dumps(snapshot),
            orjson.dumps(snapshot["enhancements"]),
            orjson.dumps(snapshot["shadow"]),
        ]
        hasher = hashlib.sha3_256()
        for blob in blobs:
            hasher.update(blob)
        hasher.hexdigest()
        for name, blob in zip(OUT_FILES, [*blobs, portal], strict=True):
            with open(folder / name, "wb") as handle:
                handle.write(blob)
                handle.flush()
                os.fsync(handle.fileno())
        times.append(time.perf_counter() - start)
        size = sum(len(blob) for blob in blobs)
        del blobs
    return times, size


def _verify(out: Path) -> float:
    """`verify` of the bake's own output: verify_out in-process if it is there, else the CLI."""
    try:
        from compliance_bake.signing.secret import Secret
        from compliance_bake.verify.verifier import verify_out
    except ImportError:
        verify_out = None
    start = time.perf_counter()
    if verify_out is not None:
        report = verify_out(out, Secret(BENCH_SECRET, "bench"))
        ok = bool(getattr(report, "ok", True))
    else:
        command = [sys.executable, "-m", "compliance_bake", "verify", str(out)]
        ok = subprocess.run(command, capture_output=True, check=False).returncode == 0
    elapsed = time.perf_counter() - start
    if not ok:
        raise SystemExit("verify refused the bake's own output")
    return elapsed


def _child_timed(fixtures: Path, out: Path, reference: bool) -> dict[str, Any]:
    import compliance_bake.bake  # noqa: F401 - imported before the clock starts, as a CLI has

    bake_s, snapshot = _bake(fixtures, out)
    rss = _peak_rss()
    baseline: list[float] = []
    size = 0
    for _ in range(BASELINE_RUNS):
        start = time.perf_counter()
        text = json.dumps(snapshot)
        hashlib.sha3_256(text.encode("utf-8")).hexdigest()
        baseline.append(time.perf_counter() - start)
        size = len(text)
        del text
    floor, floor_bytes = _floor(snapshot, out)
    report: dict[str, Any] = {
        "floor_s": floor,
        "floor_bytes": floor_bytes,
        "verify_s": _verify(out),
        "bake_s": bake_s,
        "rss_bytes": rss,
        "baseline_s": baseline,
        "baseline_bytes": size,
        "rows": len(snapshot["shadow"]["rows"]),
        "out_digest": _out_digest(out),
    }
    if reference:
        from compliance_bake.signing.canon import canon, canon_reference

        start = time.perf_counter()
        fast = canon(snapshot)
        report["canon_s"] = time.perf_counter() - start
        start = time.perf_counter()
        slow = canon_reference(snapshot)
        report["reference_s"] = time.perf_counter() - start
        report["canon_identical"] = fast == slow
        report["canon_bytes"] = len(fast)
    return report


def _child_cold(fixtures: Path, out: Path) -> dict[str, Any]:
    import compliance_bake.bake  # noqa: F401

    bake_s, _ = _bake(fixtures, out)
    return {"bake_s": bake_s}


def _child_traced(fixtures: Path, out: Path) -> dict[str, Any]:
    import compliance_bake.bake  # noqa: F401

    tracemalloc.start()
    bake_s, _ = _bake(fixtures, out)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"traced_bake_s": bake_s, "traced_peak_bytes": peak}


def _run_child(
    mode: str, fixtures: Path, out: Path, reference: bool, cache: Path | None = None
) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPORT_SIGNING_SECRET")}
    env["REPORT_SIGNING_SECRET"] = BENCH_SECRET
    env.pop("SOURCE_DATE_EPOCH", None)
    if cache is not None:
        env["XDG_CACHE_HOME"] = str(cache)
    result_file = DATA_DIR / f"result-{mode}.json"
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        mode,
        "--fixtures",
        str(fixtures),
        "--out",
        str(out),
        "--result",
        str(result_file),
    ]
    if not reference:
        command.append("--skip-reference")
    completed = subprocess.run(command, env=env, check=False)
    if completed.returncode != 0:
        raise SystemExit(f"the {mode} child failed with exit code {completed.returncode}")
    report: dict[str, Any] = json.loads(result_file.read_text())
    return report


def _fixtures(states: int, partners: int, seed: int) -> Path:
    sys.path.insert(0, str(BENCH_DIR))
    from gen_fixtures import generate, write_fixtures

    folder = DATA_DIR / f"fixtures-{states}x{partners}-seed{seed}"
    licences, geo = generate(states, partners, seed)
    write_fixtures(folder, licences, geo)
    return folder


def _cache_note() -> str:
    from compliance_bake.resources import user_cache_dir

    return f"{user_cache_dir()}, filled by the fixture generator and the first timed bake"


def _seconds(values: list[float]) -> str:
    return ", ".join(f"{value:.2f}" for value in values)


def _mib(size: float) -> str:
    return f"{size / 1024**2:,.0f} MiB"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--states", type=int, default=50, help="states, 2 to 50 (default 50)")
    parser.add_argument("--partners", type=int, default=10_000, help="partners (default 10000)")
    parser.add_argument("--seed", type=int, default=0, help="fixture seed (default 0)")
    parser.add_argument("--repeat", type=int, default=3, help="timed bakes, best taken (3)")
    parser.add_argument(
        "--skip-reference", action="store_true", help="skip the slow rfc8785 comparison"
    )
    parser.add_argument("--child", choices=("timed", "traced", "cold"), help=argparse.SUPPRESS)
    parser.add_argument("--fixtures", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:
        if args.child == "timed":
            report = _child_timed(args.fixtures, args.out, not args.skip_reference)
        elif args.child == "cold":
            report = _child_cold(args.fixtures, args.out)
        else:
            report = _child_traced(args.fixtures, args.out)
        args.result.write_text(json.dumps(report))
        return 0

    DATA_DIR.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    fixtures = _fixtures(args.states, args.partners, args.seed)
    print(
        f"fixtures: {args.states} states x {args.partners} partners (seed {args.seed}) "
        f"in {fixtures} ({time.perf_counter() - start:.1f} s to generate)"
    )
    out = DATA_DIR / "out"
    timed = [
        _run_child("timed", fixtures, out, not args.skip_reference and i == 0)
        for i in range(max(1, args.repeat))
    ]
    traced = _run_child("traced", fixtures, out, False)
    with tempfile.TemporaryDirectory() as empty:
        cold = _run_child("cold", fixtures, out, False, cache=Path(empty))

    bakes = [run["bake_s"] for run in timed]
    baselines = [min(run["baseline_s"]) for run in timed]
    # Each bake against the baseline measured right after it, in the same process.
    ratios = [bake / baseline for bake, baseline in zip(bakes, baselines, strict=True)]
    ratio = statistics.median(ratios)
    floors = [min(run["floor_s"]) for run in timed]
    floor_ratios = [bake / floor for bake, floor in zip(bakes, floors, strict=True)]
    floor_ratio = statistics.median(floor_ratios)
    verify_ratios = [run["verify_s"] / run["bake_s"] for run in timed]
    verify_ratio = statistics.median(verify_ratios)
    rss = max(run["rss_bytes"] for run in timed)
    peak = traced["traced_peak_bytes"]
    first = timed[0]
    print(f"shadow rows: {first['rows']:,}; output digest {first['out_digest'][:16]}")
    print(
        f"bake (run_bake, one per subprocess): median {statistics.median(bakes):.2f} s "
        f"(runs: {_seconds(bakes)})"
    )
    print(
        f"baseline (json.dumps + sha3-256 of {_mib(first['baseline_bytes'])}, best of "
        f"{BASELINE_RUNS} after each bake): median {statistics.median(baselines):.2f} s "
        f"(runs: {_seconds(baselines)})"
    )
    print(
        f"ratio bake/baseline: {ratio:.2f}x, median of {len(ratios)} "
        f"(runs: {', '.join(f'{r:.2f}x' for r in ratios)}; target <= {MAX_RATIO:g}x)"
    )
    print(
        f"floor (orjson of the snapshot and both registry blocks, {_mib(first['floor_bytes'])}; "
        f"one sha3-256 pass; the four files written and fsynced; best of {BASELINE_RUNS}): "
        f"median {statistics.median(floors):.2f} s (runs: {_seconds(floors)})"
    )
    print(
        f"ratio bake/floor: {floor_ratio:.2f}x, median of {len(floor_ratios)} "
        f"(runs: {', '.join(f'{r:.2f}x' for r in floor_ratios)}; target <= {MAX_FLOOR_RATIO:g}x)"
    )
    verifies = [run["verify_s"] for run in timed]
    print(
        f"verify of the same out/: median {statistics.median(verifies):.2f} s "
        f"(runs: {_seconds(verifies)}); ratio verify/bake {verify_ratio:.2f}x, median of "
        f"{len(verify_ratios)} (runs: {', '.join(f'{r:.2f}x' for r in verify_ratios)}; "
        f"target <= {MAX_VERIFY_RATIO:g}x)"
    )
    print(
        f"peak memory: RSS {_mib(rss)} (getrusage, bake child, before the baseline); "
        f"tracemalloc peak {_mib(peak)} (traced child, bake {traced['traced_bake_s']:.2f} s)"
    )
    print(
        f"a bake with an empty user cache (the first for this user: the ZIP database read and "
        f"copied, the portal template compiled; information): {cold['bake_s']:.2f} s; the timed "
        f"bakes use the user cache ({_cache_note()})"
    )
    if "canon_s" in first:
        speedup = first["reference_s"] / first["canon_s"]
        print(
            f"canon() {first['canon_s']:.2f} s vs rfc8785.dumps {first['reference_s']:.2f} s "
            f"on the snapshot ({_mib(first['canon_bytes'])}): {speedup:.0f}x faster, "
            + ("byte-identical" if first["canon_identical"] else "DIFFERENT BYTES")
        )
    failures = []
    if ratio > MAX_RATIO:
        failures.append(f"bake is {ratio:.2f}x the baseline (target <= {MAX_RATIO:g}x)")
    if floor_ratio > MAX_FLOOR_RATIO:
        failures.append(f"bake is {floor_ratio:.2f}x its floor (target <= {MAX_FLOOR_RATIO:g}x)")
    if rss >= MAX_RSS:
        failures.append(f"peak RSS {_mib(rss)} (target < {_mib(MAX_RSS)})")
    if verify_ratio > MAX_VERIFY_RATIO:
        failures.append(f"verify is {verify_ratio:.2f}x the bake (target <= {MAX_VERIFY_RATIO:g}x)")
    if max(rss, peak) >= MAX_MEMORY:
        failures.append(f"peak memory {_mib(max(rss, peak))} (target < {_mib(MAX_MEMORY)})")
    if "canon_identical" in first and not first["canon_identical"]:
        failures.append("canon() and rfc8785.dumps differ on the snapshot")
    for failure in failures:
        print(f"TARGET MISSED: {failure}")
    if not failures:
        print("all targets met")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
