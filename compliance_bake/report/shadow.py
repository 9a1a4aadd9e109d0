"""The shadow matrix (spec 2.3): every regulated state x every partner.

The real decision and its reason are whatever the target answers: a blocked row carries the
target's own reason, as given (none when it gave none), never one written here. The shadow
decision is the target's own shadow answer when it has one (a profile's `[shadow]`, asked as a
second pass over the same questions); otherwise it is computed here, straight from the
registry's policy (`policy.decide`), without the engine: the control of a control-vs-candidate
experiment. The registry's
decision is every row's `licenseStatus` either way, and `shadow.disagreements` counts where the
target departs from it or from itself (report/disagreements.py). Each pair is checked with the
state's first permitted wager type (docs/fixtures.md). A target that answers fewer or more
decisions than asked is a target failure.

Speed (50 states x 10,000 partners is 500,000 rows): the requests are a `CheckMatrix` (the
in-process target maps its engine's `check` over each column, no request object per check); the
rows are built state by state, one list comprehension per state, the disagreements counted on
the rows' distinct kinds (a few per state), not row by row.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter, is_not

from compliance_bake.errors import TargetError
from compliance_bake.inputs.models import LICENCE_ACTIVE, Decision, LicenceRegistry
from compliance_bake.policy.decide import predict_column
from compliance_bake.policy.model import PolicyRegistry
from compliance_bake.progress import NoProgress, ProgressSink
from compliance_bake.report import disagreements
from compliance_bake.report.disagreements import RowKind
from compliance_bake.report.models import ShadowRow, ShadowSummary
from compliance_bake.report.row_kinds import row_kinds
from compliance_bake.targets.interface import CheckMatrix, Target

_ALLOWED = attrgetter("allowed")


def matrix_wager_types(registry: LicenceRegistry) -> list[str]:
    """The wager types the matrix asks: each state's first, once each, in state order."""
    return list(dict.fromkeys(rules.wager_types[0] for rules in registry.states))


@dataclass(frozen=True, slots=True)
class ShadowMatrix:
    """The rows, their summary, where each column came from, the disagreements by kind, and the
    rows' kinds (report/row_kinds.py), which the schema check and the portal read too."""

    rows: list[ShadowRow]
    summary: ShadowSummary
    sources: dict[str, str]
    disagreements: dict[str, int]
    kinds: Counter[RowKind]


def run_shadow(
    target: Target,
    registry: LicenceRegistry | PolicyRegistry,
    progress: ProgressSink | None = None,
    now: int = 0,
) -> ShadowMatrix:
    """The rows (states outer, partners inner) and the summary; the caller adds timestamps,
    base and proof. The registry's decision of a pair is the policy's of its headline question
    at `now` (`policy.decide.predict_column`); `licenseStatus` is the partner's licence."""
    sink = progress or NoProgress()
    policy = registry if isinstance(registry, PolicyRegistry) else PolicyRegistry(registry)
    registry = policy.licences
    states, partners = registry.states, registry.partners
    node_ids = tuple(partner.node_id for partner in partners)
    width = len(node_ids)
    requests = CheckMatrix(tuple((rules.code, rules.wager_types[0]) for rules in states), node_ids)
    total = len(registry.states) * len(registry.partners)
    from_target = target.has_shadow
    sink.begin("shadow matrix", total * (2 if from_target else 1))
    rows: list[ShadowRow] = []
    allow = mismatches = 0
    real = answered(target, list(target.check_many(requests, sink.advance)), total)
    target_shadow: list[bool] | None = None
    if from_target:
        given = answered(target, list(target.shadow_many(requests, sink.advance)), total)
        target_shadow = list(map(_ALLOWED, given))
    for index, rules in enumerate(states):
        state = rules.code
        # spec 2.3 and 3: `active`, else null (a suspended, revoked or expired licence is
        # no active licence; the documented set has no other value).
        licensed = list(map(policy.active_partners(state).__contains__, node_ids))
        column = slice(index * width, (index + 1) * width)
        decisions = real[column]
        reals = list(map(_ALLOWED, decisions))
        if target_shadow is not None:
            shadows = target_shadow[column]
        elif policy.has_rows(state, rules.wager_types[0]):
            shadows = predict_column(policy, state, rules.wager_types[0], node_ids, now)
        else:  # predict_column's answer without rows: the licence
            shadows = licensed
        allow += sum(reals)
        mismatches += sum(map(is_not, reals, shadows))
        rows.extend(_column(state, node_ids, licensed, reals, shadows, decisions))
    sink.end()
    kinds = row_kinds(rows)
    return ShadowMatrix(
        rows,
        ShadowSummary(allow=allow, block=len(rows) - allow, mismatches=mismatches),
        disagreements.sources(from_target),
        disagreements.count(kinds.items(), from_target),
        kinds,
    )


def answered(
    target: Target, decisions: list[Decision], total: int, what: str = "checks"
) -> list[Decision]:
    """`decisions`, when the target answered each of the `total` questions (`what` they are);
    TargetError else: a batch answer short of its questions cannot be paired with them."""
    if len(decisions) != total:
        raise TargetError(
            f"{target.base}: answered {len(decisions)} of {total} {what}",
            "check the target's health and retry",
        )
    return decisions


def _column(
    state: str,
    node_ids: Sequence[str],
    licensed: list[bool],
    reals: list[bool],
    shadows: list[bool],
    decisions: list[Decision],
) -> list[ShadowRow]:
    """One state's rows, in one list comprehension; a blocked row carries the target's reason
    as given (an allowed answer with a reason is refused where answers are decoded)."""
    return [
        ShadowRow(
            state,
            node_id,
            LICENCE_ACTIVE if licence else None,
            real,
            shadow,
            real is shadow,
            decision.reason,
        )
        for node_id, licence, real, shadow, decision in zip(
            node_ids, licensed, reals, shadows, decisions, strict=True
        )
    ]
