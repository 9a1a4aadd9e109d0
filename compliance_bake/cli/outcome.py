"""A run's outcome as suites of cases: what the failure summary and the reporters read.

One shape for `bake snapshot`, `audit deep`, `verify`, `diff`, `log verify` and `witness`:
suites (board, integrity, shadow, zip-window, verify, diff, log, witness), each a list of cases
with a name, ok, a one-line message and, for a failed case, the concrete items to fix: the
mismatched pairs of a state (with the line of the partner in licences.json), the violating plays
of a reason (with their file line where the audit records one), the differing fields of a board
row. Each reporter shows as many items as its reader can act on and counts the rest; the JUnit
body also holds the case's full evidence (`detail`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from compliance_bake.cli.terminal import count, counted
from compliance_bake.errors import EXIT_NOTHING_CHECKED, EXIT_OK
from compliance_bake.report import disagreements
from compliance_bake.report.escape import json_line
from compliance_bake.signing.integrity import ITEMIZED_BY, zip_window_words

if TYPE_CHECKING:
    from compliance_bake.audit.run import AuditResult
    from compliance_bake.bake import BakeResult
    from compliance_bake.diff.model import DiffResult
    from compliance_bake.findings import Finding
    from compliance_bake.inputs.fixtures import PartnerLines
    from compliance_bake.log.audit import LogAudit
    from compliance_bake.log.witness import WitnessRun
    from compliance_bake.report.models import Board, JsonObject, ShadowRow
    from compliance_bake.report.policy import AskedQuestion, PolicyRecord
    from compliance_bake.verify.findings import VerifyReport
    from compliance_bake.waivers.apply import Applied

ITEMS_KEPT = 1000  # per case: enough for any report; a 500,000-row matrix counts the rest


@dataclass(frozen=True, slots=True)
class Item:
    """One concrete thing to fix, and where a file holds it (a fixture, a plays file)."""

    text: str
    file: str | None = None
    line: int | None = None

    def where(self) -> str:
        """`file:line`, `file`, or nothing."""
        if self.file is None:
            return ""
        return self.file if self.line is None else f"{self.file}:{self.line}"


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    ok: bool
    message: str
    items: tuple[Item, ...] = ()
    more: int = 0  # items that exist beyond `items`, counted and not listed
    detail: str = ""  # the full evidence (expected and actual in full), for the JUnit body
    classname: str = ""  # the JUnit classname when the suite's name is not enough
    skipped: bool = False  # present and not checked: no failure, and never a pass either
    counted: bool = True  # False: a failed summary of items another suite lists and counts

    @property
    def item_count(self) -> int:
        return len(self.items) + self.more

    def item_lines(self, limit: int) -> list[str]:
        """The first `limit` items as `- text at file:line`, then how many more. An item is one
        line: a line break in its outside text is shown, never kept (a JUnit body printed into a
        CI log would otherwise start a line the log runs as a command)."""
        from compliance_bake.report.escape import visible

        lines = [
            f"- {visible(i.text)} at {visible(i.where())}" if i.where() else f"- {visible(i.text)}"
            for i in self.items[:limit]
        ]
        more = self.item_count - min(limit, len(self.items))
        return lines + ([f"… and {more:,} more"] if more > 0 else [])


@dataclass(slots=True)
class Outcome:
    command: str
    ok: bool
    exit_code: int
    verdict: str  # one line: what held or what failed
    suites: dict[str, list[Case]] = field(default_factory=dict)
    details: JsonObject = field(default_factory=dict)  # the command's --json summary
    markdown: str | None = None  # the command's own Markdown report (diff's)

    def failed(self) -> list[tuple[str, Case]]:
        """Every failure once: a case that sums up another suite's failed cases is left out
        (`Case.counted`), so the count is the terminal's, the step summary's and the portal's."""
        return [
            (suite, c)
            for suite, cases in self.suites.items()
            for c in cases
            if not c.ok and c.counted
        ]


def _board_cases(board: Board) -> list[Case]:
    """A case per self-check, from the board's findings: failed, its items are the differing
    fields by JSON path and its detail the expected and actual states in full."""
    findings = board.findings()
    cases = []
    for row in board.rows:
        failed = [f.what for f in findings if f.rule == row.feature and not f.ok]
        if not failed:
            cases.append(Case(row.feature, True, "holds"))
            continue
        expected, actual = json_line(row.expected_state), json_line(row.actual_state)
        detail = f"expected: {expected}\nactual:   {actual}"
        fields = f"{count(len(failed))} field{'s differ' if len(failed) != 1 else ' differs'}"
        cases.append(Case(row.feature, False, fields, tuple(map(Item, failed)), detail=detail))
    return cases


def _word(allowed: bool) -> str:
    return "allow" if allowed else "block"


def pair_text(row: ShadowRow) -> str:
    """A mismatched shadow pair: who, where, real and shadow decisions, the licence."""
    licence = row.license_status or "none"
    return (
        f"{row.state} {row.partner}: real {_word(row.real_allowed)}, "
        f"shadow {_word(row.shadow_allowed)} (licence {licence})"
    )


def disagreement_text(row: ShadowRow, kinds: tuple[str, ...]) -> str:
    """A disagreeing pair: each kind by name, then the pair and the target's reason as given."""
    named = "; ".join(disagreements.KINDS[kind] for kind in kinds) or "mismatch"
    said = "" if row.real_allowed else f", reason {disagreements.reason_words(row.reason)}"
    return f"{named}: {pair_text(row)}{said}"


def shown_path(path: Path | str) -> str:
    """A path as a reader finds it: relative to the working folder when under it (GitHub
    resolves annotations against the checkout), else as it is."""
    text = str(path)
    try:
        return os.path.relpath(text) if Path(text).resolve().is_relative_to(Path.cwd()) else text
    except (OSError, ValueError):
        return text


def _shadow_cases(
    rows: Iterable[ShadowRow],
    licences: PartnerLines | None,
    shadow_from_target: bool = False,
    waived: frozenset[int] = frozenset(),
) -> list[Case]:
    """A case per state; `waived`: the rows whose failing kinds are all waived (listed in the
    waivers suite instead)."""
    by_state: dict[str, list[tuple[ShadowRow, tuple[str, ...]]]] = {}
    for index, row in enumerate(rows):
        wrong = by_state.setdefault(row.state, [])
        kinds = disagreements.classify_row(row, shadow_from_target)
        if row.match and index in waived:
            continue
        if not row.match or disagreements.fails(kinds):
            wrong.append((row, kinds))
    lines = licences.lines if licences is not None else {}
    where = shown_path(licences.file) if licences is not None else None
    cases = []
    for state, wrong in by_state.items():
        if not wrong:
            cases.append(Case(state, True, "no mismatches"))
            continue
        items = tuple(
            Item(disagreement_text(r, kinds), where, lines.get(r.partner))
            for r, kinds in wrong[:ITEMS_KEPT]
        )
        more = len(wrong) - len(items)
        cases.append(Case(state, False, f"{count(len(wrong))} disagreeing", items, more))
    return cases


def _plays_file(plays: str) -> str | None:
    """The plays file an annotation can point into: one local file, not a folder, a pattern,
    standard input or a URL (the audit does not say which file of several a line is in)."""
    return shown_path(plays) if plays != "-" and Path(plays).is_file() else None


def _reason_cases(by_reason: dict[str, int], findings: Sequence[Finding]) -> list[Case]:
    """A case per reason, its items the audit's findings (violating plays) of that reason,
    `ITEMS_KEPT` at most of each."""
    file = _plays_file(findings[0].file) if findings else None
    kept: dict[str | None, list[Item]] = {}
    for found in findings:
        item = Item(found.what, file if found.lineno else None, found.lineno)
        kept.setdefault(found.rule, []).append(item)
    cases = []
    for reason, n in by_reason.items():
        items = tuple(kept.get(reason, ()))
        message = f"{count(n)} play{'s' if n != 1 else ''}"
        cases.append(Case(reason, n == 0, message, items, max(0, n - len(items))))
    return cases


def of_bake(result: BakeResult, licences: PartnerLines | None = None) -> Outcome:
    """The bake's outcome; `licences` (where licences.json holds each partner) lets mismatches
    name their line."""
    from compliance_bake.waivers.apply import POLICY, SHADOW

    snap, waivers = result.snapshot, result.waivers
    rows = frozenset() if waivers is None else waivers.settled(SHADOW)
    suites = {
        "self-checks": _board_cases(snap.board),
        "integrity": [Case(f.rule or "", f.ok, f.what) for f in snap.integrity.findings()],
    }
    if result.policy is not None and result.policy.shown:
        asked = frozenset() if waivers is None else waivers.settled(POLICY)
        # Before the shadow's pairs: the last screen ends with the pairs to fix.
        suites["policy"] = policy_cases(result.policy, asked)
    shadow_from_target = snap.shadow.shadow_from_target
    suites["shadow"] = _shadow_cases(snap.shadow.rows, licences, shadow_from_target, rows)
    if waivers is not None:
        suites["waivers"] = waiver_cases(waivers)
    if result.violations_by_reason is not None:
        audit = result.deep_audit
        findings = audit.findings(ITEMS_KEPT) if audit is not None else []
        cases = _reason_cases(result.violations_by_reason, findings)
        suites["zip-window"] = cases + _empty_window_case(result.nothing_audited)
    listed = {name for name, cases in suites.items() if any(not c.ok for c in cases)}
    suites["integrity"] = [
        replace(c, counted=ITEMIZED_BY.get(c.name) not in listed) if not c.ok else c
        for c in suites["integrity"]
    ]
    failed = [c.name for c in suites["integrity"] if not c.ok]
    if waivers is None:
        failed += disagreements.failing(snap.shadow.disagreements)
        failed += [] if result.policy is None else result.policy.failing()
    else:
        failed += waivers.failing()
    passed_words = "PASS: every check holds"
    if waivers is not None and waivers.waived:
        passed_words = waivers.verdict()
    verdict = passed_words if result.ok else "FAIL: " + ", ".join(failed)
    if result.nothing_audited is not None and result.deep_audit is not None:
        label = result.deep_audit.label
        verdict = f"NOTHING AUDITED (exit {EXIT_NOTHING_CHECKED}): {label}"
    passed = result.exit_code == EXIT_OK
    return Outcome("bake snapshot", passed, result.exit_code, verdict, suites, result.summary())


def question_text(question: AskedQuestion) -> str:
    """One failing question, as every output names it (report/policy.question_words)."""
    from compliance_bake.report.policy import question_words

    return question_words(question.to_json())


def policy_cases(record: PolicyRecord, waived: frozenset[int] = frozenset()) -> list[Case]:
    """One case per disagreement kind with failing questions (named by rule, its questions the
    items), else one passing case; a target not asked the questions is a skipped case, never a
    pass. `waived`: the questions whose failing kinds are all waived (the waivers suite lists
    them)."""
    from compliance_bake.report.policy import FAILING, KINDS

    if not record.asked:
        return [Case("policy questions", True, record.summary_line(), skipped=True)]
    cases: list[Case] = []
    for kind in FAILING:
        found = [q for i, q in enumerate(record.questions) if kind in q.kinds and i not in waived]
        if not found:
            continue
        items = tuple(Item(question_text(q)) for q in found[:ITEMS_KEPT])
        noun = "question" if len(found) == 1 else "questions"
        message = f"{count(len(found))} {noun}"
        cases.append(Case(KINDS[kind], False, message, items, max(0, len(found) - ITEMS_KEPT)))
    return cases or [Case("policy questions", True, record.summary_line())]


def _empty_window_case(nothing_audited: str | None) -> list[Case]:
    """A failed case when the deep audit checked no play and that was not allowed (exit 5):
    a JUnit or GitHub reader sees the run is no pass, as its exit code says."""
    if nothing_audited is None:
        return []
    return [Case("plays-in-window", False, nothing_audited)]


def of_audit(result: AuditResult) -> Outcome:
    audit = result.audit
    by_reason = {reason.value: n for reason, n in audit.by_reason.items()}
    if result.nothing_audited is not None:
        verdict = f"NOTHING AUDITED (exit {EXIT_NOTHING_CHECKED}): {audit.label}"
    elif audit.ok:
        verdict = f"PASS: {zip_window_words(audit.days, audit.in_window_plays, audit.total_plays)}"
    else:
        verdict = f"FAIL: zip-window, {counted(audit.violation_count, 'violation')}"
    cases = _reason_cases(by_reason, audit.findings(ITEMS_KEPT))
    suites = {"zip-window": cases + _empty_window_case(result.nothing_audited)}
    passed = result.exit_code == EXIT_OK
    return Outcome("audit deep", passed, result.exit_code, verdict, suites, result.summary())


def _unique(name: str, seen: dict[str, int]) -> str:
    """`name`, numbered from its second use in a run (`name #2`), so every case is told apart."""
    seen[name] = seen.get(name, 0) + 1
    return name if seen[name] == 1 else f"{name} #{seen[name]}"


def _verify_cases(report: VerifyReport) -> list[Case]:
    """One case per finding, named for what it checks (the file and the rule or kind), unique
    within the run: a second check of the same file and kind is numbered."""
    seen: dict[str, int] = {}
    cases = []
    for f in report.findings:
        name = _unique(f"{f.file} {f.rule or f.kind}", seen)
        cases.append(Case(name, f.ok, f.what, classname=f"compliance-bake.verify.{f.kind}"))
    for line in report.unchecked:  # what is there and was not checked, as a skipped case
        what, _, message = line.partition(": ")
        cases.append(Case(f"{what} not checked", True, message, skipped=True,
                          classname="compliance-bake.verify.key"))  # fmt: skip
    return cases


def _verify_verdict(report: VerifyReport, checks: int) -> str:
    """One line: PASS or FAIL, which verdict failed, and what was not checked; "verified" only
    when everything present was checked."""
    unchecked = "; ".join(report.unchecked)
    if not report.ok:
        failed = [
            word
            for word, holds in (
                ("not authentic", report.trusted),
                ("not compliant", report.accepted),
            )
            if not holds
        ]
        what = ", ".join(failed) or "a check failed"
        verdict = f"FAIL: {what}: {count(len(report.failures))} of {count(checks)} checks failed"
    elif not report.authentic:
        verdict = "PASS: digests consistent, NOT authenticated"  # never "verified" unchecked
    elif not report.compliant:
        verdict = "PASS: authentic; recorded failures accepted (--allow-recorded-failures)"
    elif unchecked:
        verdict = "PASS: authentic and compliant"
    else:
        verdict = "PASS: verified"
    if report.ok and report.compliant and report.waived is not None:
        verdict = f"{verdict}, {report.waived}"
    return f"{verdict}; {unchecked}" if unchecked else verdict


def of_diff(result: DiffResult, limit: int) -> Outcome:
    """`diff` as one suite: a case per change class, failed when one of its findings fails (the
    class has changes and is one of --fail-on), its items those findings; its own Markdown
    report shows `limit` changes per class."""
    from compliance_bake.diff.model import CLASS_ORDER
    from compliance_bake.diff.render import findings, markdown_report, verdict

    found_all = findings(result, ITEMS_KEPT)
    cases = []
    for cls in CLASS_ORDER:
        found = [f for f in found_all if f.rule == cls.value]
        n = result.counts[cls]
        items = tuple(Item(f.what) for f in found)
        held = all(f.ok for f in found)
        cases.append(Case(cls.value, held, f"{count(n)} changed", items, n - len(items)))
    ok = result.exit_code == EXIT_OK
    said = ("PASS: " if ok else "FAIL: ") + verdict(result)
    suites = {"diff": cases}
    return Outcome(
        "diff", ok, result.exit_code, said, suites, result.as_json(), markdown_report(result, limit)
    )


def of_verify(report: VerifyReport, exit_code: int, details: JsonObject) -> Outcome:
    cases = _verify_cases(report)
    verdict = _verify_verdict(report, len(report.findings))
    return Outcome("verify", report.ok, exit_code, verdict, {"verify": cases}, details)


def _log_cases(findings: Sequence[Finding], suite: str) -> list[Case]:
    """One case per finding of the log's checks, named for its file (`log` when it concerns
    no one file: two checkpoints, the root), unique within the run."""
    seen: dict[str, int] = {}
    return [
        Case(_unique(f.file or "log", seen), f.ok, f.what, classname=f"compliance-bake.{suite}")
        for f in findings
    ]


def _failed_of(findings: Sequence[Finding]) -> str:
    failed = sum(not f.ok for f in findings)
    return f"{count(failed)} of {count(len(findings))} checks failed"


def of_log_audit(result: LogAudit, exit_code: int) -> Outcome:
    """`log verify`: a case per check of the checkpoint, the tiles, the root and the entries."""
    if result.ok and result.checkpoint is not None:
        verdict = f"PASS: log verified: {result.checkpoint.describe()}"
    else:
        verdict = f"FAIL: log NOT verified: {_failed_of(result.findings)}"
    cases = {"log": _log_cases(result.findings, "log")}
    return Outcome("log verify", result.ok, exit_code, verdict, cases, result.summary())


def of_witness(run: WitnessRun, location: str, exit_code: int) -> Outcome:
    """`witness`: a case per check before the cosignature (signature, tiles, root, extension)."""
    if run.ok and run.current is not None:
        verdict = f"PASS: cosigned {run.current.describe()}"
    else:
        verdict = f"FAIL: not cosigned: {_failed_of(run.findings)}"
    cases = {"witness": _log_cases(run.findings, "witness")}
    return Outcome("witness", run.ok, exit_code, verdict, cases, run.summary(location))


def waiver_cases(applied: Applied) -> list[Case]:
    """The waivers suite, a case per waiver in the file's order: an applied one is skipped (its
    items waived: not passed, never a failure), an expired one that matched items fails naming
    the day it expired, an unused one passes saying it matched nothing."""
    from compliance_bake.cli.waiver_cases import waiver_name, waiver_said
    from compliance_bake.waivers.apply import APPLIED, EXPIRED

    cases = []
    for matched in applied.matched:
        items = tuple(Item(item.words()) for item in matched.items[:ITEMS_KEPT])
        more = max(0, len(matched.items) - ITEMS_KEPT)
        ok = matched.status != EXPIRED or not matched.items
        skipped = matched.status == APPLIED
        name, said = waiver_name(matched), waiver_said(matched)
        cases.append(Case(name, ok, said, items, more, skipped=skipped))
    return cases
