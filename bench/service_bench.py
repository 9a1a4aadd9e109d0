"""Benchmark: the service's check route under wrk, and `bake snapshot --target` against it.

    python bench/service_bench.py [--states 50] [--partners 1000] [--seconds 10] [--connections 32]

One run does everything, against one `compliance-bake serve` process on a free loopback port
(uvicorn, one worker) over generated fixtures (bench/gen_fixtures.py, into bench/.data/):

1. wrk drives `GET /health` (the bare route: no key, a constant body) and then the check route
   with a valid agent key (`GET /api/compliance/check`, a licensed pair, 200): requests/s each.
   Target: check >= 0.5x the bare route.
2. `compliance-bake bake snapshot --target URL` bakes the STATES x PARTNERS matrix against the
   same service, as a child process; its checks/s is the number of checks the bake makes (the
   matrix plus the board's service checks) over the bake's whole wall time (fixtures, board,
   matrix, signing, validation and writing included, so the figure is conservative). Then wrk
   drives the check route once more, right after the bake. Target: the bake's checks/s >= 0.7x
   the mean of the two wrk rates of the check route measured around it.

wrk is the Debian package `wrk` (`make bench-service` installs it when missing). Exits 1 if a
target is missed.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

BENCH_DIR = Path(__file__).resolve().parent
DATA_DIR = BENCH_DIR / ".data" / "service"
# A fixed signing secret for the bench only (40 characters); never a real one.
BENCH_SECRET = "bench-only-signing-secret-0123456789abcd"
MIN_CHECK_RATIO = 0.5
MIN_BAKE_RATIO = 0.7
_RATE = re.compile(r"Requests/sec:\s+([\d.]+)")
_NON_2XX = re.compile(r"Non-2xx or 3xx responses:\s+(\d+)")


def wrk(url: str, seconds: int, connections: int, headers: dict[str, str]) -> float:
    """Requests per second that wrk measured; refuses a run with error answers."""
    args = ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency"]
    for name, value in headers.items():
        args += ["-H", f"{name}: {value}"]
    done = subprocess.run([*args, url], capture_output=True, text=True, check=True)
    if _NON_2XX.search(done.stdout):
        raise SystemExit(f"wrk saw error answers from {url.split('?')[0]}:\n{done.stdout}")
    found = _RATE.search(done.stdout)
    if not found:
        raise SystemExit(f"no rate in wrk's output:\n{done.stdout}")
    return float(found.group(1))


def bake_against(url: str, fixtures: Path, key: str) -> tuple[float, str]:
    """Wall seconds of one `bake snapshot --target` in a child process, and its --json summary."""
    env = {**os.environ, "REPORT_SIGNING_SECRET": BENCH_SECRET, "COMPLIANCE_AGENT_KEY": key}
    with tempfile.TemporaryDirectory() as out:
        args = [sys.executable, "-m", "compliance_bake", "bake", "snapshot", "--json"]
        args += ["--target", url, "--fixtures", str(fixtures), "--out", out]
        args += ["--now", "2026-11-22T04:06:00Z"]
        start = time.perf_counter()
        done = subprocess.run(args, capture_output=True, text=True, env=env)
        wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"the bake failed ({done.returncode}): {done.stderr.strip()}")
    return wall, done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--states", type=int, default=50)
    parser.add_argument("--partners", type=int, default=1000)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    opts = parser.parse_args()
    if shutil.which("wrk") is None:
        print("wrk is not installed (fix: `make bench-service` installs it)", file=sys.stderr)
        return 2

    sys.path.insert(0, str(BENCH_DIR))
    import json

    from gen_fixtures import generate, write_fixtures
    from live_service import LiveService

    from compliance_bake.keyfile import mint_key

    fixtures = DATA_DIR / f"fixtures-{opts.states}x{opts.partners}-{opts.seed}"
    licences, geo = generate(opts.states, opts.partners, opts.seed)
    write_fixtures(fixtures, licences, geo)
    state = licences["states"][0]
    partner = next(p["nodeId"] for p in licences["partners"] if state["code"] in p["licences"])
    question = {"partner": partner, "state": state["code"], "wagerType": state["wagerTypes"][0]}

    with tempfile.TemporaryDirectory() as work:
        keys_file = Path(work) / "agent-keys.json"
        key = mint_key(keys_file, "bench")
        auth = {"Authorization": f"Bearer {key}"}
        with LiveService(
            keys_file=keys_file, out_dir=Path(work) / "out", fixtures_dir=fixtures
        ) as live:
            check_url = f"{live.url}/api/compliance/check?{urlencode(question)}"
            print(
                f"service {live.url}, {opts.states} states x {opts.partners} partners, "
                f"wrk -t1 -c{opts.connections} -d{opts.seconds}s"
            )
            bare = wrk(f"{live.url}/health", opts.seconds, opts.connections, {})
            check_before = wrk(check_url, opts.seconds, opts.connections, auth)
            wall, summary = bake_against(live.url, fixtures, key)
            check_after = wrk(check_url, opts.seconds, opts.connections, auth)

    shadow_rows = json.loads(summary)["shadow"]["rows"]
    checks = shadow_rows + 2  # the board's two check rows also go over HTTP (+ health, status)
    check_rate = (check_before + check_after) / 2
    bake_rate = checks / wall
    check_ratio = check_before / bare
    bake_ratio = bake_rate / check_rate

    print(f"wrk GET /health (bare route)          {bare:10,.0f} req/s")
    print(
        f"wrk GET /api/compliance/check (key)   {check_before:10,.0f} req/s before the bake, "
        f"{check_after:,.0f} after"
    )
    print(
        f"bake snapshot --target               {bake_rate:10,.0f} checks/s "
        f"({checks:,} checks in {wall:.2f} s, whole bake)"
    )
    print(
        f"check route / bare route             {check_ratio:10.2f}x  (target >= {MIN_CHECK_RATIO}x)"
    )
    print(
        f"bake / wrk on the check route        {bake_ratio:10.2f}x  (target >= {MIN_BAKE_RATIO}x)"
    )
    missed = []
    if check_ratio < MIN_CHECK_RATIO:
        missed.append("check route")
    if bake_ratio < MIN_BAKE_RATIO:
        missed.append("bake")
    print("targets met" if not missed else f"targets MISSED: {', '.join(missed)}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
