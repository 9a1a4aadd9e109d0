"""The self-check board (spec 2.2): eight features, each measured on the running code.

Every row's `actualState` comes from calling the thing it checks: the target for health, check and
status; the key store for identity; the comparators and the escape function for runtime.*.
`expectedState` comes from the specification and the fixtures. `match` is strict deep equality.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass
from typing import Any

from compliance_bake.errors import FixtureError
from compliance_bake.identity import keys
from compliance_bake.identity.keys import KeyRecord
from compliance_bake.inputs.models import (
    LICENCE_ACTIVE,
    STATUS_ALLOWED,
    STATUS_BLOCKED,
    LicenceRegistry,
)
from compliance_bake.report import deepequal, escape
from compliance_bake.targets.interface import Target

LICENSED_STATE = "MA"
UNLICENSED_STATE = "NJ"
TOTALS_WAGER = "basketball.totals"
SOCCER_WAGER = "soccer.moneyline"
PREFIX_LEN_SPEC = 5  # spec 5.1 and 8; keys.PREFIX_LEN is what the code does
ESCAPE_PROBE = '<td title="x">Tom & Jerry\'s</td>'
_RAW_AMPERSAND = re.compile(r"&(?!(?:amp|lt|gt|quot|#34|#39|#x27);)")


@dataclass(frozen=True, slots=True)
class BoardRow:
    feature: str
    expected: dict[str, Any]
    actual: dict[str, Any]
    notes: str

    @property
    def match(self) -> bool:
        return deepequal.strict_equals(self.expected, self.actual)

    def as_json(self) -> dict[str, Any]:
        return {
            "feature": self.feature,
            "expectedState": self.expected,
            "actualState": self.actual,
            "match": self.match,
            "notes": self.notes,
        }


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
                "add such a partner (see README, Fixtures)",
            )


def _health(target: Target, registry: LicenceRegistry) -> BoardRow:
    health = target.health()
    return BoardRow(
        "health.states",
        {"ok": True, "states": list(registry.regulated_states)},
        {"ok": health.ok, "states": list(health.states)},
        "health route lists the regulated states",
    )


def _check_licensed(target: Target, registry: LicenceRegistry) -> BoardRow:
    partner = _partner_where(registry, LICENSED_STATE, True, "check.ma_licensed_nba_totals")
    decision = target.check(partner, LICENSED_STATE, TOTALS_WAGER)
    return BoardRow(
        "check.ma_licensed_nba_totals",
        {"allowed": True, "status": STATUS_ALLOWED},
        {"allowed": decision.allowed, "status": decision.status},
        f"{partner} licensed in {LICENSED_STATE}: straight {TOTALS_WAGER} wager is allowed",
    )


def _check_unlicensed(target: Target, registry: LicenceRegistry) -> BoardRow:
    partner = _partner_where(registry, UNLICENSED_STATE, False, "check.nj_unlicensed_block")
    decision = target.check(partner, UNLICENSED_STATE, SOCCER_WAGER)
    return BoardRow(
        "check.nj_unlicensed_block",
        {"allowed": False, "status": STATUS_BLOCKED},
        {"allowed": decision.allowed, "status": decision.status},
        f"{partner} not licensed in {UNLICENSED_STATE}: {SOCCER_WAGER} wager is blocked",
    )


def _status(target: Target, registry: LicenceRegistry) -> BoardRow:
    partner = _partner_where(registry, LICENSED_STATE, True, "status.ma_licensed_shape")
    panel = target.status(LICENSED_STATE, partner)
    return BoardRow(
        "status.ma_licensed_shape",
        {"ok": True, "state": LICENSED_STATE, "licenseStatus": LICENCE_ACTIVE, "hasLimits": True},
        {
            "ok": panel.ok,
            "state": panel.state,
            "licenseStatus": panel.license_status,
            "hasLimits": panel.has_limits,
        },
        f"status panel of {LICENSED_STATE} for {partner}: active licence with limits",
    )


class _ObservedIndex(MutableMapping[str, KeyRecord]):
    """A dict that counts how many entries a lookup touches, and by which keys."""

    def __init__(self) -> None:
        self._data: dict[str, KeyRecord] = {}
        self.touched = 0
        self.addressed: list[str] = []

    def __getitem__(self, key: str) -> KeyRecord:
        self.touched += 1
        self.addressed.append(key)
        return self._data[key]

    def __setitem__(self, key: str, value: KeyRecord) -> None:
        self._data[key] = value

    def __delitem__(self, key: str) -> None:
        del self._data[key]

    def __contains__(self, key: object) -> bool:
        self.touched += 1
        return key in self._data

    def __iter__(self) -> Iterator[str]:
        for key in self._data:
            self.touched += 1
            yield key

    def __len__(self) -> int:
        return len(self._data)

    def stored(self) -> list[str]:
        """The stored keys, read without counting (for the probe, not the store)."""
        return list(self._data)

    def reset(self) -> None:
        self.touched = 0
        self.addressed = []


def _flip(char: str) -> str:
    return "b" if char == "a" else "a"


def _lookup_cost(size: int) -> tuple[list[int], set[int], bool]:
    """Index entries touched by a found, a wrong-secret and an unknown-prefix lookup."""
    index = _ObservedIndex()
    store = keys.KeyStore(index)
    minted = [store.mint() for _ in range(size)]
    target_key = minted[-1]
    wrong_rest = target_key[:-1] + _flip(target_key[-1])
    stored = index.stored()
    unknown_key = target_key
    for candidate in ("zzzzz", "yyyyy", "xxxxx", "wwwww"):
        unknown_key = candidate + target_key[len(candidate) :]
        if not any(unknown_key.startswith(k) for k in stored):
            break
    costs: list[int] = []
    found = False
    for presented in (target_key, wrong_rest, unknown_key):
        index.reset()
        record = store.lookup(presented)
        costs.append(index.touched)
        if presented is target_key:
            found = record is not None
    return costs, {len(k) for k in index.stored()}, found


def _identity(target: Target, registry: LicenceRegistry) -> BoardRow:
    small, lengths_small, found_small = _lookup_cost(1)
    large, lengths_large, found_large = _lookup_cost(64)
    direct = found_small and found_large and all(c == 1 for c in small + large)
    constant = len(set(small + large)) == 1
    lengths = lengths_small | lengths_large
    return BoardRow(
        "identity.agent_key_prefix",
        {"method": "prefix_lookup", "timing": "constant", "prefixLen": PREFIX_LEN_SPEC},
        {
            "method": "prefix_lookup" if direct else "scan",
            "timing": "constant" if constant else "varies",
            "prefixLen": lengths.pop() if len(lengths) == 1 else -1,
        },
        f"key store touched {small} entries with 1 key and {large} with 64 keys per lookup",
    )


def _strict_vs_loose(target: Target, registry: LicenceRegistry) -> BoardRow:
    left, right = deepequal.STRICT_VS_LOOSE_PAIR
    loose = deepequal.loose_equals(left, right)
    strict = deepequal.strict_equals(left, right)
    return BoardRow(
        "runtime.deepEquals.strict_vs_loose",
        {"loose": True, "strict": False, "diverges": True},
        {"loose": loose, "strict": strict, "diverges": loose != strict},
        "{allowed: True} vs {allowed: 1}: equal loosely, unequal strictly",
    )


def _docs_matrix(target: Target, registry: LicenceRegistry) -> BoardRow:
    holding = [
        name
        for name, left, right in deepequal.DOCS_MATRIX
        if deepequal.loose_equals(left, right) and not deepequal.strict_equals(left, right)
    ]
    return BoardRow(
        "runtime.deepEquals.docs_matrix",
        {"ok": True, "cases": 6},
        {"ok": len(holding) == len(deepequal.DOCS_MATRIX), "cases": len(holding)},
        "strict inequality: undefined properties, sparse arrays, class instance vs plain object",
    )


def _escape(target: Target, registry: LicenceRegistry) -> BoardRow:
    out = str(escape.escape_html(ESCAPE_PROBE))
    return BoardRow(
        "runtime.escapeHTML",
        {"hasLt": True, "hasAmp": True, "hasQuot": True, "rawUnsafe": False},
        {
            "hasLt": "&lt;" in out,
            "hasAmp": "&amp;" in out,
            "hasQuot": "&#34;" in out or "&quot;" in out,
            "rawUnsafe": any(c in out for c in "<>\"'") or bool(_RAW_AMPERSAND.search(out)),
        },
        "the portal's cell escape on a probe with <, >, &, \" and '",
    )


FEATURES: tuple[Callable[[Target, LicenceRegistry], BoardRow], ...] = (
    _health,
    _check_licensed,
    _check_unlicensed,
    _status,
    _identity,
    _strict_vs_loose,
    _docs_matrix,
    _escape,
)


def run_board(target: Target, registry: LicenceRegistry, licences_file: str) -> list[BoardRow]:
    check_roles(registry, licences_file)
    return [feature(target, registry) for feature in FEATURES]
