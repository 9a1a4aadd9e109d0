"""The snapshot's `waivers` field re-derived (`bake --waivers`, docs/waivers.md).

From the waivers the snapshot records and its `generatedAt`, the bake's own matching function
(waivers/apply.py) says again which waivers applied, expired or went unused and which failing
items each matched; a record that says otherwise (an item marked waived with no waiver, a
waiver already expired at `generatedAt`, a status or a match edited) fails, as does a recorded
expiry more than a year after the clock. Only items the re-derivation waives are left out of
the recorded failures; integrity findings are never waived. A single document has no policy
record beside it: its policy matches are not re-derived (the folder's are).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from compliance_bake.findings import RULE
from compliance_bake.signing.proofs import FAILS
from compliance_bake.verify.findings import VerifyReport
from compliance_bake.waivers.apply import (
    FIELD,
    POLICY,
    Applied,
    applied_to,
    derived_json,
    recorded,
)
from compliance_bake.waivers.read import MAX_DAYS, Waiver

RULE_ID = "waivers-derived"


def waivers_of(snap: Any) -> tuple[Waiver, ...] | None:
    """The recorded waivers, or None: no field, or one the schema refuses."""
    if not isinstance(snap, dict) or FIELD not in snap:
        return None
    try:
        return recorded(snap[FIELD])
    except FAILS:
        return None


def waived_questions(snap: Any, policy: Mapping[str, Any]) -> frozenset[int]:
    """The policy questions whose failing kinds the recorded waivers waive at generatedAt."""
    waivers = waivers_of(snap)
    if waivers is None:
        return frozenset()
    try:
        return applied_to(waivers, snap, policy).settled(POLICY)
    except FAILS:
        return frozenset()


def check_waivers(
    name: str, snap: Any, policy: Mapping[str, Any] | None, report: VerifyReport, folder: bool
) -> Applied | None:
    """The re-derivation's findings; what it waives (None without a `waivers` field)."""
    if not isinstance(snap, dict) or FIELD not in snap:
        return None
    waivers = waivers_of(snap)
    if waivers is None:
        report.add(name, False, f"{FIELD}: not a record of waivers", RULE, RULE_ID)
        return None
    try:
        applied = applied_to(waivers, snap, policy)
        derived = derived_json(snap[FIELD], applied)
        today = datetime.fromisoformat(snap["generatedAt"]).date()
    except FAILS:
        report.add(name, False, f"{FIELD}: cannot be matched to the snapshot", RULE, RULE_ID)
        return None
    record = snap[FIELD]
    wrong = _differences(record, derived, folder)
    latest = today + timedelta(days=MAX_DAYS)
    wrong += [
        f"line {w.line}: expires {w.expires.isoformat()}, more than {MAX_DAYS} days after "
        f"generatedAt"
        for w in waivers
        if w.expires > latest
    ]
    report.add(
        name,
        not wrong,
        f"{FIELD}: every waived item follows from the recorded waivers at generatedAt"
        if not wrong
        else f"{FIELD}: do not follow from the recorded waivers at generatedAt: "
        + "; ".join(wrong),
        RULE,
        RULE_ID,
    )
    return applied


def _differences(record: Any, derived: dict[str, Any], folder: bool) -> list[str]:
    """Where the record and the re-derivation differ; without the policy record (a single
    document) the policy matches and the counts they enter are not compared."""
    found: list[str] = []
    keys = ["applied", "until", "waived"] if folder else []
    found += [f"{k}: recorded {record.get(k)!r}, derived {derived[k]!r}" for k in keys
              if record.get(k) != derived[k]]  # fmt: skip
    mine = record.get("waivers")
    if not isinstance(mine, list) or len(mine) != len(derived["waivers"]):
        return [*found, "the waivers recorded are not the ones matched"]
    for said, made in zip(mine, derived["waivers"], strict=True):
        where = f"line {made['line']} ({made['state']} {made['partner']})"
        if said.get("status") != made["status"] and (folder or made["status"] != "unused"):
            found.append(f"{where}: recorded {said.get('status')}, derived {made['status']}")
        matched = said.get("matched") if isinstance(said.get("matched"), list) else []
        if not folder:
            matched = [m for m in matched if isinstance(m, dict) and m.get("in") != POLICY]
            made = {**made, "matched": [m for m in made["matched"] if m["in"] != POLICY]}
        if matched != made["matched"]:
            found.append(f"{where}: recorded matches {matched}, derived {made['matched']}")
    return found
