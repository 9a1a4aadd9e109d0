"""The shadow rows as columns, read once at C speed, for the rules that look at every row.

A rule over 500,000 rows walked in Python takes about a second; the same question asked of
columns (`map`, `set`, `list.count`) takes a few milliseconds. Each fast check only ever says
"the rule holds": when it cannot show that, the rule walks the rows as before and names the
places, so the findings are the row-by-row ones in every case. `shadow_columns` is None unless
every row is an object with every field the rules read (a rule then walks, and fails closed).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from operator import itemgetter, methodcaller
from typing import Any

FIELDS = ("state", "partner", "licenseStatus", "realAllowed", "shadowAllowed", "match")
_REASON = methodcaller("get", "reason")


@dataclass(frozen=True, slots=True)
class ShadowColumns:
    state: list[Any]
    partner: list[Any]
    licence: list[Any]  # licenseStatus
    real: list[Any]  # realAllowed
    shadow: list[Any]  # shadowAllowed
    match: list[Any]
    reason: list[Any]  # None where the row has no reason
    booleans: bool  # realAllowed, shadowAllowed and match hold True or False, nothing else
    states_str: bool  # every state is a string

    def __len__(self) -> int:
        return len(self.state)


def _only(values: Iterable[Any], kind: type) -> bool:
    return set(map(type, values)) <= {kind}


def shadow_columns(snap: dict[str, Any]) -> ShadowColumns | None:
    try:
        rows = snap["shadow"]["rows"]
        if type(rows) is not list or not _only(rows, dict):
            return None
        state, partner, licence, real, shadow, match = (
            list(map(itemgetter(name), rows)) for name in FIELDS
        )
    except (KeyError, TypeError):
        return None
    return ShadowColumns(
        state,
        partner,
        licence,
        real,
        shadow,
        match,
        list(map(_REASON, rows)),
        booleans=all(_only(column, bool) for column in (real, shadow, match)),
        states_str=_only(state, str),
    )


def distinct(*columns: Sequence[Any]) -> set[tuple[Any, ...]] | None:
    """The distinct rows of these columns, or None when a value cannot be hashed. Values equal
    under `==` fold together (`1` with `True`): ask only where that cannot change the answer."""
    try:
        return set(zip(*columns, strict=True))
    except TypeError:
        return None
