"""A finding: one thing a check found about one file, held or not, and their collector.

`verify`, `log verify` and `witness` report what they checked in this one shape, made where the
check runs (verify/, log/, report/portal_previous.py), so that a command shows them and no layer
converts one shape into another. A finding's kind says which of verify's verdicts it counts
for (verify/findings.py): FILE, DIGEST, HMAC, KEY and EXTRA (a file in out/ that no bake writes
and nothing signs: the signed bytes may be intact) for *authentic*, RULE and RECORDED for
*compliant*; the log's own commands read only `ok` and `line`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

FILE, DIGEST, HMAC, KEY, RULE, RECORDED = "file", "digest", "hmac", "key", "rule", "recorded"
EXTRA = "extra"


@dataclass(frozen=True, slots=True)
class Finding:
    file: str  # the file it concerns, as its reader names it; "" when it concerns no one file
    ok: bool
    what: str
    kind: str = FILE
    rule: str | None = None  # the rule id, for kind RULE

    @property
    def line(self) -> str:
        """`file: what`, or `what` alone when no one file is concerned (two checkpoints that
        cannot both be true): the problem line `log verify` and `witness` print."""
        return f"{self.file}: {self.what}" if self.file else self.what


@dataclass(slots=True)
class Findings:
    """What a run of checks found, in the order checked, and its notes (what a reader should
    know that is neither a pass nor a failure). The fields are keyword-only, so a result that
    extends this collector keeps its own fields first."""

    findings: list[Finding] = field(default_factory=list, kw_only=True)
    notes: list[str] = field(default_factory=list, kw_only=True)

    def add(
        self, file: str, ok: bool, what: str, kind: str = FILE, rule: str | None = None
    ) -> bool:
        """Record a finding; `ok` back, so a check can branch on what it just recorded."""
        self.findings.append(Finding(file, ok, what, kind, rule))
        return ok

    def extend(self, other: Findings) -> None:
        """Another run's findings and notes, after these."""
        self.findings.extend(other.findings)
        self.notes.extend(other.notes)

    @property
    def failures(self) -> list[Finding]:
        return [f for f in self.findings if not f.ok]
