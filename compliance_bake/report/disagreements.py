"""Where a shadow row's decisions came from, and the ways a target can disagree with the licence
registry or with itself: one classification, used by the bake, `verify`, `diff`, the reports and
the portal, so that every one of them names a disagreement the same way.

The registry's decision for a pair is its `licenseStatus` (spec 2.3: `active` allows, null
blocks; the wager asked is the state's first permitted type). The real decision and its reason
are the target's. The shadow decision is the target's own shadow answer when the target has one
(a profile's `[shadow]`), else the registry's. A row is classified from those alone, so a
snapshot's recorded counts can be computed again from its rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple, Protocol

from compliance_bake.findings import FAIL, WARN
from compliance_bake.report.escape import json_line

# `shadow.sources`: which party gave each column of the rows.
SOURCE_TARGET = "target"
SOURCE_TARGET_SHADOW = "target shadow check"
SOURCE_REGISTRY = "licence registry"


def sources(shadow_from_target: bool) -> dict[str, str]:
    """The `shadow.sources` object: realAllowed, shadowAllowed, licenseStatus, reason."""
    return {
        "realAllowed": SOURCE_TARGET,
        "shadowAllowed": SOURCE_TARGET_SHADOW if shadow_from_target else SOURCE_REGISTRY,
        "licenseStatus": SOURCE_REGISTRY,
        "reason": SOURCE_TARGET,
    }


ALLOWED_WITHOUT_LICENCE = "allowedWithoutLicence"
LICENCE_BLOCK_WITH_LICENCE = "licenceBlockWithLicence"
OTHER_BLOCK_WITH_LICENCE = "otherBlockWithLicence"
REAL_SHADOW_DIFFER = "realShadowDiffer"
REASON_NOT_SPEC_FORM = "reasonNotInSpecForm"
BLOCK_WITHOUT_REASON = "blockWithoutReason"

# Each kind's key in `shadow.disagreements` and the words every output names it by.
KINDS: dict[str, str] = {
    ALLOWED_WITHOUT_LICENCE: "allowed without an active licence",
    LICENCE_BLOCK_WITH_LICENCE: "blocked for a licence reason with an active licence",
    OTHER_BLOCK_WITH_LICENCE: "blocked for another reason with an active licence",
    REAL_SHADOW_DIFFER: "real and shadow differ",
    REASON_NOT_SPEC_FORM: "reason not in the specification's form",
    BLOCK_WITHOUT_REASON: "blocked without a reason",
}

# Each kind's severity (findings.py). FAIL fails a bake (exit 1) and `verify`: the target departs
# from the registry or from itself. WARN is reported (the bake's output, `verify`'s notes) and
# does not fail: the row holds the target's words, or says it gave none, and a service may give
# no reason at all (docs/service-api.md: `reason` is optional).
SEVERITY: dict[str, str] = {
    ALLOWED_WITHOUT_LICENCE: FAIL,
    LICENCE_BLOCK_WITH_LICENCE: FAIL,
    OTHER_BLOCK_WITH_LICENCE: FAIL,
    REAL_SHADOW_DIFFER: FAIL,
    REASON_NOT_SPEC_FORM: WARN,
    BLOCK_WITHOUT_REASON: WARN,
}
FAILING = tuple(kind for kind, severity in SEVERITY.items() if severity == FAIL)


def failing(counts: Mapping[str, int] | None) -> list[str]:
    """The labels of the failing kinds with rows, in KINDS order."""
    found = counts or {}
    return [KINDS[kind] for kind in FAILING if found.get(kind)]


class RowKind(NamedTuple):
    """The kind of a row (report/row_kinds.py): its members but the partner, named as
    `ShadowRow`'s, so that a kind and a row are classified alike (`classify_row`)."""

    state: str
    license_status: str | None
    real_allowed: bool
    shadow_allowed: bool
    match: bool
    reason: str | None  # None where the row has none

    @classmethod
    def of_json(cls, row: Mapping[str, Any]) -> RowKind:
        """The kind of a row as the snapshot's JSON holds it."""
        return cls(
            row["state"], row["licenseStatus"], row["realAllowed"], row["shadowAllowed"],
            row["match"], row.get("reason"),
        )  # fmt: skip


class Row(Protocol):
    """What a row is classified by: a `ShadowRow` or a `RowKind`."""

    @property
    def state(self) -> str: ...
    @property
    def license_status(self) -> str | None: ...
    @property
    def real_allowed(self) -> bool: ...
    @property
    def shadow_allowed(self) -> bool: ...
    @property
    def reason(self) -> str | None: ...


def licence_reason(state: str) -> str:
    """The specification's reason for a block (spec 2.3, 7): the licence one."""
    return f"Partner not licensed in {state}"


def classify_row(row: Row, shadow_from_target: bool) -> tuple[str, ...]:
    """The disagreement kinds of one row, in KINDS order (none for a row that agrees)."""
    found: list[str] = []
    real, state, reason = row.real_allowed, row.state, row.reason
    active = row.license_status == "active"
    spec_form = reason == licence_reason(state)
    if real and not active:
        found.append(ALLOWED_WITHOUT_LICENCE)
    if not real and active:
        found.append(LICENCE_BLOCK_WITH_LICENCE if spec_form else OTHER_BLOCK_WITH_LICENCE)
    if shadow_from_target and real is not row.shadow_allowed:
        found.append(REAL_SHADOW_DIFFER)
    if not real and reason is not None and not spec_form:
        found.append(REASON_NOT_SPEC_FORM)
    if not real and reason is None:
        found.append(BLOCK_WITHOUT_REASON)
    return tuple(found)


def count(kinds: Iterable[tuple[RowKind, int]], shadow_from_target: bool) -> dict[str, int]:
    """`shadow.disagreements`: how many rows of each kind, every kind named (0 when none)."""
    counts = dict.fromkeys(KINDS, 0)
    for row, rows in kinds:
        for kind in classify_row(row, shadow_from_target):
            counts[kind] += rows
    return counts


def fails(kinds: Iterable[str]) -> bool:
    """Whether a row with these kinds is one the bake fails on: every output that lists failing
    pairs (the terminal's short summary, the portal's banner) lists exactly these rows."""
    return any(SEVERITY[kind] == FAIL for kind in kinds)


def named(counts: dict[str, int]) -> list[str]:
    """`2 allowed without an active licence`, ... for each kind with rows."""
    return [f"{n} {KINDS[kind]}" for kind, n in counts.items() if n and kind in KINDS]


def pair_words(state: str, partner: str, reason: str | None) -> str:
    """`NJ node-x ("the target's reason")`, or `(no reason given)`: a pair as every output
    names it, with the target's words as given (a caller escapes them for a terminal)."""
    return f"{state} {partner} ({reason_words(reason)})"


def reason_words(reason: str | None) -> str:
    """The target's reason as given, quoted, or that it gave none."""
    return "no reason given" if reason is None else json_line(reason)
