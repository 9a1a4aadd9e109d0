"""The domain: states and their rules, partners and their licences, geo profiles, decisions."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

# The licence registry is the policy's (compliance_bake/policy/model.py); named here too, where
# the fixtures' readers and the report have always found it.
from compliance_bake.policy.model import LICENCE_ACTIVE as LICENCE_ACTIVE
from compliance_bake.policy.model import LicenceRegistry as LicenceRegistry
from compliance_bake.policy.model import Partner as Partner
from compliance_bake.policy.model import PolicyRegistry
from compliance_bake.policy.model import StateRules as StateRules

STATUS_ALLOWED = 200
STATUS_BLOCKED = 403


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
    """The registry as a source gave it (`inputs/registry_source.read_registry`): the whole
    policy, the partners' geo profiles (spec 2.4), and where it was read."""

    policy: PolicyRegistry
    geo: tuple[GeoProfile, ...]
    source: str  # the folder, or the database URL without its password: messages, provenance

    @property
    def registry(self) -> LicenceRegistry:
        """The licences and states, as the shadow matrix and the audit read them."""
        return self.policy.licences


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
