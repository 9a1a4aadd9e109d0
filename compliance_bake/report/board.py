"""The board (spec 2.2, the snapshot's `enhancements`): eight features, each measured on the
running code.

Every row's `actualState` comes from calling the thing it checks: the target for health, check and
status; the key store for identity; the comparators and the escape function for runtime.*.
`expectedState` comes from the specification and the fixtures. `match` is strict deep equality.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import orjson

from compliance_bake.errors import FixtureError
from compliance_bake.inputs.files import FIXTURE_MAX_BYTES, read_regular_file
from compliance_bake.inputs.models import (
    LICENCE_ACTIVE,
    STATUS_ALLOWED,
    STATUS_BLOCKED,
    LicenceRegistry,
)
from compliance_bake.inputs.registry_source import folder_of
from compliance_bake.report import deepequal, escape, key_probe
from compliance_bake.report.models import UNSIGNED, Board, BoardRow, JsonObject
from compliance_bake.targets.inprocess import IN_PROCESS_BASE
from compliance_bake.targets.interface import Target

LICENSED_STATE = "MA"
UNLICENSED_STATE = "NJ"
TOTALS_WAGER = "basketball.totals"
SOCCER_WAGER = "soccer.moneyline"
BOARD_WAGER_TYPES = (TOTALS_WAGER, SOCCER_WAGER)  # the wager types the board's checks ask
PREFIX_LEN_SPEC = 5  # spec 5.1 and 8; keys.PREFIX_LEN is what the code does
ESCAPE_PROBE = '<td title="x">Tom & Jerry\'s</td>'
_RAW_AMPERSAND = re.compile(r"&(?!(?:amp|lt|gt|quot|#34|#39|#x27);)")


def _row(feature: str, expected: JsonObject, actual: JsonObject, notes: str) -> BoardRow:
    """A row whose `match` is the strict deep equality of what was expected and measured."""
    return BoardRow(feature, expected, actual, deepequal.strict_equals(expected, actual), notes)


def _find_partner(registry: LicenceRegistry, state: str, licensed: bool) -> str | None:
    for partner in registry.partners:
        if (partner.licences.get(state) == LICENCE_ACTIVE) == licensed:
            return partner.node_id
    return None


def _partner_where(registry: LicenceRegistry, state: str, licensed: bool, feature: str) -> str:
    found = _find_partner(registry, state, licensed)
    if found is None:  # run_board checked the roles first; this is a programming error
        raise LookupError(f"{feature}: no partner for {state}")
    return found


# The partners the board's features need: (state, licensed there, the first feature needing it).
ROLES = (
    (LICENSED_STATE, True, "check.ma_licensed_nba_totals"),
    (UNLICENSED_STATE, False, "check.nj_unlicensed_block"),
)


def check_roles(registry: LicenceRegistry, licences_file: str) -> None:
    """Refuse, as bad input, a licence fixture that lacks a partner the board needs."""
    for state, licensed, feature in ROLES:
        if _find_partner(registry, state, licensed) is None:
            kind = "holds an active" if licensed else "lacks an active"
            raise FixtureError(
                f"{licences_file}: $.partners: no partner {kind} licence in {state}; "
                f"the self-check {feature} needs one",
                "add such a partner (see `compliance-bake docs fixtures`)",
            )


@dataclass(frozen=True, slots=True)
class BoardInputs:
    """What the rows measure against: the loaded licences, and the file they came from."""

    registry: LicenceRegistry
    licences_file: str


def filed_states(licences_file: str) -> list[str]:
    """The state codes of `licences_file`, read again from disk and not through the loader,
    so that the health row compares the answer with the file, not a tuple with itself.

    The loader has read the file strictly already; this second reading only takes the codes,
    with orjson, faster than the strict reader."""
    path = Path(licences_file)
    try:
        document = orjson.loads(
            read_regular_file(
                path, max_bytes=FIXTURE_MAX_BYTES, what="licences file", error=FixtureError
            )
        )
        return [str(state["code"]) for state in document["states"]]
    except (OSError, orjson.JSONDecodeError, TypeError, KeyError) as exc:
        raise FixtureError(
            f"{licences_file}: cannot read its states again ({type(exc).__name__})",
            "leave the fixture folder alone while a bake runs",
        ) from None


def _health(target: Target, inputs: BoardInputs) -> BoardRow:
    health = target.health()
    # A database registry's states were read once, in its one read-only transaction.
    from_file = folder_of(inputs.licences_file) is not None
    states = (
        filed_states(inputs.licences_file) if from_file else list(inputs.registry.regulated_states)
    )
    return _row(
        "health.states",
        {"ok": True, "states": states},
        {"ok": health.ok, "states": list(health.states)},
        "health route lists the regulated states" + _on_target(target),
    )


def _on_target(target: Target) -> str:
    """What an HTTP target's row measured: the service. In process, every row is measured in
    this process, as `shadow.base` (in-process://) says, and the notes stay as they were."""
    return "" if target.base == IN_PROCESS_BASE else "; measured on the target"


def _asked(target: Target, partner: str, state: str, wager_type: str) -> str:
    """`; measured on the target, asked: <the question as sent>` for an HTTP target."""
    if target.base == IN_PROCESS_BASE:
        return ""
    return f"{_on_target(target)}, asked: {target.question(partner, state, wager_type)}"


def _in_here(target: Target, what: str) -> str:
    """What a row measured when it is not the target: compliance-bake itself."""
    if target.base == IN_PROCESS_BASE:
        return ""
    return f"; measured in compliance-bake itself ({what}), not on the target"


def _decision(
    target: Target, inputs: BoardInputs, feature: str, state: str, wager: str, licensed: bool
) -> BoardRow:
    """A check for a partner licensed (or not) in `state`: allowed exactly when licensed."""
    partner = _partner_where(inputs.registry, state, licensed, feature)
    decision = target.check(partner, state, wager)
    expected = STATUS_ALLOWED if licensed else STATUS_BLOCKED
    said = (
        f"{partner} licensed in {state}: straight {wager} wager is allowed"
        if licensed
        else f"{partner} not licensed in {state}: {wager} wager is blocked"
    )
    return _row(
        feature,
        {"allowed": licensed, "status": expected},
        {"allowed": decision.allowed, "status": decision.status},
        said + _asked(target, partner, state, wager),
    )


def _check_licensed(target: Target, inputs: BoardInputs) -> BoardRow:
    feature = "check.ma_licensed_nba_totals"
    return _decision(target, inputs, feature, LICENSED_STATE, TOTALS_WAGER, True)


def _check_unlicensed(target: Target, inputs: BoardInputs) -> BoardRow:
    feature = "check.nj_unlicensed_block"
    return _decision(target, inputs, feature, UNLICENSED_STATE, SOCCER_WAGER, False)


def _status(target: Target, inputs: BoardInputs) -> BoardRow:
    partner = _partner_where(inputs.registry, LICENSED_STATE, True, "status.ma_licensed_shape")
    panel = target.status(LICENSED_STATE, partner)
    return _row(
        "status.ma_licensed_shape",
        {"ok": True, "state": LICENSED_STATE, "licenseStatus": LICENCE_ACTIVE, "hasLimits": True},
        {
            "ok": panel.ok,
            "state": panel.state,
            "licenseStatus": panel.license_status,
            "hasLimits": panel.has_limits,
        },
        f"status panel of {LICENSED_STATE} for {partner}: active licence with limits"
        + _on_target(target),
    )


def _identity(target: Target, inputs: BoardInputs) -> BoardRow:
    """Measured here, on the package's KeyStore (report/key_probe.py): the same code `serve`
    runs. With an HTTP target the notes say so; the service's keys are not reachable."""
    found = key_probe.measure_key_store()
    (small, large) = found.touched
    notes = f"key store touched {small} entries with 1 key and {large} with 64 keys per lookup"
    if target.base != IN_PROCESS_BASE:
        notes += (
            f"; measured in compliance-bake itself on the package's KeyStore "
            f"(compliance_bake.identity.keys, the code `compliance-bake serve` runs), not over "
            f"HTTP: comparisons per lookup {list(found.comparisons)} with {found.compare_name}"
        )
    return _row(
        "identity.agent_key_prefix",
        {"method": "prefix_lookup", "timing": "constant", "prefixLen": PREFIX_LEN_SPEC},
        {"method": found.method, "timing": found.timing, "prefixLen": found.prefix_len},
        notes,
    )


def _strict_vs_loose(target: Target, inputs: BoardInputs) -> BoardRow:
    left, right = deepequal.STRICT_VS_LOOSE_PAIR
    loose = deepequal.loose_equals(left, right)
    strict = deepequal.strict_equals(left, right)
    return _row(
        "runtime.deepEquals.strict_vs_loose",
        {"loose": True, "strict": False, "diverges": True},
        {"loose": loose, "strict": strict, "diverges": loose != strict},
        "{allowed: True} vs {allowed: 1}: equal loosely, unequal strictly"
        + _in_here(target, "the self-checks' own comparisons"),
    )


def _docs_matrix(target: Target, inputs: BoardInputs) -> BoardRow:
    holding = [
        name
        for name, left, right in deepequal.DOCS_MATRIX
        if deepequal.loose_equals(left, right) and not deepequal.strict_equals(left, right)
    ]
    return _row(
        "runtime.deepEquals.docs_matrix",
        {"ok": True, "cases": 6},
        {"ok": len(holding) == len(deepequal.DOCS_MATRIX), "cases": len(holding)},
        "strict inequality: undefined properties, sparse arrays, class instance vs plain object"
        + _in_here(target, "the self-checks' own comparisons"),
    )


def _escape(target: Target, inputs: BoardInputs) -> BoardRow:
    out = str(escape.escape_html(ESCAPE_PROBE))
    return _row(
        "runtime.escapeHTML",
        {"hasLt": True, "hasAmp": True, "hasQuot": True, "rawUnsafe": False},
        {
            "hasLt": "&lt;" in out,
            "hasAmp": "&amp;" in out,
            "hasQuot": "&#34;" in out or "&quot;" in out,
            "rawUnsafe": any(c in out for c in "<>\"'") or bool(_RAW_AMPERSAND.search(out)),
        },
        "the portal's cell escape on a probe with <, >, &, \" and '"
        + _in_here(target, "the portal's escaper"),
    )


FEATURES: tuple[Callable[[Target, BoardInputs], BoardRow], ...] = (
    _health,
    _check_licensed,
    _check_unlicensed,
    _status,
    _identity,
    _strict_vs_loose,
    _docs_matrix,
    _escape,
)


def run_board(
    target: Target,
    registry: LicenceRegistry,
    licences_file: str,
    generated_at: str,
    console_depth: int,
) -> Board:
    """The board with every feature measured, not yet signed (`signature` is UNSIGNED)."""
    check_roles(registry, licences_file)
    inputs = BoardInputs(registry, licences_file)
    rows = [feature(target, inputs) for feature in FEATURES]
    return Board(
        generated_at=generated_at,
        console_depth=console_depth,
        rows=rows,
        passed=sum(row.match for row in rows),
        total=len(rows),
        signature=UNSIGNED,
    )
