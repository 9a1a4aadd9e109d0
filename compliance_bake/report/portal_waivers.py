"""The portal's waivers (`bake --waivers`' `waivers` field, docs/waivers.md): who is waived,
what, why, by whom and until when, in an officer's words, and whether the waivers cover every
failing item (then the banner reads "Compliant with N waivers (until DATE)").

Read from the recorded field as the snapshot holds it; `verify` re-derives the field from its
waivers and the clock before it trusts the page (verify/waivers.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from compliance_bake.findings import FAIL
from compliance_bake.report import disagreements, policy

if TYPE_CHECKING:
    from compliance_bake.report.models import ShadowRow
    from compliance_bake.report.portal_verdict import Verdict

STATUS_WORDS = {
    "applied": "in force",
    "expired": "expired: waives nothing",
    "unused": "unused: nothing to waive",
}


@dataclass(frozen=True, slots=True)
class WaiverRow:
    who: str  # `NJ node-shore-02`
    scope: str  # what the waiver names: every failing kind, or one
    items: list[str]  # what it waived (or would have), in words
    justification: str
    approved_by: str
    expires: str
    status: str  # applied, expired, unused
    status_words: str


@dataclass(frozen=True, slots=True)
class WaiverView:
    applied: int
    until: str | None
    covers: bool  # every failing item is waived
    rows: list[WaiverRow]

    @property
    def line(self) -> str:
        """`Compliant with 1 waiver (until 2026-12-31)`."""
        noun = "waiver" if self.applied == 1 else "waivers"
        until = "" if self.until is None else f" (until {self.until})"
        return f"Compliant with {self.applied} {noun}{until}"


def _item_words(
    item: Mapping[str, Any], rows: Sequence[Any], questions: Sequence[Mapping[str, Any]]
) -> str:
    kind = item["kind"]
    if item["in"] == "shadow":
        row = rows[item["index"]] if item["index"] < len(rows) else None
        said = "" if row is None or row.reason is None else f": \u201c{row.reason}\u201d"
        words = disagreements.KINDS.get(kind, kind)
        return f"the service's decision for this pair ({words}){said}"
    question = questions[item["index"]] if item["index"] < len(questions) else None
    words = policy.KINDS.get(kind, kind)
    if question is None:
        return f"a policy question ({words})"
    return f"the policy question {policy.question_words(question)} ({words})"


def waiver_view(
    waivers: Mapping[str, Any] | None,
    rows: Sequence[Any],
    record: Mapping[str, Any] | None,
    failing_items: int,
) -> WaiverView | None:
    """The section, None without waivers. `rows`: the shadow rows (typed); `record`: the policy
    record (None: its questions are named by index only); `failing_items`: how many failing
    items the snapshot and the record hold (the waivers cover them when they waive as many)."""
    if waivers is None:
        return None
    questions = [] if record is None else record["questions"]
    shown = []
    for waiver in waivers["waivers"]:
        kind = waiver["kind"]
        scope = "every failing disagreement" if kind is None else kind
        fields = ", ".join(f"{k} {v}" for k, v in waiver["question"].items())
        shown.append(
            WaiverRow(
                who=f"{waiver['state']} {waiver['partner']}",
                scope=scope + (f" ({fields})" if fields else ""),
                items=[_item_words(item, rows, questions) for item in waiver["matched"]],
                justification=waiver["justification"],
                approved_by=waiver["approvedBy"],
                expires=waiver["expires"],
                status=waiver["status"],
                status_words=STATUS_WORDS.get(waiver["status"], waiver["status"]),
            )
        )
    waived = waivers["waived"]
    return WaiverView(
        waivers["applied"], waivers["until"], waived > 0 and waived == failing_items, shown
    )


def failing_items(shadow_counts: Mapping[str, int] | None, record: Mapping[str, Any] | None) -> int:
    """How many failing items there are: each failing kind of each shadow row (the counts) and
    of each policy question."""
    counts = shadow_counts or {}
    total = sum(counts.get(kind, 0) for kind in disagreements.FAILING)
    for question in [] if record is None else record["questions"]:
        total += sum(1 for kind in question["disagreements"] if policy.SEVERITY.get(kind) == FAIL)
    return total


def without_waived(
    verdict: Verdict,
    waivers: Mapping[str, Any],
    rows: Sequence[ShadowRow],
    from_target: bool,
    record: Mapping[str, Any] | None,
) -> Verdict:
    """A failing page's verdict with what the waivers waive taken out: the pairs whose every
    failing kind is waived, the kinds with no unwaived row, the waived policy questions (an
    expired waiver waives nothing)."""
    waived = {
        (item["in"], item["index"], item["kind"])
        for waiver in waivers["waivers"]
        if waiver["status"] == "applied"
        for item in waiver["matched"]
    }
    if not waived:
        return verdict
    settled: dict[str, int] = {}
    for index in sorted({index for source, index, _ in waived if source == "shadow"}):
        if index >= len(rows):
            continue
        row = rows[index]
        kinds = disagreements.classify_row(row, from_target)
        failing = [kind for kind in kinds if disagreements.SEVERITY[kind] == FAIL]
        if row.match and all(("shadow", index, kind) in waived for kind in failing):
            settled[row.state] = settled.get(row.state, 0) + 1
    by_kind: dict[str, int] = {}
    for source, _, kind in waived:
        if source == "shadow":
            by_kind[kind] = by_kind.get(kind, 0) + 1
    recorded = {label: n for label, n, _ in verdict.kinds}
    left = [
        label
        for kind, label in disagreements.KINDS.items()
        if label in verdict.disagreements and by_kind.get(kind, 0) < recorded.get(label, 0)
    ]
    states = [(s, n - settled.get(s, 0)) for s, n in verdict.states if n > settled.get(s, 0)]
    groups = verdict.policy
    if record is not None:
        kept = [
            {
                **q,
                "disagreements": [k for k in q["disagreements"] if ("policy", i, k) not in waived],
            }
            for i, q in enumerate(record["questions"])
        ]
        groups = policy.failing_groups({"questions": kept})
    return replace(verdict, states=states, disagreements=left, policy=groups)
