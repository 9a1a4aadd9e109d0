"""The shadow matrix (spec 2.3): every regulated state x every partner.

The real decision is whatever the target answers. The shadow decision is computed here, straight
from the licence registry, without the engine: the control of a control-vs-candidate experiment.
Each pair is checked with the state's first permitted wager type (README, Fixtures). A target
that answers fewer or more decisions than asked is a target failure.

Speed (50 states x 10,000 partners is 500,000 rows): the rows are built state by state from one
column of licence statuses per state, and the cyclic garbage collector is paused meanwhile (every
row is kept, so its passes would free nothing and cost about a second).
"""

from __future__ import annotations

from typing import TypeAlias

from compliance_bake.errors import TargetError
from compliance_bake.inputs.models import LICENCE_ACTIVE, LicenceRegistry
from compliance_bake.memory import gc_paused
from compliance_bake.progress import NoProgress, ProgressSink
from compliance_bake.targets.interface import CheckRequest, Target

# A row's values are strings, booleans and null: the type holds no float, so the row list is
# canonicalised without a float scan (signing.canon.canon_floatless).
ShadowRow: TypeAlias = dict[str, str | bool | None]


def matrix_size(registry: LicenceRegistry) -> int:
    return len(registry.states) * len(registry.partners)


def run_shadow(
    target: Target, registry: LicenceRegistry, progress: ProgressSink | None = None
) -> tuple[list[ShadowRow], dict[str, int]]:
    """The rows (states outer, partners inner) and the summary; the caller adds timestamps,
    base and proof. The shadow decision of a pair is: the partner's licence in the state is
    `active` (the wager type, the state's first, is permitted by construction)."""
    sink = progress or NoProgress()
    states, partners = registry.states, registry.partners
    node_ids = [partner.node_id for partner in partners]
    width = len(node_ids)
    requests = (
        CheckRequest(node_id, rules.code, rules.wager_types[0])
        for rules in states
        for node_id in node_ids
    )
    total = matrix_size(registry)
    sink.begin("shadow matrix", total)
    rows: list[ShadowRow] = []
    append = rows.append
    allow = mismatches = 0
    with gc_paused():
        real_allowed = [d.allowed for d in target.check_many(requests, sink.advance)]
        if len(real_allowed) != total:
            raise TargetError(
                f"{target.base}: answered {len(real_allowed)} of {total} checks",
                "check the target's health and retry",
            )
        for index, rules in enumerate(states):
            state = rules.code
            # spec 2.3 and 3: `active`, else null (a suspended, revoked or expired licence is
            # no active licence; the documented set has no other value).
            statuses = [
                LICENCE_ACTIVE if partner.licences.get(state) == LICENCE_ACTIVE else None
                for partner in partners
            ]
            reason = f"Partner not licensed in {state}"
            answers = real_allowed[index * width : (index + 1) * width]
            for node_id, status, real in zip(node_ids, statuses, answers, strict=True):
                shadow = status == LICENCE_ACTIVE
                row: ShadowRow = {
                    "state": state,
                    "partner": node_id,
                    "licenseStatus": status,
                    "realAllowed": real,
                    "shadowAllowed": shadow,
                    "match": real is shadow,
                }
                if real:
                    allow += 1
                else:
                    row["reason"] = reason
                if real is not shadow:
                    mismatches += 1
                append(row)
    sink.end()
    summary = {"allow": allow, "block": len(rows) - allow, "mismatches": mismatches}
    return rows, summary
