"""A finding: one thing a check found about one file, held or not, and their collector.

`verify`, `log verify` and `witness` report what they checked in this shape, made where the
check runs (verify/, log/, report/portal_previous.py); the diff's changes, the audit's violating
plays, the integrity checks and a logged verdict leave their modules in it (diff/render.findings,
ZipWindowResult.findings, Integrity.findings, log/entry.verdict_finding), so that a command shows
every result alike and reads no module's own record. A finding's kind says which of verify's
verdicts it counts for (verify/findings.py): FILE, DIGEST, HMAC, KEY and EXTRA (a file in out/
that no bake writes and nothing signs: the signed bytes may be intact) for *authentic*, RULE and
RECORDED (what a bake recorded) for *compliant*; DIFF, ZIP_WINDOW, INTEGRITY and BOARD name the
other edges, their rule the change class, the reason, the check id or the self-check's feature.

A finding's severity says what it does to a verdict: FAIL fails it, WARN is reported and holds,
INFO is a check that held. A `Refusal` says why an input is not one, for its caller to decide.
"""

from __future__ import annotations

from dataclasses import dataclass, field

FILE, DIGEST, HMAC, KEY, RULE, RECORDED = "file", "digest", "hmac", "key", "rule", "recorded"
EXTRA = "extra"
DIFF, ZIP_WINDOW, INTEGRITY, BOARD = "diff", "zip-window", "integrity", "board"
FAIL, WARN, INFO = "fail", "warn", "info"


@dataclass(frozen=True, slots=True)
class Finding:
    file: str  # the file it concerns, as its reader names it; "" when it concerns no one file
    severity: str  # FAIL, WARN or INFO
    what: str
    kind: str = FILE
    rule: str | None = None  # the rule id, for kind RULE
    lineno: int | None = None  # the line of `file` it concerns, where its check knows one

    @property
    def ok(self) -> bool:
        """Whether it leaves its verdict holding: every severity but FAIL."""
        return self.severity != FAIL

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
        self.findings.append(Finding(file, INFO if ok else FAIL, what, kind, rule))
        return ok

    def extend(self, other: Findings) -> None:
        """Another run's findings and notes, after these."""
        self.findings.extend(other.findings)
        self.notes.extend(other.notes)

    @property
    def failures(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == FAIL]


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why an input is refused, returned where a caller decides what a refusal does (a finding,
    an error, a skipped file) instead of a bare string: `where` it went wrong and `message`.
    `not_json`: the text is not JSON at all (then it holds no document to judge)."""

    where: str
    message: str
    not_json: bool = False
