"""Rules of the snapshot's top level and its board (spec 2.1, 2.2, 9)."""

from __future__ import annotations

import re
from collections import Counter
from datetime import datetime
from typing import Any

from compliance_bake.report.deepequal import strict_equals
from compliance_bake.report.escape import json_line
from compliance_bake.verify.findings import QUOTED
from compliance_bake.verify.rules.book import RuleContext, rule

SPEC_EXPECTED: dict[str, dict[str, Any] | None] = {
    "health.states": None,  # {"ok": true, "states": the regulated states}: checked on its own
    "check.ma_licensed_nba_totals": {"allowed": True, "status": 200},
    "check.nj_unlicensed_block": {"allowed": False, "status": 403},
    "status.ma_licensed_shape": {
        "ok": True,
        "state": "MA",
        "licenseStatus": "active",
        "hasLimits": True,
    },
    "identity.agent_key_prefix": {"method": "prefix_lookup", "timing": "constant", "prefixLen": 5},
    "runtime.deepEquals.strict_vs_loose": {"loose": True, "strict": False, "diverges": True},
    "runtime.deepEquals.docs_matrix": {"ok": True, "cases": 6},
    "runtime.escapeHTML": {"hasLt": True, "hasAmp": True, "hasQuot": True, "rawUnsafe": False},
}
_TIMESTAMP = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$")


@rule("snapshot-ok", "ok is true: the snapshot was produced (spec 2.1)")
def _snapshot_ok(snap: dict[str, Any], _: RuleContext) -> list[str]:
    return [] if snap["ok"] is True else [f"$.ok is {json_line(snap['ok'], QUOTED)}"]


@rule("timestamps", "every generatedAt is a real UTC calendar time with milliseconds (2.1, 9)")
def _timestamps(snap: dict[str, Any], _: RuleContext) -> list[str]:
    places = {
        "$.generatedAt": snap["generatedAt"],
        "$.enhancements.generatedAt": snap["enhancements"]["generatedAt"],
        "$.shadow.generatedAt": snap["shadow"]["generatedAt"],
        "$.shadow.proof.generatedAt": snap["shadow"]["proof"]["generatedAt"],
        "$.integrity.proof.generatedAt": snap["integrity"]["proof"]["generatedAt"],
    }
    bad = []
    for where, value in places.items():
        try:
            if not (isinstance(value, str) and _TIMESTAMP.match(value)):
                raise ValueError(value)
            datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ")
        except ValueError:
            bad.append(f"{where} {json_line(value, QUOTED)}")
    return bad


@rule("runtime", "each proof's bunVersion names the server runtime: not blank (spec 2.3)")
def _runtime(snap: dict[str, Any], _: RuleContext) -> list[str]:
    return [
        f"$.{block}.proof.bunVersion"
        for block in ("shadow", "integrity")
        if not (
            isinstance(snap[block]["proof"]["bunVersion"], str)
            and snap[block]["proof"]["bunVersion"].strip()
        )
    ]


@rule("board-features", "the self-checks are exactly the 8 of spec 2.2, once each")
def _board_features(snap: dict[str, Any], _: RuleContext) -> list[str]:
    counts = Counter(r["feature"] for r in snap["enhancements"]["rows"])
    bad = [f"{f} missing" for f in SPEC_EXPECTED if counts[f] == 0]
    bad += [f"{f} {n} times" for f, n in counts.items() if f in SPEC_EXPECTED and n > 1]
    bad += [
        f"{json_line(f, QUOTED)} is not a feature of spec 2.2"
        for f in counts
        if f not in SPEC_EXPECTED
    ]
    return bad


@rule("board-expected", "each self-check's expectedState is the value spec 2.2 expects")
def _board_expected(snap: dict[str, Any], _: RuleContext) -> list[str]:
    bad = []
    for i, row in enumerate(snap["enhancements"]["rows"]):
        feature, expected = row["feature"], row["expectedState"]
        if feature == "health.states":
            states = expected["states"]
            good = (
                set(expected) == {"ok", "states"}
                and expected["ok"] is True
                and bool(states)
                and len(set(states)) == len(states)
            )
        else:
            good = feature not in SPEC_EXPECTED or strict_equals(expected, SPEC_EXPECTED[feature])
        if not good:
            bad.append(f"$.enhancements.rows[{i}] {feature}")
    return bad


@rule("board-match", "each self-check's match is strict equality of expected and actual (2.2)")
def _board_match(snap: dict[str, Any], _: RuleContext) -> list[str]:
    return [
        f"$.enhancements.rows[{i}].match"
        for i, r in enumerate(snap["enhancements"]["rows"])
        if r["match"] is not strict_equals(r["expectedState"], r["actualState"])
    ]


@rule("board-count", "the self-checks' passed/total count the rows (spec 2.2)")
def _board_count(snap: dict[str, Any], _: RuleContext) -> list[str]:
    board = snap["enhancements"]
    rows = board["rows"]
    passed = sum(r["match"] is True for r in rows)
    counted = board["passed"] == passed and board["total"] == len(rows)
    return [] if counted else [f"passed/total {board['passed']}/{board['total']}"]
