"""The shadow matrix as a property: each (state, partner) pair once, agreeing with the registry."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from compliance_bake.inputs.models import LicenceRegistry, Partner, StateRules
from compliance_bake.report.shadow import run_shadow
from compliance_bake.targets.engine import Engine
from compliance_bake.targets.inprocess import InProcessTarget

codes = st.sampled_from(["MA", "NJ", "NY", "PA", "CT", "RI"])
statuses = st.sampled_from(["active", "suspended", "revoked", "expired"])


@st.composite
def registries(draw: st.DrawFn) -> LicenceRegistry:
    states = draw(st.lists(codes, min_size=1, max_size=4, unique=True))
    ids = draw(
        st.lists(st.from_regex(r"[a-z][a-z0-9]{0,6}", fullmatch=True), max_size=8, unique=True)
    )
    partners = tuple(
        Partner(node_id, draw(st.dictionaries(st.sampled_from(states), statuses, max_size=3)))
        for node_id in ids
    )
    rules = tuple(StateRules(code, code, ("basketball.totals",), {}) for code in states)
    return LicenceRegistry(states=rules, partners=partners)


@settings(max_examples=200, deadline=None)
@given(registries())
def test_shadow_rows_cover_the_matrix_and_agree_with_the_registry(
    registry: LicenceRegistry,
) -> None:
    matrix = run_shadow(InProcessTarget(Engine(registry)), registry)
    models, summary = matrix.rows, matrix.summary
    rows = [row.to_json() for row in models]
    assert [(r["state"], r["partner"]) for r in rows] == [
        (s.code, p.node_id) for s in registry.states for p in registry.partners
    ]
    for row in rows:
        status = registry.licence_status(row["partner"], row["state"])
        assert row["licenseStatus"] == (status if status == "active" else None)
        assert row["shadowAllowed"] is row["realAllowed"] is (status == "active")
        assert ("reason" in row) is (not row["realAllowed"])
    allow = sum(r["realAllowed"] for r in rows)
    assert summary.to_json() == {"allow": allow, "block": len(rows) - allow, "mismatches": 0}
