"""Benchmark: the policy's questions in process, against a floor of the same decisions.

    python bench/policy_bench.py [--states 50] [--partners 10000] [--seed 0]

Generates fixtures (tests/support/gen_fixtures.py) with a limit row per state (maximum, a
fractional minimum, two bet types, a minimum age, ZIP prefixes on every other state) and a
partner's own row for every hundredth partner, into bench/.data/policy/ (git-ignored); loads
them; then times, with `time.process_time()` (CPU):

- policy: `report.policy.run_policy` against the in-process engine: every boundary question made,
  asked of the engine, predicted by the registry, classified, the record's rows built;
- floor: the same questions decided twice in a plain loop (`policy.decide.decide`: the engine's
  answer and the prediction, each question needs both), nothing else.

Prints questions per second for both and checks policy CPU <= 3x the floor's. Exits 1 if missed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from compliance_bake.inputs.fixtures import load_fixtures  # noqa: E402
from compliance_bake.policy.decide import decide  # noqa: E402
from compliance_bake.policy.questions import boundary_questions  # noqa: E402
from compliance_bake.report.policy import run_policy  # noqa: E402
from compliance_bake.targets.engine import Engine  # noqa: E402
from compliance_bake.targets.inprocess import InProcessTarget  # noqa: E402
from tests.support.gen_fixtures import generate, write_fixtures  # noqa: E402

MAX_FLOOR_RATIO = 3.0
NOW = 1_795_320_360  # 2026-11-22T04:06:00Z


def write_limits(folder: Path) -> None:
    """limits.json for the generated fixtures in `folder` (the rows the docstring lists)."""
    licences = json.loads((folder / "licences.json").read_text())
    rows = []
    for index, state in enumerate(licences["states"]):
        sport, _, market = state["wagerTypes"][0].partition(".")
        special = {"min_age": 21}
        if index % 2:
            special["allowed_zip_prefixes"] = ["0", "1", "2"]
        rows.append(
            {"policy_key": f"{state['code']}-{sport}-{market}", "status": "active",
             "state_code": state["code"], "sport_id": sport, "market_id": market,
             "node_id": None, "max_wager": 5000, "min_wager": 0.5,
             "allowed_bet_types": ["straight", "parlay"], "special_rules": special,
             "effective_from": 0, "effective_to": None}
        )  # fmt: skip
    for index, partner in enumerate(licences["partners"][::100]):
        held = [s for s, status in partner_licences(partner).items() if status == "active"]
        if not held:
            continue
        state = next(s for s in licences["states"] if s["code"] == held[0])
        sport, _, market = state["wagerTypes"][0].partition(".")
        rows.append(
            {"policy_key": f"own-{index}", "status": "active", "state_code": held[0],
             "sport_id": sport, "market_id": market, "node_id": partner["nodeId"],
             "max_wager": 4000, "min_wager": 1, "allowed_bet_types": ["straight"],
             "special_rules": {"min_age": 21}, "effective_from": 0, "effective_to": None}
        )  # fmt: skip
    (folder / "limits.json").write_text(json.dumps({"schemaVersion": 1, "limits": rows}))


def partner_licences(partner: dict[str, object]) -> dict[str, str]:
    return {x["state"]: x["status"] for x in partner["licences"]}  # type: ignore[attr-defined,index]


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--states", type=int, default=50)
    parser.add_argument("--partners", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    folder = ROOT / "bench" / ".data" / "policy"
    write_fixtures(folder, *generate(args.states, args.partners, args.seed))
    write_limits(folder)
    policy = load_fixtures(folder).policy
    target = InProcessTarget(Engine(policy, NOW))

    start = time.process_time()
    record = run_policy(target, policy, NOW, str(folder), "2026-11-22T04:06:00.000Z")
    policy_cpu = time.process_time() - start
    questions = [q.question for q in boundary_questions(policy, NOW)]
    assert len(questions) == len(record.questions)

    start = time.process_time()
    for question in questions:
        decide(policy, question, NOW)
        decide(policy, question, NOW)
    floor_cpu = time.process_time() - start

    n = len(questions)
    print(f"{args.states} states x {args.partners:,} partners, {len(policy.limits):,} limit rows")
    print(f"questions: {n:,} ({len(record.failing_questions())} failing)")
    print(f"policy  CPU {policy_cpu:6.2f} s  {n / policy_cpu:12,.0f} questions/s")
    print(f"floor   CPU {floor_cpu:6.2f} s  {n / floor_cpu:12,.0f} questions/s")
    ratio = policy_cpu / floor_cpu
    met = policy_cpu <= MAX_FLOOR_RATIO * floor_cpu
    print(
        f"   {'met' if met else 'MISSED'}: policy CPU <= {MAX_FLOOR_RATIO:g}x floor ({ratio:.2f}x)"
    )
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
