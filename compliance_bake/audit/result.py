"""The ZIP-window audit's result, whatever engine computed it: the counts of spec 2.5 and every
violating play (past the bound of zip_window.VIOLATIONS_BOUND: the first ones and a digest)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from compliance_bake.audit.violations import ViolatingPlay, Violation
from compliance_bake.findings import FAIL, ZIP_WINDOW, Finding
from compliance_bake.signing.integrity import zip_window_label


@dataclass(frozen=True, slots=True)
class ZipWindowResult:
    """The audit's result: the counts of spec 2.5 and every violating play (the snapshot's
    `deepAudit.zipWindow` block made from it is report/models.ZipWindow)."""

    plays: str
    format: str
    days: int
    now: datetime
    total_plays: int
    in_window_plays: int
    not_enriched_plays: int
    by_reason: dict[Violation, int]
    violations: list[ViolatingPlay] = field(repr=False)
    engine: str = "duckdb"
    digest: str | None = None  # set when the violations were cut to the bound
    zip_kind: str = "zip"  # what the ZIP column held: "zip" (5 digits) or "zip_prefix" (3)
    source: dict[str, str] | None = None  # a database's provenance (database.Provenance)
    line_name: str = "line"  # a listed play's place: its file "line", or a table's "rowKey"

    @property
    def since(self) -> datetime:
        return self.now - timedelta(days=self.days)

    @property
    def violation_count(self) -> int:
        return sum(self.by_reason.values())

    @property
    def ok(self) -> bool:
        return self.violation_count == 0

    @property
    def label(self) -> str:
        return zip_window_label(self.days, self.in_window_plays, self.total_plays)

    def findings(self, per_reason: int | None = None) -> list[Finding]:
        """Each listed violating play as a failure of the plays file, its reason the rule and
        its line where the audit records one (a record no reader was given, past the limit or
        with the wrong count of fields, is a `malformed-row` play like any other).
        `per_reason`: only the first that many of each reason."""
        kept = dict.fromkeys(Violation, 0)
        found = []
        for play in self.violations:
            if per_reason is None or kept[play.reason] < per_reason:
                kept[play.reason] += 1
                why = play.reason.value
                found.append(Finding(self.plays, FAIL, play.words(), ZIP_WINDOW, why, play.line))
        return found
