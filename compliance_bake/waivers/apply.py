"""Which failing items each waiver matches, at a clock: pure, from the snapshot's JSON and the
policy record's, so the bake and `verify` derive the same answer from the same documents.

A failing item is one failing disagreement kind of one shadow row (report/disagreements.py) or
of one policy question (report/policy.py). A waiver matches an item of its state and partner;
its `kind`, when given, must be the item's kind or, for a policy question, the rule the registry
decided it by; its question fields, when given, must be the question's (so it matches policy
questions only). An unexpired waiver waives what it matches; an expired one waives nothing.
Integrity (digests, HMACs, schema, the attestation, the log) is never an item.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from compliance_bake.findings import FAIL
from compliance_bake.report import disagreements, policy
from compliance_bake.waivers.read import QUESTION_FIELDS, Waiver, WaiverFile, field_text

SHADOW = "shadow"
POLICY = "policy"
APPLIED, EXPIRED, UNUSED = "applied", "expired", "unused"
# The snapshot's extension field that records the waivers (docs/waivers.md).
FIELD = "waivers"


@dataclass(frozen=True, slots=True)
class Item:
    """One failing kind of one shadow row or policy question."""

    source: str  # SHADOW or POLICY
    index: int  # in shadow.rows, or in the policy record's questions
    state: str
    partner: str
    kind: str
    rule: str | None = None  # a policy question's: the registry's rule
    question: tuple[tuple[str, str], ...] = ()  # a policy question's fields, as field_text

    def to_json(self) -> dict[str, Any]:
        return {"in": self.source, "index": self.index, "kind": self.kind}

    def words(self) -> str:
        """`NJ node-x: shadow row 5: blocked for another reason with an active licence`."""
        where = "shadow row" if self.source == SHADOW else "policy question"
        names = disagreements.KINDS if self.source == SHADOW else policy.KINDS
        return f"{self.state} {self.partner}: {where} {self.index}: {names[self.kind]}"


def shadow_items(shadow: Mapping[str, Any]) -> list[Item]:
    """The failing items of a shadow block's rows."""
    from_target = shadow["sources"]["shadowAllowed"] == disagreements.SOURCE_TARGET_SHADOW
    found: list[Item] = []
    for index, row in enumerate(shadow["rows"]):
        kinds = disagreements.classify_row(disagreements.RowKind.of_json(row), from_target)
        found += [
            Item(SHADOW, index, row["state"], row["partner"], kind)
            for kind in kinds
            if disagreements.SEVERITY[kind] == FAIL
        ]
    return found


def policy_items(record: Mapping[str, Any] | None) -> list[Item]:
    """The failing items of a policy record's questions (none without a record)."""
    found: list[Item] = []
    for index, doc in enumerate([] if record is None else record["questions"]):
        fields = {k: field_text(k, v) for k, v in doc["question"].items() if k in QUESTION_FIELDS}
        fields["question"] = doc["kind"]
        question = tuple(sorted(fields.items()))
        found += [
            Item(
                POLICY, index, doc["state"], doc["partner"], kind, doc["expected"]["rule"], question
            )
            for kind in doc["disagreements"]
            if policy.SEVERITY.get(kind) == FAIL
        ]
    return found


def matches(waiver: Waiver, item: Item) -> bool:
    if (waiver.state, waiver.partner) != (item.state, item.partner):
        return False
    if waiver.kind is not None and waiver.kind not in (item.kind, item.rule):
        return False
    if not waiver.question:
        return True
    asked = dict(item.question)
    return item.source == POLICY and all(asked.get(k) == v for k, v in waiver.question.items())


@dataclass(frozen=True, slots=True)
class Matched:
    waiver: Waiver
    status: str  # APPLIED, EXPIRED or UNUSED
    items: tuple[Item, ...]


@dataclass(frozen=True, slots=True)
class Applied:
    """The waivers at a clock: each with what it matched, and the failing items left."""

    matched: tuple[Matched, ...]
    waived: tuple[Item, ...]
    unwaived: tuple[Item, ...]

    def of(self, status: str) -> list[Matched]:
        return [m for m in self.matched if m.status == status]

    @property
    def until(self) -> date | None:
        """The first expiry among the waivers applied: the day the verdict may change."""
        return min((m.waiver.expires for m in self.of(APPLIED)), default=None)

    def settled(self, source: str) -> frozenset[int]:
        """The rows (or questions) of `source` whose every failing kind is waived."""
        left = {item.index for item in self.unwaived if item.source == source}
        return frozenset(i.index for i in self.waived if i.source == source and i.index not in left)

    def failing(self) -> list[str]:
        """What still fails, in words: each kind with an item no waiver waives (the shadow's,
        then the policy's, in KINDS order), then each expired waiver that matched an item."""
        shadow = {i.kind for i in self.unwaived if i.source == SHADOW}
        asked = {i.kind for i in self.unwaived if i.source == POLICY}
        found = [disagreements.KINDS[k] for k in disagreements.FAILING if k in shadow]
        found += [policy.KINDS[k] for k in policy.FAILING if k in asked]
        found += [expired_words(m.waiver) for m in self.of(EXPIRED) if m.items]
        return found

    def waived_kinds(self, source: str) -> dict[str, int]:
        """How many items of each kind are waived in `source`."""
        return dict(Counter(item.kind for item in self.waived if item.source == source))

    def summary(self, passed: bool) -> dict[str, Any]:
        """What `--json` and the JSON report say of the waivers: the verdict when they made
        the bake pass, and each waiver with its status and the items it matched, by name."""
        until = self.until
        return {
            "verdict": self.verdict() if passed and self.waived else None,
            "applied": len(self.of(APPLIED)),
            "until": None if until is None else until.isoformat(),
            "waivers": [
                {
                    **m.waiver.to_json(),
                    "status": m.status,
                    "matched": [item.words() for item in m.items],
                }
                for m in self.matched
            ],
        }

    def verdict(self) -> str:
        """`PASS with 1 waiver (until 2027-01-31)`: the words of a bake whose only failures are
        waived."""
        n = len(self.of(APPLIED))
        until = self.until
        return f"PASS with {n} waiver{'s' if n != 1 else ''}" + (
            "" if until is None else f" (until {until.isoformat()})"
        )


def expired_words(waiver: Waiver) -> str:
    """`waiver expired on 2026-12-31 (line 2: NJ node-x)`."""
    return f"waiver expired on {waiver.expires.isoformat()} (line {waiver.line}: {waiver.words()})"


def apply(waivers: Sequence[Waiver], items: Iterable[Item], today: date) -> Applied:
    listed = list(items)
    matched: list[Matched] = []
    waived: set[Item] = set()
    for waiver in waivers:
        found = tuple(item for item in listed if matches(waiver, item))
        if waiver.expired(today):
            status = EXPIRED
        else:
            status = APPLIED if found else UNUSED
            waived.update(found)
        matched.append(Matched(waiver, status, found))
    return Applied(
        tuple(matched),
        tuple(item for item in listed if item in waived),
        tuple(item for item in listed if item not in waived),
    )


def applied_to(
    waivers: Sequence[Waiver],
    snapshot: Mapping[str, Any],
    record: Mapping[str, Any] | None,
) -> Applied:
    """The waivers on a snapshot's JSON and its policy record, at its generatedAt."""
    today = datetime.fromisoformat(snapshot["generatedAt"]).date()
    items = [*shadow_items(snapshot["shadow"]), *policy_items(record)]
    return apply(waivers, items, today)


def record_json(file: WaiverFile, applied: Applied) -> dict[str, Any]:
    """The snapshot's `waivers` field: the file's SHA3-256 and every waiver with its status and
    the items it matched."""
    until = applied.until
    return {
        "file": file.name,
        "sha3": file.sha3,
        "applied": len(applied.of(APPLIED)),
        "until": None if until is None else until.isoformat(),
        "waived": len(applied.waived),
        "waivers": [
            {
                **m.waiver.to_json(),
                "status": m.status,
                "matched": [item.to_json() for item in m.items],
            }
            for m in applied.matched
        ],
    }


def recorded(doc: Mapping[str, Any]) -> tuple[Waiver, ...]:
    """The waivers a snapshot's `waivers` field records (the schema has checked its form)."""
    return tuple(Waiver.from_json(w) for w in doc["waivers"])


def derived_json(doc: Mapping[str, Any], applied: Applied) -> dict[str, Any]:
    """The field as the recorded waivers and the clock make it (the file's name and digest as
    recorded: the file itself is not published)."""
    return record_json(WaiverFile(doc["file"], doc["sha3"], recorded(doc)), applied)
