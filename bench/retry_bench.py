"""Benchmark: what the HTTP target's retry library costs per check when nothing fails.

    python bench/retry_bench.py [--states 20] [--partners 1000] [--rounds 3]

Starts `compliance-bake serve` on a free loopback port over generated fixtures, then, in rounds,
runs the whole matrix through `HttpTarget.check_many` twice: as shipped (the first attempt of
each request bare, tenacity from the first failure on) and with every request wrapped in
tenacity's `AsyncRetrying` (the variant is defined here, by replacing `Transport.send`). It prints
this process's CPU time per check (all threads: the client's whole cost, which is what bounds
its checks per second on a shared machine; wall-clock rates are printed too but move with the
machine's load) and the median ratio variant / shipped. Exits 1 if the shipped transport is not
the cheaper one.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import TypeVar

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
sys.path.insert(0, str(ROOT))

from yarl import URL  # noqa: E402

from compliance_bake.identity.keyfile import mint_key  # noqa: E402
from compliance_bake.inputs.fixtures import load_fixtures  # noqa: E402
from compliance_bake.targets.answers import Answer  # noqa: E402
from compliance_bake.targets.http import HttpTarget  # noqa: E402
from compliance_bake.targets.interface import CheckRequest  # noqa: E402
from compliance_bake.targets.refusals import unexpected  # noqa: E402
from compliance_bake.targets.transport import Decode, Observe, Request, Transport  # noqa: E402
from tests.support.gen_fixtures import generate, write_fixtures  # noqa: E402
from tests.support.live_service import LiveService  # noqa: E402

T = TypeVar("T")
SHIPPED_SEND = Transport.send


async def _every_request_through_tenacity(
    self: Transport,
    answer: Answer,
    request: Request,
    decode: Decode[T],
    accept: frozenset[int],
    observe: Observe | None = None,
) -> T:
    url = URL(self.url(request), encoded=True)
    status, headers, raw = await self._policy.retrying()(self._fetch, answer, url, request)
    if status in accept:
        return decode(status, headers, raw)
    raise unexpected(answer, status, raw, self._url.base)


def _round(url: str, key: str, requests: list[CheckRequest]) -> tuple[float, float]:
    """(CPU seconds per check, checks per wall-clock second) of one matrix."""
    with HttpTarget(url, key) as target:
        target.health()  # connect and start the loop before the clock
        cpu, wall = time.process_time(), time.perf_counter()
        answered = sum(1 for _ in target.check_many(requests))
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    assert answered == len(requests)
    return cpu / answered, answered / wall


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--states", type=int, default=20, help="states in the matrix (20)")
    parser.add_argument("--partners", type=int, default=1000, help="partners (1000)")
    parser.add_argument("--rounds", type=int, default=3, help="paired rounds (3)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="retry-bench-") as work:
        root = Path(work)
        fixtures = root / "fixtures"
        fixtures.mkdir()
        write_fixtures(fixtures, *generate(args.states, args.partners, seed=11))
        registry = load_fixtures(fixtures).registry
        requests = [
            CheckRequest(partner.node_id, state.code, state.wager_types[0])
            for state in registry.states
            for partner in registry.partners
        ]
        keys_file = root / "agent-keys.json"
        key = mint_key(keys_file, "retry-bench")
        print(f"matrix {args.states} x {args.partners} = {len(requests)} checks against serve")
        ratios: list[float] = []
        with LiveService(
            keys_file=keys_file, out_dir=root / "out", fixtures_dir=fixtures, cwd=root
        ) as live:
            for number in range(1, args.rounds + 1):
                shipped = _round(live.url, key, requests)
                Transport.send = _every_request_through_tenacity  # type: ignore[method-assign]
                try:
                    variant = _round(live.url, key, requests)
                finally:
                    Transport.send = SHIPPED_SEND  # type: ignore[method-assign]
                ratios.append(variant[0] / shipped[0])
                print(
                    f"round {number}: shipped {shipped[0] * 1e6:.0f} us CPU/check "
                    f"({shipped[1]:,.0f} checks/s) | tenacity on every request "
                    f"{variant[0] * 1e6:.0f} us CPU/check ({variant[1]:,.0f} checks/s) | "
                    f"{ratios[-1]:.2f}x"
                )
    median = statistics.median(ratios)
    print(f"median: tenacity on every request costs {median:.2f}x the shipped CPU per check")
    return 0 if median > 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
