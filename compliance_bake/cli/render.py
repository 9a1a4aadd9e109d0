"""Terminal output with rich: results on stdout, progress and diagnostics on stderr.

rich honours NO_COLOR and turns colour off when the stream is not a terminal. Tables wrap to the
terminal width ($COLUMNS) at spaces, never inside a word that fits; every value from a fixture
or a target goes through `terminal.safe` (control characters escaped). A run that fails ends with
a short summary of what failed (`failure_summary`), then one verdict line.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from compliance_bake.audit.violations import cut
from compliance_bake.cli.phases import err_console
from compliance_bake.cli.short_summary import failure_summary, summary_rule
from compliance_bake.cli.terminal import count, previous_lines, safe, width
from compliance_bake.report.escape import json_line
from compliance_bake.signing.integrity import zip_window_words

if TYPE_CHECKING:
    from pathlib import Path

    from compliance_bake.audit.run import AuditResult
    from compliance_bake.bake import BakeResult
    from compliance_bake.cli.outcome import Outcome
    from compliance_bake.inputs.models import Decision
    from compliance_bake.report.models import Snapshot
    from compliance_bake.report.policy import PolicyRecord
    from compliance_bake.verify.findings import VerifyReport
    from compliance_bake.waivers.apply import Applied

MISMATCH_ROWS_SHOWN = 20


def _out() -> Any:
    from rich.console import Console

    return Console(file=sys.stdout, highlight=False, width=width(), soft_wrap=True)


def to_depth(value: Any, depth: int) -> str:
    """JSON text of value, with anything nested deeper than depth shown as an ellipsis."""

    def nested(item: Any, level: int) -> Any:
        if isinstance(item, dict | list) and level >= depth:
            return "…"
        if isinstance(item, dict):
            return {k: nested(v, level + 1) for k, v in item.items()}
        if isinstance(item, list):
            return [nested(v, level + 1) for v in item]
        return item

    return json_line(nested(value, 0))


def _mark(ok: bool) -> str:
    return "[green]✓[/green]" if ok else "[bold red]✗[/bold red]"


def _board(snap: Snapshot, depth: int) -> Any:
    from rich.table import Table

    board = snap.board
    table = Table(title=f"Self-checks {board.passed}/{board.total}", title_justify="left")
    table.add_column("", no_wrap=True)
    table.add_column("self-check", no_wrap=True, overflow="ellipsis")
    table.add_column("state (expected = actual, else both)", overflow="fold")
    for row in board.rows:
        expected = to_depth(row.expected_state, depth)
        actual = to_depth(row.actual_state, depth)
        if row.match and expected == actual:
            state = safe(expected)
        else:
            state = f"expected {safe(expected)}\n[red]actual[/red]   {safe(actual)}"
        table.add_row(_mark(row.match), safe(row.feature), state)
    return table


def _waivers(console: Any, applied: Applied) -> None:
    """Each waiver: what it waived, until when, why and by whom; or that it expired or matched
    nothing."""
    from compliance_bake.cli.waiver_cases import waiver_name, waiver_said
    from compliance_bake.waivers.apply import APPLIED, EXPIRED

    n = len(applied.of(APPLIED))
    items = len(applied.waived)
    console.print(
        f"Waivers: {count(n)} applied, {count(items)} item{'s' if items != 1 else ''} waived"
    )
    marks = {APPLIED: "[yellow]waived[/yellow]", EXPIRED: "[red]expired[/red]"}
    for matched in applied.matched:
        mark = marks.get(matched.status, "[yellow]unused[/yellow]")
        console.print(f"  {mark} {safe(waiver_name(matched))}", soft_wrap=False)
        console.print(f"    {safe(waiver_said(matched))}", soft_wrap=True)
        for item in matched.items[:MISMATCH_ROWS_SHOWN]:
            console.print(f"    - {safe(item.words())}", soft_wrap=False)


def _policy(console: Any, record: PolicyRecord, waived: frozenset[int] = frozenset()) -> None:
    """The policy's one line, then the failing questions as a table grouped by rule (how many,
    and the first question of each), never a wall of rows. `waived`: the questions whose
    failing kinds are all waived (counted here, listed under the waivers)."""
    from rich.table import Table

    from compliance_bake.cli.outcome import question_text
    from compliance_bake.report.policy import FAILING, KINDS, OTHER_REASON

    if not record.asked:
        console.print(f"Policy: [yellow]{safe(record.summary_line())}[/yellow]", soft_wrap=False)
        return
    left = [q for i, q in enumerate(record.questions) if i not in waived]
    failing = [kind for kind in FAILING if any(kind in q.kinds for q in left)]
    mark = _mark(not failing)
    said = f"; {count(len(waived))} waived" if waived else ""
    console.print(f"Policy: {mark} {safe(record.summary_line())}{said}", soft_wrap=False)
    counts = record.disagreements
    if counts[OTHER_REASON]:
        console.print(f"  reported: {count(counts[OTHER_REASON])} {safe(KINDS[OTHER_REASON])}")
    if not failing:
        return
    table = Table(title="Failing policy questions by rule", title_justify="left")
    table.add_column("rule")
    table.add_column("questions", justify="right", no_wrap=True)
    table.add_column("first question")
    for kind in FAILING:
        found = [q for q in left if kind in q.kinds]
        if found:
            table.add_row(safe(KINDS[kind]), count(len(found)), safe(question_text(found[0])))
    console.print(table)


def bake_report(result: BakeResult, depth: int, outcome: Outcome) -> None:
    from rich.table import Table

    from compliance_bake.cli.outcome import pair_text
    from compliance_bake.findings import FAIL
    from compliance_bake.report.disagreements import (
        KINDS,
        SEVERITY,
        classify_row,
        fails,
        reason_words,
    )

    snap = result.snapshot
    console = _out()
    console.print(_board(snap, depth))
    shadow = snap.shadow
    summary = shadow.summary
    n = summary.mismatches
    mismatches = f"[bold red]{count(n)}[/bold red]" if n else "[green]0[/green]"
    console.print(
        f"Shadow matrix: {count(len(shadow.rows))} rows against {safe(shadow.base)}: "
        f"allow {count(summary.allow)}, block {count(summary.block)}, "
        f"mismatches {mismatches}",
        soft_wrap=False,
    )
    sources = shadow.sources or {}
    if sources:
        console.print(
            f"  real decisions and reasons: {safe(sources.get('realAllowed', '?'))}; "
            f"shadow: {safe(sources.get('shadowAllowed', '?'))}",
            soft_wrap=False,
        )
    waived_kinds = {} if result.waivers is None else result.waivers.waived_kinds("shadow")
    for kind, n in (shadow.disagreements or {}).items():
        failing = SEVERITY.get(kind) == FAIL
        if n and failing and waived_kinds.get(kind, 0) >= n:
            console.print(f"  waived: {count(n)} {safe(KINDS.get(kind, kind))}")
        elif n and failing:
            console.print(f"  [bold red]{count(n)}[/bold red] {safe(KINDS.get(kind, kind))}")
        elif n:
            console.print(f"  reported: {count(n)} {safe(KINDS.get(kind, kind))}")
    from_target = shadow.shadow_from_target
    shown = 0
    waived = frozenset() if result.waivers is None else result.waivers.settled("shadow")
    for index, row in enumerate(shadow.rows):
        kinds = classify_row(row, from_target)
        if row.match and not fails(kinds):
            continue
        if shown == MISMATCH_ROWS_SHOWN:
            console.print("  … and more in the registry file")
            break
        mark = (
            "[yellow]waived[/yellow]" if row.match and index in waived else "[red]disagrees[/red]"
        )
        console.print(f"  {mark} {safe(pair_text(row))}")
        for kind in kinds:
            console.print(f"    {safe(KINDS[kind])}")
        if not row.real_allowed and kinds:
            console.print(f"    reason: {safe(reason_words(row.reason))}")
        shown += 1
    if result.policy is not None and result.policy.shown:
        asked = frozenset() if result.waivers is None else result.waivers.settled("policy")
        _policy(console, result.policy, asked)
    if result.waivers is not None:
        _waivers(console, result.waivers)
    window_words = None
    if snap.deep_audit is not None:
        window = snap.deep_audit.zip_window
        violations = ""
        if result.violations_by_reason is not None:
            violations = f"; violations {count(sum(result.violations_by_reason.values()))}"
        window_words = zip_window_words(window.days, window.in_window_plays, window.total_plays)
        console.print(f"Deep audit: {_mark(window.ok)} {safe(window_words)}{violations}")
        # one line however wide: a command wrapped by the tool breaks when pasted
        console.print(f"  every violation: {safe(snap.deep_audit.command)}", soft_wrap=True)
    checks = Table(title="Integrity", title_justify="left")
    checks.add_column("", no_wrap=True)
    checks.add_column("check", no_wrap=True)
    checks.add_column("label")
    for check in snap.integrity.checks:
        zip_window = check.id == "zip-window" and window_words is not None
        label = window_words if zip_window else check.label
        checks.add_row(_mark(check.ok), safe(check.id), safe(label))
    console.print(checks)
    if result.attestation_key_id is not None:
        console.print(f"Attestation signed with Ed25519 key {safe(result.attestation_key_id)}")
    if result.previous is not None:
        for line in previous_lines(result.previous):
            console.print(line, soft_wrap=False)  # wrapped at the width
    console.print(f"Wrote {count(len(result.written))} files to {safe(result.out_dir)}")
    failure_summary(outcome, console)


def foreign_files_warning(out_dir: Path) -> None:
    """A warning on stderr for each file of `out_dir` that no bake writes: the bake keeps them,
    and `verify` of the folder fails on them, so the operator learns it at the bake."""
    from compliance_bake.verify.files import foreign_files

    found = foreign_files(out_dir)
    if found:
        files, them = ("file", "it") if len(found) == 1 else ("files", "them")
        names = ", ".join(safe(name) for name in found[:10]) + (", ..." if len(found) > 10 else "")
        print(
            f"compliance-bake: warning: {safe(out_dir)} holds {len(found)} {files} the bake does "
            f"not write ({names}): `verify` fails on {them} and a server publishes {them}; "
            f"remove {them} before publishing",
            file=sys.stderr,
        )


def _violation_columns(total: int) -> list[tuple[str, int]]:
    """Widths of the first-violations table at `total` columns: the reason, state and ZIP
    whole, the free-text columns sharing the rest (rich, left to itself, squeezes short columns
    to nothing before it shortens long ones)."""
    from compliance_bake.audit.violations import Violation

    names = ("reason", "play", "partner", "state", "zip", "enriched_at")
    fixed = {"reason": max(len(r.value) for r in Violation), "state": 5, "zip": 5}
    free = total - 3 * len(names) - 1 - sum(fixed.values())  # a border and a space each side
    share = max(4, free // (len(names) - len(fixed)))
    return [(name, fixed.get(name, share)) for name in names]


def audit_report(result: AuditResult) -> None:
    from rich.table import Table

    from compliance_bake.audit.report import FIRST_SHOWN
    from compliance_bake.audit.violations import Violation
    from compliance_bake.cli.outcome import of_audit
    from compliance_bake.clock import iso_millis

    audit = result.audit
    console = _out()
    kind = "" if audit.zip_kind == "zip" else ", ZIP prefixes (zip_prefix)"
    console.print(
        f"{safe(audit.plays)} ({audit.format}{kind}): window {iso_millis(audit.since)} .. "
        f"{iso_millis(audit.now)}"
    )
    console.print(
        f"{_mark(audit.ok)} "
        f"{safe(zip_window_words(audit.days, audit.in_window_plays, audit.total_plays))}; "
        "not enriched "
        f"{count(audit.not_enriched_plays)}; violations {count(audit.violation_count)}"
    )
    counts = Table(title="Violations by reason", title_justify="left")
    counts.add_column("reason", no_wrap=True)
    counts.add_column("plays", justify="right", no_wrap=True)
    for reason in Violation:
        n = audit.by_reason[reason]
        counts.add_row(reason.value, f"[bold red]{count(n)}[/bold red]" if n else "0")
    console.print(counts)
    if audit.violations:
        first = Table(
            title=f"First violations (of {count(audit.violation_count)})", title_justify="left"
        )
        for name, size in _violation_columns(console.width):
            # a cell too wide ends in …, never split mid-token (the report file has it whole)
            first.add_column(name, no_wrap=True, overflow="ellipsis", width=size)
        for v in audit.violations[:FIRST_SHOWN]:
            play = v.play_id if v.play_id is not None else f"line {v.line or '?'}"
            first.add_row(
                *(
                    safe(cut(x)) if isinstance(x, str) else ""
                    for x in (v.reason.value, play, v.partner, v.state, v.zip, v.enriched_at)
                )
            )
        console.print(first)
    console.print(f"Wrote {safe(result.report_path)}")
    failure_summary(of_audit(result), console)


def verify_report(report: VerifyReport, outcome: Outcome) -> None:
    """The two verdicts first, then what was not checked and what applied, then each failure
    once (in the short summary alone), then the verdict line: the first screen
    and the last both say whether it verifies, and the last names what failed."""
    console = _out()
    for line in report.verdicts().values():
        console.print(safe(line), soft_wrap=True)
    for line in report.unchecked:
        console.print(f"[bold yellow]{safe(line)}[/bold yellow]", soft_wrap=True)
    console.print(f"applied ({report.source_kind}): {', '.join(report.applied)}")
    if report.not_applied:
        console.print(
            f"not applied (a {report.source_kind} is not an out/ folder): "
            + ", ".join(report.not_applied)
        )
    for note in report.notes:
        err_console().print(f"note: {safe(note)}", soft_wrap=True)
    failures = report.failures
    if failures:  # the short summary, pytest's way, lists each failure once
        console.print(summary_rule(len(failures)))
    for finding in failures:
        console.print(
            f"[bold red]FAIL[/bold red] {safe(finding.file)}: {safe(finding.what)}",
            soft_wrap=True,
        )
    passed = len(report.findings) - len(failures)
    # A failing verdict already counts what failed of how many; the last line stays short.
    checks = safe(report.source)
    if outcome.ok:
        checks += f": {count(passed)}/{count(len(report.findings))} checks hold"
    style = "green" if outcome.ok else "bold red"
    console.print(f"[{style}]{safe(outcome.verdict)}[/{style}] ({checks})", soft_wrap=True)


def decision_line(
    partner: str,
    state: str,
    wager_type: str,
    decision: Decision,
    base: str,
    known: bool = True,
    question: str | None = None,
) -> None:
    word = "[green]ALLOWED[/green]" if decision.allowed else "[bold red]BLOCKED[/bold red]"
    reason = f": {safe(decision.reason)}" if decision.reason else ""
    if not decision.allowed and decision.reason is None:
        reason = ": (the target gave no reason)"
    console = _out()
    console.print(
        f"{word} ({decision.status}) {safe(partner)} in {state}, {safe(wager_type)}{reason}"
        f" [dim](answered by {safe(base)})[/dim]"
    )
    if question is not None:
        console.print(f"  asked: {safe(question)}", soft_wrap=True)
    if not known:
        err_console().print(
            f"note: partner {safe(partner)} is not in the fixtures (licences.json): check the "
            "spelling; the answer is what the engine says of an unknown partner"
        )
