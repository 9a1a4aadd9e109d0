"""The compliance engine: pure decisions over a licence registry (spec 1, 4, 7). No I/O.

A partner may take a wager in a state only while it holds an `active` licence there and the state
permits the wager type. Every other case is a block with status 403.
"""

from __future__ import annotations

from compliance_bake.models import (
    LICENCE_ACTIVE,
    STATUS_ALLOWED,
    STATUS_BLOCKED,
    Decision,
    Health,
    LicenceRegistry,
    StatusPanel,
)

LICENCE_NONE = "unlicensed"  # the status panel's licenseStatus where there is no licence


def not_licensed_reason(state: str) -> str:
    return f"Partner not licensed in {state}"


class Engine:
    def __init__(self, registry: LicenceRegistry) -> None:
        self._registry = registry

    @property
    def registry(self) -> LicenceRegistry:
        return self._registry

    def health(self) -> Health:
        return Health(ok=True, states=self._registry.regulated_states)

    def check(self, partner: str, state: str, wager_type: str) -> Decision:
        rules = self._registry.state(state)
        if rules is None or self._registry.licence_status(partner, state) != LICENCE_ACTIVE:
            return Decision(False, STATUS_BLOCKED, not_licensed_reason(state))
        if wager_type not in rules.wager_types:
            return Decision(
                False, STATUS_BLOCKED, f"Wager type {wager_type} not permitted in {state}"
            )
        return Decision(True, STATUS_ALLOWED)

    def status(self, state: str, partner: str) -> StatusPanel:
        rules = self._registry.state(state)
        licence = self._registry.licence_status(partner, state)
        return StatusPanel(
            ok=rules is not None,
            state=state,
            license_status=licence or LICENCE_NONE,
            has_limits=bool(rules and rules.limits),
        )
