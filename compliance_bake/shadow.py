"""The shadow matrix (spec 2.3): every regulated state x every partner.

The real decision is whatever the target answers. The shadow decision is computed here, straight
from the licence registry, without the engine: the control of a control-vs-candidate experiment.
Each pair is checked with the state's first permitted wager type (README, Fixtures).
"""

from __future__ import annotations

from typing import Any

from compliance_bake.models import LICENCE_ACTIVE, LicenceRegistry
from compliance_bake.progress import NoProgress, ProgressSink
from compliance_bake.target.interface import CheckRequest, Target


def shadow_allowed(registry: LicenceRegistry, partner: str, state: str, wager_type: str) -> bool:
    rules = registry.state(state)
    return (
        rules is not None
        and wager_type in rules.wager_types
        and registry.licence_status(partner, state) == LICENCE_ACTIVE
    )


def matrix_size(registry: LicenceRegistry) -> int:
    return len(registry.states) * len(registry.partners)


def run_shadow(
    target: Target, registry: LicenceRegistry, progress: ProgressSink | None = None
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The rows and the summary; the caller adds timestamps, base and proof."""
    sink = progress or NoProgress()
    pairs = [(rules, partner) for rules in registry.states for partner in registry.partners]
    requests = (CheckRequest(p.node_id, s.code, s.wager_types[0]) for s, p in pairs)
    sink.begin("shadow matrix", len(pairs))
    decisions = target.check_many(requests, sink.advance)
    rows: list[dict[str, Any]] = []
    allow = mismatches = 0
    for (rules, partner), decision in zip(pairs, decisions, strict=True):
        state = rules.code
        shadow = shadow_allowed(registry, partner.node_id, state, rules.wager_types[0])
        real = decision.allowed
        row: dict[str, Any] = {
            "state": state,
            "partner": partner.node_id,
            "licenseStatus": partner.licences.get(state),
            "realAllowed": real,
            "shadowAllowed": shadow,
            "match": real is shadow,
        }
        if real:
            allow += 1
        else:
            row["reason"] = f"Partner not licensed in {state}"
        if real is not shadow:
            mismatches += 1
        rows.append(row)
    sink.end()
    summary = {"allow": allow, "block": len(rows) - allow, "mismatches": mismatches}
    return rows, summary
