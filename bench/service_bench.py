"""Benchmark: the service's check route (with an agent key) against its bare route, under wrk.

    python bench/service_bench.py [--states 50] [--partners 1000] [--seconds 10] [--repeat 3]

One run does everything, against one `compliance-bake serve` process on a free loopback port
(uvicorn, one worker) over generated fixtures (tests/support/gen_fixtures.py, into bench/.data/):
--repeat times, paired, wrk (1 thread, 32 connections) drives `GET /health` (the bare route: no
key, a constant body) and right after it the check route with a valid agent key
(`GET /api/compliance/check`, a licensed pair, 200). Prints requests/s of each and the median of
the paired ratios. Target: the check route at least 0.5x the bare route. The baker's side is
bench/target_bench.py.

wrk is the Debian package `wrk` (`make bench-service` installs it when missing). Exits 1 if the
target is missed.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

BENCH_DIR = Path(__file__).resolve().parent
DATA_DIR = BENCH_DIR / ".data" / "service"
MIN_CHECK_RATIO = 0.5
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


def licensed_question(licences: dict[str, Any]) -> dict[str, str]:
    """A check that the service allows (200): a partner with an active licence, in its state."""
    wager_types = {state["code"]: state["wagerTypes"][0] for state in licences["states"]}
    for partner in licences["partners"]:
        for licence in partner["licences"]:
            if licence["status"] == "active":
                code = licence["state"]
                return {"partner": partner["nodeId"], "state": code, "wagerType": wager_types[code]}
    raise SystemExit("the generated fixtures have no active licence")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--states", type=int, default=50)
    parser.add_argument("--partners", type=int, default=1000)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    opts = parser.parse_args()
    if shutil.which("wrk") is None:
        print("wrk is not installed (fix: `make bench-service` installs it)", file=sys.stderr)
        return 2

    sys.path.insert(0, str(BENCH_DIR.parent))
    from compliance_bake.identity.keyfile import mint_key
    from tests.support.gen_fixtures import generate, write_fixtures
    from tests.support.live_service import LiveService

    fixtures = DATA_DIR / f"fixtures-{opts.states}x{opts.partners}-{opts.seed}"
    licences, geo = generate(opts.states, opts.partners, opts.seed)
    write_fixtures(fixtures, licences, geo)
    question = licensed_question(licences)

    with tempfile.TemporaryDirectory() as work:
        keys_file = Path(work) / "agent-keys.json"
        auth = {"Authorization": f"Bearer {mint_key(keys_file, 'bench')}"}
        out = Path(work) / "out"
        with LiveService(keys_file=keys_file, out_dir=out, fixtures_dir=fixtures) as live:
            check_url = f"{live.url}/api/compliance/check?{urlencode(question)}"
            print(
                f"serve at {live.url}, {opts.states} states x {opts.partners} partners, "
                f"wrk -t1 -c{opts.connections} -d{opts.seconds}s, {opts.repeat} paired runs"
            )
            ratios = []
            for run in range(1, opts.repeat + 1):
                bare = wrk(f"{live.url}/health", opts.seconds, opts.connections, {})
                check = wrk(check_url, opts.seconds, opts.connections, auth)
                ratios.append(check / bare)
                print(
                    f"run {run}: GET /health {bare:9,.0f} req/s   "
                    f"GET /api/compliance/check (key) {check:9,.0f} req/s   {check / bare:.2f}x"
                )
    ratio = statistics.median(ratios)
    print(f"check route / bare route: median {ratio:.2f}x (target >= {MIN_CHECK_RATIO}x)")
    met = ratio >= MIN_CHECK_RATIO
    print("target met" if met else "target MISSED")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
