"""The domain: states and their rules, partners and their licences, geo profiles, decisions."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

LICENCE_ACTIVE = "active"
STATUS_ALLOWED = 200
STATUS_BLOCKED = 403


@dataclass(frozen=True, slots=True)
class StateRules:
    code: str
    name: str
    wager_types: tuple[str, ...]
    limits: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class Partner:
    node_id: str
    licences: Mapping[str, str]  # state code -> licence status


@dataclass(frozen=True, slots=True)
class LicenceRegistry:
    """The licence fixture as the engine and the shadow check both read it."""

    states: tuple[StateRules, ...]
    partners: tuple[Partner, ...]
    _by_state: Mapping[str, StateRules] = field(init=False, repr=False, compare=False)
    _by_partner: Mapping[str, Partner] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_state", {s.code: s for s in self.states})
        object.__setattr__(self, "_by_partner", {p.node_id: p for p in self.partners})
        if len(self._by_state) != len(self.states) or len(self._by_partner) != len(self.partners):
            raise ValueError("state codes and partner node ids must be unique")

    @property
    def regulated_states(self) -> tuple[str, ...]:
        return tuple(s.code for s in self.states)

    def state(self, code: str) -> StateRules | None:
        return self._by_state.get(code)

    def partner(self, node_id: str) -> Partner | None:
        return self._by_partner.get(node_id)

    def licence_status(self, node_id: str, state: str) -> str | None:
        partner = self._by_partner.get(node_id)
        return None if partner is None else partner.licences.get(state)


class GeoProfile(msgspec.Struct, frozen=True, gc=False, rename="camel"):
    """One partner's discrete geo profile (spec 2.4). Its JSON names are its field names in
    camelCase, in this order.

    A msgspec Struct, not a dataclass, because a snapshot holds one per partner (10,000 in a
    large one) and it is read beside 500,000 shadow rows: a frozen dataclass is built field by
    field through `object.__setattr__` and is tracked by the garbage collector, so building
    10,000 of them starts collections that walk everything the process holds; a Struct with
    `gc=False` (its fields are strings and an integer) is built in C and starts none.
    """

    node_id: str
    state_code: str
    age: int
    location: str
    zip_code: str

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> GeoProfile:
        """A profile of a document that has passed its schema (the geo fixture, a snapshot)."""
        return msgspec.convert(doc, cls)

    def to_json(self) -> dict[str, str | int]:
        out: dict[str, str | int] = msgspec.to_builtins(self)
        return out


@dataclass(frozen=True, slots=True)
class Fixtures:
    registry: LicenceRegistry
    geo: tuple[GeoProfile, ...]
    source: str  # the folder they came from, for messages and provenance


@dataclass(frozen=True, slots=True)
class Decision:
    """The answer of one check (spec 1, 7)."""

    allowed: bool
    status: int
    reason: str | None = None

    def as_json(self) -> dict[str, object]:
        out: dict[str, object] = {"allowed": self.allowed, "status": self.status}
        if self.reason is not None:
            out["reason"] = self.reason
        return out


@dataclass(frozen=True, slots=True)
class Health:
    ok: bool
    states: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class StatusPanel:
    ok: bool
    state: str
    license_status: str
    has_limits: bool
