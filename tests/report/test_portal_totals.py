"""The portal's totals of a large matrix equal the rows counted one by one, mismatches included."""

from __future__ import annotations

import re
from typing import Any

from compliance_bake.report.portal import GRID_LIMIT, MISMATCH_LIMIT, render_portal
from tests.report.test_portal import _snapshot


def _row(state: str, index: int) -> dict[str, Any]:
    real, shadow = index % 3 == 0, index % 5 == 0
    row: dict[str, Any] = {
        "state": state,
        "partner": f"p{index}",
        "licenseStatus": "active" if shadow else None,
        "realAllowed": real,
        "shadowAllowed": shadow,
        "match": real is shadow,
    }
    if not real:
        row["reason"] = f"Partner not licensed in {state}"
    return row


def test_totals_by_state_count_every_row(baked: Any) -> None:
    snap = _snapshot(baked)
    states = ["NJ", "MA", "NY"]  # first appearance, not alphabetical
    rows = [_row(states[i % 7 % 3], i) for i in range(GRID_LIMIT + 2_000)]
    snap["shadow"]["rows"] = rows
    page = render_portal(snap).decode("utf-8")

    found = re.findall(
        r"<tr><td>([A-Z]{2})</td><td>([\d,]+)</td><td>([\d,]+)</td><td class=\"(?:ok|bad)\">"
        r"([\d,]+)</td></tr>",
        page,
    )
    expected = []
    for state in dict.fromkeys(row["state"] for row in rows):
        mine = [row for row in rows if row["state"] == state]
        allow = sum(1 for row in mine if row["realAllowed"])
        mismatches = sum(1 for row in mine if not row["match"])
        expected.append((state, f"{allow:,}", f"{len(mine) - allow:,}", f"{mismatches:,}"))
    assert found == expected
    listed = re.findall(
        r'<tr class="cell-mismatch"><td data-label="State">[A-Z]{2}</td>'
        r'<td data-label="Partner"><code>(p\d+)</code>',
        page,
    )
    assert listed == [row["partner"] for row in rows if not row["match"]][:MISMATCH_LIMIT]
