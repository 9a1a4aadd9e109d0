"""The diff's data: change classes, one change, and the whole result with its exit code."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from compliance_bake.errors import EXIT_CHECK_FAILED, EXIT_OK
from compliance_bake.report.models import JsonObject, JsonValue
from compliance_bake.verify.source import Authenticity

SCHEMA_VERSION = 1


class ChangeClass(StrEnum):
    """What a change means to a reader, most serious first."""

    DECISION = "decision"  # what a wager would get changed
    COVERAGE = "coverage"  # what is regulated, licensed, profiled or audited changed
    SELF_CHECK = "self-check"  # a self-check, integrity check or shadow agreement changed
    COSMETIC = "cosmetic"  # timestamps, runtime string, wording, notes

    @classmethod
    def parse_list(cls, text: str) -> tuple[ChangeClass, ...]:
        """`decision,coverage` -> the classes; ValueError names an unknown one."""
        names = [part.strip() for part in text.split(",") if part.strip()]
        known = {c.value: c for c in cls}
        unknown = [n for n in names if n not in known]
        if unknown:
            raise ValueError(unknown[0])
        return tuple(dict.fromkeys(known[n] for n in names))


CLASS_ORDER: tuple[ChangeClass, ...] = tuple(ChangeClass)
DEFAULT_FAIL_ON: tuple[ChangeClass, ...] = (
    ChangeClass.DECISION,
    ChangeClass.COVERAGE,
    ChangeClass.SELF_CHECK,
)


@dataclass(frozen=True, slots=True)
class Change:
    """One change: its class, its kind, what it concerns, and the values before and after.

    `concerns` names the thing by meaning: {"state", "partner"} for a pair, {"feature"} for a
    board row, {"check"} for an integrity check, {"nodeId"} for a geo profile, {"field"} for a
    single field. `before` is None for something added, `after` None for something removed.
    """

    cls: ChangeClass
    kind: str
    concerns: dict[str, str]
    before: JsonValue
    after: JsonValue

    def as_json(self, *, with_class: bool = True) -> JsonObject:
        """The change as `diff --json` lists it; without `class` as the `--previous` record
        lists its decision changes (all of one class)."""
        out: JsonObject = {"class": self.cls.value} if with_class else {}
        out["kind"] = self.kind
        out["concerns"] = self.concerns
        out["before"] = self.before
        out["after"] = self.after
        return out


@dataclass(frozen=True, slots=True)
class SideInfo:
    """Where a side came from, whether it is authentic and how that was checked."""

    source: str
    generated_at: str
    authenticity: Authenticity
    pairs: int

    def as_json(self) -> JsonObject:
        return {
            "source": self.source,
            "generatedAt": self.generated_at,
            "authentic": self.authenticity.authentic,
            "checked": self.authenticity.checked,
            "pairs": self.pairs,
        }


@dataclass(slots=True)
class DiffResult:
    old: SideInfo
    new: SideInfo
    changes: list[Change]
    fail_on: tuple[ChangeClass, ...] = DEFAULT_FAIL_ON
    counts: dict[ChangeClass, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.changes.sort(key=lambda c: CLASS_ORDER.index(c.cls))  # stable: keeps kind order
        self.counts = dict.fromkeys(CLASS_ORDER, 0)
        for change in self.changes:
            self.counts[change.cls] += 1

    @property
    def authenticated(self) -> bool:
        return self.old.authenticity.authentic and self.new.authenticity.authentic

    @property
    def failed_classes(self) -> list[ChangeClass]:
        return [c for c in CLASS_ORDER if c in self.fail_on and self.counts[c]]

    @property
    def exit_code(self) -> int:
        return EXIT_CHECK_FAILED if self.failed_classes else EXIT_OK

    def of_class(self, cls: ChangeClass) -> list[Change]:
        return [c for c in self.changes if c.cls is cls]

    def as_json(self) -> JsonObject:
        document: JsonObject = {
            "schemaVersion": SCHEMA_VERSION,
            "authenticated": self.authenticated,
            "old": self.old.as_json(),
            "new": self.new.as_json(),
            "counts": {c.value: n for c, n in self.counts.items()},
            "failOn": [c.value for c in self.fail_on],
            "failed": [c.value for c in self.failed_classes],
            "exitCode": self.exit_code,
            "changes": [c.as_json() for c in self.changes],
        }
        if not self.authenticated:
            document["warning"] = UNAUTHENTICATED_WARNING
        return document


UNAUTHENTICATED_WARNING = (
    "UNAUTHENTICATED comparison: at least one side was not checked against a key "
    "(--unauthenticated); its content may be forged"
)
