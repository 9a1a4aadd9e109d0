"""The portal's totals per state, counted on the rows' kinds (report/row_kinds.py), are the
count of the rows one by one, the states in the order of their first row."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from compliance_bake.report.models import ShadowRow
from compliance_bake.report.row_kinds import row_kinds, state_totals

_rows = st.builds(
    ShadowRow,
    state=st.sampled_from(["AL", "MA", "NJ"]),
    partner=st.sampled_from(["p-1", "p-2"]),
    license_status=st.sampled_from(["active", None]),
    real_allowed=st.booleans(),
    shadow_allowed=st.booleans(),
    match=st.booleans(),
    reason=st.sampled_from([None, "Partner not licensed in AL", "identity"]),
)


def _one_by_one(rows: list[ShadowRow]) -> dict[str, dict[str, int]]:
    totals: dict[str, dict[str, int]] = {}
    for row in rows:
        counts = totals.setdefault(row.state, {"allow": 0, "block": 0, "mismatches": 0})
        counts["allow" if row.real_allowed else "block"] += 1
        counts["mismatches"] += not row.match
    return totals


@settings(max_examples=300, deadline=None)
@given(st.lists(_rows, max_size=12))
def test_the_totals_on_the_kinds_are_the_rows_counted_one_by_one(rows: list[ShadowRow]) -> None:
    totals = state_totals(row_kinds(rows))
    assert totals == _one_by_one(rows)
    assert list(totals) == list(_one_by_one(rows))
    assert sum(row_kinds(rows).values()) == len(rows)
