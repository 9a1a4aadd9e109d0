"""Benchmark (a timing attack on agent keys): does the service answer a wrong agent key faster
when its prefix is unknown than when only its secret part is wrong?

    python bench/key_timing.py [--requests 1500]

One `compliance-bake serve` on a free loopback port (127.0.0.1), one agent key minted into a
temporary keys file. Over one keep-alive connection, interleaved (so drift in machine load falls
on both kinds alike), it sends --requests requests with an unknown prefix and --requests with the
known prefix and a wrong secret part, both to the check route, both answered 401. It prints each
kind's median latency, and the baseline measured in the same run: the difference between the
medians of the even and odd requests of the unknown-prefix kind (two halves of one kind, so the
noise of a difference that should be zero).

Bound: the two medians differ by at most BOUND_NS (10 us) or twice the baseline, whichever is
larger; exits 1 when missed. This is a benchmark, not a test: its numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import http.client
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

from compliance_bake.identity.keyfile import mint_key
from tests.support.live_service import LiveService

BOUND_NS = 10_000
ROUTE = "/api/compliance/check?partner=node-bay-01&state=MA&wagerType=basketball.totals"


def _timed(conn: http.client.HTTPConnection, key: str) -> int:
    start = time.perf_counter_ns()
    conn.request("GET", ROUTE, headers={"Authorization": f"Bearer {key}"})
    answer = conn.getresponse()
    answer.read()
    took = time.perf_counter_ns() - start
    if answer.status != 401:
        raise SystemExit(f"expected 401, got {answer.status}")
    return took


def _wrong_secret(key: str) -> str:
    prefix, _, secret_part = key.partition(".")
    return f"{prefix}.{secrets.token_urlsafe(32)[: len(secret_part)]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=1500, help="requests of each kind")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        key = mint_key(root / "agent-keys.json", "bench")
        prefix, _, secret_part = key.partition(".")
        unknown = f"{'zzzzz' if prefix != 'zzzzz' else 'yyyyy'}.{secret_part}"
        with LiveService(keys_file=root / "agent-keys.json", out_dir=root / "out") as live:
            parts = urlsplit(live.url)
            conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
            for _ in range(100):  # warm-up, not measured
                _timed(conn, unknown)
                _timed(conn, _wrong_secret(key))
            by_unknown: list[int] = []
            by_wrong: list[int] = []
            for _ in range(args.requests):  # bounded; interleaved
                by_unknown.append(_timed(conn, unknown))
                by_wrong.append(_timed(conn, _wrong_secret(key)))
            conn.close()
    med_unknown = statistics.median(by_unknown)
    med_wrong = statistics.median(by_wrong)
    baseline = abs(statistics.median(by_unknown[::2]) - statistics.median(by_unknown[1::2]))
    difference = abs(med_unknown - med_wrong)
    bound = max(BOUND_NS, 2 * baseline)
    print(f"unknown prefix:    median {med_unknown / 1000:8.1f} us over {args.requests}")
    print(f"wrong secret part: median {med_wrong / 1000:8.1f} us over {args.requests}")
    print(
        f"difference {difference / 1000:.2f} us; baseline (one kind, two halves) "
        f"{baseline / 1000:.2f} us; ratio {difference / max(baseline, 1):.2f}x the baseline"
    )
    print(f"bound {bound / 1000:.1f} us: {'met' if difference <= bound else 'MISSED'}")
    return 0 if difference <= bound else 1


if __name__ == "__main__":
    sys.exit(main())
