"""The compliance engine: the registry's policy answered as a service answers (spec 1, 4, 7).

Every decision is `policy.decide.decide`'s: the engine puts a service's answer around it
(status 200 when allowed, else 403, with the rule's reason). `check` is the spec's question
(partner, state, wager type); `ask` is a whole question (amount, bet type, age, ZIP), as the
bake's boundary questions put it.

The registry is immutable, so the engine indexes it once: for each state, the partners that hold
an active licence there. A `check` whose (state, wager type) has no limit row is decided by that
index alone (decide's answer for such a question: the licence, then the state's wager types),
and its decisions are shared immutable values; the shadow matrix asks for hundreds of thousands
of them. A check with limit rows goes through `decide`. tests/targets/test_engine.py holds the
two equal.

The clock: a bake's engine decides at the bake's moment (`now`); `serve`'s at the time of each
request (`now` None).
"""

from __future__ import annotations

import time

from compliance_bake.inputs.models import (
    STATUS_ALLOWED,
    STATUS_BLOCKED,
    Decision,
    Health,
    LicenceRegistry,
    StatusPanel,
)
from compliance_bake.policy.decide import decide, not_licensed_reason, wager_type_reason
from compliance_bake.policy.model import PolicyRegistry, Prediction, Question

LICENCE_NONE = "unlicensed"  # the status panel's licenseStatus where there is no licence

__all__ = ["LICENCE_NONE", "Engine", "as_decision", "not_licensed_reason"]

_ALLOWED = Decision(True, STATUS_ALLOWED)


def as_decision(prediction: Prediction) -> Decision:
    """The service's answer of a prediction."""
    if prediction.allowed:
        return _ALLOWED
    return Decision(False, STATUS_BLOCKED, prediction.reason)


class Engine:
    def __init__(self, registry: PolicyRegistry | LicenceRegistry, now: int | None = None) -> None:
        policy = registry if isinstance(registry, PolicyRegistry) else PolicyRegistry(registry)
        self._policy = policy
        self._now = now
        licences = policy.licences
        self._active = {code: policy.active_partners(code) for code in licences.regulated_states}
        self._not_licensed = {
            code: Decision(False, STATUS_BLOCKED, not_licensed_reason(code))
            for code in self._active
        }

    @property
    def registry(self) -> LicenceRegistry:
        return self._policy.licences

    @property
    def policy(self) -> PolicyRegistry:
        return self._policy

    def now(self) -> int:
        return int(time.time()) if self._now is None else self._now

    def health(self) -> Health:
        return Health(ok=True, states=self._policy.licences.regulated_states)

    def check(self, partner: str, state: str, wager_type: str) -> Decision:
        rules = self._policy.licences.state(state)
        if rules is None:
            return Decision(False, STATUS_BLOCKED, not_licensed_reason(state))
        if partner not in self._active[state]:
            return self._not_licensed[state]
        if wager_type not in rules.wager_types:
            return Decision(False, STATUS_BLOCKED, wager_type_reason(wager_type, state))
        if not self._policy.has_rows(state, wager_type):
            return _ALLOWED
        return self.ask(Question.headline(partner, state, wager_type))

    def ask(self, question: Question) -> Decision:
        return as_decision(decide(self._policy, question, self.now()))

    def status(self, state: str, partner: str) -> StatusPanel:
        rules = self._policy.licences.state(state)
        licence = self._policy.licences.licence_status(partner, state)
        return StatusPanel(
            ok=rules is not None,
            state=state,
            license_status=licence or LICENCE_NONE,
            has_limits=bool(rules and rules.limits),
        )
