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

from compliance_bake.inputs.schemas import SNAPSHOT, SchemaViolation, first_violation
from compliance_bake.report.disagreements import RowKind
from compliance_bake.report.models import ShadowRow

Totals = dict[str, dict[str, int]]


_KIND = attrgetter("state", "license_status", "real_allowed", "shadow_allowed", "match", "reason")


def row_kinds(rows: Iterable[ShadowRow]) -> Counter[RowKind]:
    """The rows of each kind, the kinds in the order they first appear. `attrgetter` reads a
    row's members at C speed into plain tuples; the few distinct ones are then named."""
    return Counter({RowKind._make(kind): n for kind, n in Counter(map(_KIND, rows)).items()})


def state_totals(kinds: Counter[RowKind]) -> Totals:
    """The portal's totals: per state "allow", "block" and "mismatches", the states in the order
    of their first row."""
    totals: Totals = {}
    for kind, count in kinds.items():
        counts = totals.setdefault(kind.state, {"allow": 0, "block": 0, "mismatches": 0})
        counts["allow" if kind.real_allowed else "block"] += count
        if not kind.match:
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
        type(k.state) is str
        and _ROW_STATE.fullmatch(k.state) is not None
        and k.license_status in _ROW_STATUSES
        and type(k.real_allowed) is bool
        and type(k.shadow_allowed) is bool
        and type(k.match) is bool
        and reason_holds(k)
        for k in kinds
    ) and all(type(partner) is str and partner != "" for partner in partners)


def snapshot_violation(
    document: Any, kinds: Counter[RowKind] | None, partners: Iterable[Any] = ()
) -> SchemaViolation | None:
    """The snapshot's first schema violation, None when it meets the schema: the bake's and
    `verify`'s question. `kinds`: its shadow rows' kinds (None when not counted).

    When the kinds and `partners` meet the row definition (`rows_meet_schema`), the validator
    is given the document with its rows left out, which the schema then holds to every other
    rule (it asks of `rows` only that each item is a row). Anything it finds there, and any row
    that does not meet the definition, is validated again on the whole document: a refusal is
    always the validator's own, with its place and words."""
    if kinds is not None and rows_meet_schema(kinds, partners):
        rest = {**document, "shadow": {**document["shadow"], "rows": []}}
        if first_violation(SNAPSHOT, rest) is None:
            return None
    return first_violation(SNAPSHOT, document)


def reason_holds(kind: RowKind) -> bool:
    """An allowed row has no reason; a blocked one's, when it has one, is a non-empty string
    (the target's, as given; its form is a disagreement kind)."""
    reason = kind.reason
    if kind.real_allowed:
        return reason is None
    return reason is None or (type(reason) is str and reason != "")
