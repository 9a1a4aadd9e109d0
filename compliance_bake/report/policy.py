"""The policy's questions, asked of the target and predicted by the registry: the record
`/registry/compliance-policy.json` and its disagreements, named by rule.

The spec's shadow rows stay one per pair (report/shadow.py). Here every boundary question of
the registry (policy/questions.py) is asked real and, when the target has its own shadow, shadow;
each is predicted by `policy.decide.decide` at the bake's moment; each disagreement is named by
its kind, the same words in every output:

- `<rule> not enforced` (max wager, min wager, bet type, identity, age, ZIP prefix, wager type):
  the service allows what the registry blocks; `allowed without an active licence` for the
  licence;
- `blocked within the policy`: the service blocks what the registry allows (a limit off by one
  cent shows here, at the limit);
- `real and shadow differ`;
- `blocked for another reason`: both block, with other words; reported, and the bake does not
  fail on it.

A target that cannot carry the questions (a profile without `[questions]`) is asked none: the
record says `asked: false`, and every output says the limits were not asked, never that they
passed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from compliance_bake.findings import FAIL, WARN
from compliance_bake.gc_pause import gc_paused
from compliance_bake.inputs.models import Decision
from compliance_bake.policy.decide import decide
from compliance_bake.policy.model import PolicyRegistry, Prediction, Rule
from compliance_bake.policy.questions import PolicyQuestion, boundary_questions
from compliance_bake.policy.recorded import (
    prediction_json,
    question_json,
    registry_json,
)
from compliance_bake.progress import NoProgress, ProgressSink
from compliance_bake.report.disagreements import (
    ALLOWED_WITHOUT_LICENCE,
    REAL_SHADOW_DIFFER,
    reason_words,
)
from compliance_bake.report.shadow import answered
from compliance_bake.targets.interface import Target

SCHEMA_VERSION = 1

BLOCKED_WITHIN_POLICY = "blockedWithinPolicy"
OTHER_REASON = "blockedForAnotherReason"
NOT_ENFORCED = {
    Rule.LICENCE: ALLOWED_WITHOUT_LICENCE,
    Rule.WAGER_TYPE: "wagerTypeNotEnforced",
    Rule.MAX_WAGER: "maxWagerNotEnforced",
    Rule.MIN_WAGER: "minWagerNotEnforced",
    Rule.BET_TYPE: "betTypeNotEnforced",
    Rule.IDENTITY: "identityNotEnforced",
    Rule.AGE: "ageNotEnforced",
    Rule.ZIP_PREFIX: "zipPrefixNotEnforced",
}
# Each kind's key in the record's `summary.disagreements` and the words every output names it by.
KINDS: dict[str, str] = {
    ALLOWED_WITHOUT_LICENCE: "allowed without an active licence",
    "wagerTypeNotEnforced": "wager type not enforced",
    "maxWagerNotEnforced": "max wager not enforced",
    "minWagerNotEnforced": "min wager not enforced",
    "betTypeNotEnforced": "bet type not enforced",
    "identityNotEnforced": "identity not enforced",
    "ageNotEnforced": "age not enforced",
    "zipPrefixNotEnforced": "ZIP prefix not enforced",
    BLOCKED_WITHIN_POLICY: "blocked within the policy",
    REAL_SHADOW_DIFFER: "real and shadow differ",
    OTHER_REASON: "blocked for another reason",
}
# Each kind's severity (findings.py): a block for another reason is reported, every other fails.
SEVERITY = {kind: WARN if kind == OTHER_REASON else FAIL for kind in KINDS}
FAILING = tuple(kind for kind, severity in SEVERITY.items() if severity == FAIL)
NOT_ASKED = "limits not asked: the target profile has no [questions] table"


def classify(
    expected: Prediction, real_allowed: bool, real_reason: str | None, shadow: bool | None
) -> tuple[str, ...]:
    """The disagreement kinds of one question, in KINDS order (none when it agrees)."""
    if (
        real_allowed is expected.allowed
        and (real_allowed or real_reason == expected.reason)
        and (shadow is None or shadow is real_allowed)
    ):
        return ()  # the many that agree: decided without a list
    found: list[str] = []
    if real_allowed and not expected.allowed:
        found.append(NOT_ENFORCED[expected.rule])
    if not real_allowed and expected.allowed:
        found.append(BLOCKED_WITHIN_POLICY)
    if not real_allowed and not expected.allowed and real_reason != expected.reason:
        found.append(OTHER_REASON)
    if shadow is not None and shadow is not real_allowed:
        found.append(REAL_SHADOW_DIFFER)
    return tuple(sorted(found, key=list(KINDS).index))


class AskedQuestion(NamedTuple):
    """One question asked: a named tuple, as the engine's questions are (a large registry asks
    millions, and a frozen dataclass is built field by field)."""

    asked: PolicyQuestion
    expected: Prediction
    real: Decision
    shadow: Decision | None
    kinds: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        question = self.asked.question
        return {
            "state": question.state,
            "partner": question.partner,
            "kind": self.asked.kind,
            "question": question_json(question),
            "expected": prediction_json(self.expected),
            "real": {
                "allowed": self.real.allowed,
                "status": self.real.status,
                "reason": self.real.reason,
            },
            "shadow": None
            if self.shadow is None
            else {"allowed": self.shadow.allowed, "reason": self.shadow.reason},
            "disagreements": list(self.kinds),
        }


@dataclass(frozen=True, slots=True)
class PolicyRecord:
    """What the bake asked of the policy and what it found."""

    asked: bool
    fields: tuple[str, ...]
    questions: list[AskedQuestion]
    registry: dict[str, Any]

    @property
    def shown(self) -> bool:
        """Whether outputs show the policy: questions were asked, or the registry has limit
        rows the target could not be asked (a registry without limit rows has none to show)."""
        return bool(self.questions) or (not self.asked and bool(self.registry["limits"]))

    @property
    def disagreements(self) -> dict[str, int]:
        counts = dict.fromkeys(KINDS, 0)
        for question in self.questions:
            for kind in question.kinds:
                counts[kind] += 1
        return counts

    def failing(self) -> list[str]:
        """The words of the failing kinds with questions, in KINDS order."""
        counts = self.disagreements
        return [KINDS[kind] for kind in FAILING if counts[kind]]

    def failing_questions(self) -> list[AskedQuestion]:
        return [q for q in self.questions if any(SEVERITY[k] == FAIL for k in q.kinds)]

    def summary_line(self) -> str:
        """`Policy questions 118/118 agree` or `limits not asked: ...`: the record in a line."""
        if not self.asked:
            return NOT_ASKED
        agree = sum(1 for q in self.questions if not q.kinds)
        return f"Policy questions {agree}/{len(self.questions)} agree"

    def to_json(self, generated_at: str, base: str) -> dict[str, Any]:
        """The record without its proof (report/publish seals it)."""
        return {
            "schemaVersion": SCHEMA_VERSION,
            "generatedAt": generated_at,
            "base": base,
            "asked": self.asked,
            "fields": list(self.fields),
            "summary": {
                "questions": len(self.questions),
                "agree": sum(1 for q in self.questions if not q.kinds),
                "label": self.summary_line(),
                "disagreements": self.disagreements,
            },
            "questions": [question.to_json() for question in self.questions],
            "registry": self.registry,
        }


@gc_paused(keep=True)
def run_policy(
    target: Target,
    policy: PolicyRegistry,
    now: int,
    source: str,
    read_at: str,
    progress: ProgressSink | None = None,
) -> PolicyRecord:
    """Ask every boundary question the target can carry, real and (with its own) shadow. The
    collector is paused meanwhile (gc_pause.py): the questions and their answers are many
    long-lived tuples, which it would walk again and again to free none."""
    carried = target.question_fields
    if carried is None:
        return PolicyRecord(False, (), [], registry_json(policy, (), source, read_at))
    asked = boundary_questions(policy, now, carried)
    questions = [item.question for item in asked]
    sink = progress or NoProgress()
    if questions:
        sink.begin("policy questions", len(questions) * (2 if target.has_shadow else 1))
    count, what = len(questions), "policy questions"
    real = answered(target, list(target.ask_many(questions, sink.advance)), count, what)
    shadow: Sequence[Decision | None] = [None] * count
    if target.has_shadow and questions:
        shadow = answered(
            target, list(target.shadow_ask_many(questions, sink.advance)), count, what
        )
    if questions:
        sink.end()
    found = []
    for item, real_answer, shadow_answer in zip(asked, real, shadow, strict=True):
        expected = decide(policy, item.question, now)
        kinds = classify(
            expected,
            real_answer.allowed,
            real_answer.reason,
            None if shadow_answer is None else shadow_answer.allowed,
        )
        found.append(AskedQuestion(item, expected, real_answer, shadow_answer, kinds))
    pairs = [(q.state, q.partner) for q in questions]
    return PolicyRecord(
        True,
        tuple(sorted(carried)),
        found,
        registry_json(policy, pairs, source, read_at),
    )


def question_words(doc: Mapping[str, Any]) -> str:
    """`NJ node-x max+0.01 (soccer.moneyline, 2500.01, straight, age 21, ZIP 07000): registry
    blocks (max-wager), service allows`: a recorded question, as the terminal, the reports, the
    portal and `verify` name it (the file holds the rest)."""
    asked = doc["question"]
    parts = [f"{asked['sport']}.{asked['market']}"]
    parts += [asked[key] for key in ("amount", "betType") if key in asked]
    parts += [f"{label} {asked[key]}" for key, label in (("age", "age"), ("zipCode", "ZIP"))
              if key in asked]  # fmt: skip
    expected, real, shadow = doc["expected"], doc["real"], doc["shadow"]
    registry = "allows" if expected["allowed"] else f"blocks ({expected['rule']})"
    service = "allows" if real["allowed"] else f"blocks ({reason_words(real['reason'])})"
    said = "" if shadow is None else f", its shadow {'allows' if shadow['allowed'] else 'blocks'}"
    return (
        f"{doc['state']} {doc['partner']} {doc['kind']} ({', '.join(parts)}): registry "
        f"{registry}, service {service}{said}"
    )


def failing_groups(doc: Mapping[str, Any]) -> list[tuple[str, int, str]]:
    """Of a recorded policy file: per failing kind with questions, (its words, how many, the
    first question's words), in KINDS order: the table the terminal and the portal show."""
    groups: list[tuple[str, int, str]] = []
    for kind in FAILING:
        found = [q for q in doc["questions"] if kind in q["disagreements"]]
        if found:
            groups.append((KINDS[kind], len(found), question_words(found[0])))
    return groups
