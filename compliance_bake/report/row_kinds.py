"""The shadow rows' kinds: a row's members but the partner, with how many rows have each.

A 500,000-row matrix has a few kinds per state, so every question that does not need the
partner is asked of the kinds, once each, instead of row by row: the disagreements
(report/disagreements.py), the portal's totals per state, the schema's row definition, and
`verify`'s rules (verify/columns.py). The bake counts the kinds once, on the rows it built;
`verify` counts them once, on the rows it read; both then ask the same functions below.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from operator import attrgetter
from typing import Any

from compliance_bake.report.disagreements import RowKind
from compliance_bake.report.models import ShadowRow

Totals = dict[str, dict[str, int]]


_KIND = attrgetter("state", "license_status", "real_allowed", "shadow_allowed", "match", "reason")


def row_kinds(rows: Iterable[ShadowRow]) -> Counter[RowKind]:
    """The rows of each kind, the kinds in the order they first appear (`attrgetter` reads a
    row's members at C speed, faster than a generator)."""
    return Counter(map(_KIND, rows))


def state_totals(kinds: Counter[RowKind]) -> Totals:
    """The portal's totals: per state "allow", "block" and "mismatches", the states in the order
    of their first row."""
    totals: Totals = {}
    for (state, _, real, _, match, _), count in kinds.items():
        counts = totals.setdefault(state, {"allow": 0, "block": 0, "mismatches": 0})
        counts["allow" if real else "block"] += count
        if not match:
            counts["mismatches"] += count
    return totals


# The snapshot schema's `shadowRow` definition (schemas/compliance-snapshot.schema.json), as
# `rows_meet_schema` asks it; tests/verify/test_row_schema.py pins that definition and holds
# the two to the validator's verdict. The schema's `^...$` is matched whole here: a JSON Schema
# `$` does not match before a final newline, as Python's does.
_ROW_STATE = re.compile(r"[A-Z]{2}")
_ROW_STATUSES = ("active", None)


def rows_meet_schema(kinds: Counter[RowKind], partners: Iterable[Any]) -> bool:
    """Whether rows of these kinds, with these partners, meet the snapshot schema's `shadowRow`
    definition: the schema's verdict on a large snapshot's rows, asked once per kind.

    Kept because the validator walks each of the row objects of a large snapshot, a cost
    `make bench`'s figures show. A `ShadowRow`
    has exactly the definition's members, and renders a None reason by leaving it out; so what
    is left is each member's type and value: each state's pattern, licenseStatus `active` or
    null, three booleans, a non-empty partner, and no reason when realAllowed is true (a
    block's reason is the target's: any non-empty text, or none). The types are asked too, so
    that rows built in memory, whose fields nothing has type-checked, are held to the same rule
    as rows decoded from a file. `partners`: the partners of rows built in memory (the bake's);
    a decode has held each decoded row's partner to `ShadowRow.partner` already."""
    return all(
        type(state) is str
        and _ROW_STATE.fullmatch(state) is not None
        and status in _ROW_STATUSES
        and type(real) is bool
        and type(shadow) is bool
        and type(match) is bool
        and (reason is None if real else reason is None or (type(reason) is str and reason != ""))
        for state, status, real, shadow, match, reason in kinds
    ) and all(type(partner) is str and partner != "" for partner in partners)
