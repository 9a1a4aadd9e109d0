"""Terminal output with rich: results on stdout, progress and diagnostics on stderr.

rich honours NO_COLOR and turns colour off when the stream is not a terminal.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from compliance_bake.audit.run import AuditResult
    from compliance_bake.bake import BakeResult
    from compliance_bake.inputs.models import Decision
    from compliance_bake.verify.findings import VerifyReport

MISMATCH_ROWS_SHOWN = 20


def _out() -> Any:
    from rich.console import Console

    return Console(file=sys.stdout, highlight=False, soft_wrap=True)


def _err() -> Any:
    from rich.console import Console

    return Console(file=sys.stderr, highlight=False)


class _RichProgress:
    def __init__(self, progress: Any) -> None:
        self._progress = progress
        self._task: Any = None

    def begin(self, label: str, total: int) -> None:
        self._task = self._progress.add_task(label, total=total)

    def advance(self, amount: int) -> None:
        if self._task is not None:
            self._progress.advance(self._task, amount)

    def end(self) -> None:
        if self._task is not None:
            self._progress.update(self._task, completed=self._progress.tasks[-1].total)


@contextmanager
def progress_for(enabled: bool) -> Iterator[Any]:
    """A progress bar on stderr when it is a terminal and output is for people; else none."""
    from compliance_bake.progress import NoProgress

    if not enabled or not sys.stderr.isatty():
        yield NoProgress()
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=_err(),
        transient=True,
    ) as progress:
        yield _RichProgress(progress)


def to_depth(value: Any, depth: int) -> str:
    """JSON text of value, with anything nested deeper than depth shown as an ellipsis."""

    def cut(item: Any, level: int) -> Any:
        if isinstance(item, dict | list) and level >= depth:
            return "…"
        if isinstance(item, dict):
            return {k: cut(v, level + 1) for k, v in item.items()}
        if isinstance(item, list):
            return [cut(v, level + 1) for v in item]
        return item

    return json.dumps(cut(value, 0), ensure_ascii=False)


def _mark(ok: bool) -> str:
    return "[green]✓[/green]" if ok else "[bold red]✗[/bold red]"


def bake_report(result: BakeResult, depth: int) -> None:
    from rich.markup import escape
    from rich.table import Table

    snap = result.snapshot
    console = _out()
    enh = snap["enhancements"]
    board = Table(title=f"Self-check board {enh['passed']}/{enh['total']}", title_justify="left")
    board.add_column("")
    board.add_column("feature", no_wrap=True)
    board.add_column("expected", overflow="fold")
    board.add_column("actual", overflow="fold")
    for row in enh["rows"]:
        board.add_row(
            _mark(row["match"]),
            escape(row["feature"]),
            escape(to_depth(row["expectedState"], depth)),
            escape(to_depth(row["actualState"], depth)),
        )
    console.print(board)

    shadow = snap["shadow"]
    summary = shadow["summary"]
    count = summary["mismatches"]
    mismatches = f"[bold red]{count}[/bold red]" if count else "[green]0[/green]"
    console.print(
        f"Shadow matrix: {len(shadow['rows'])} rows against {escape(shadow['base'])}: "
        f"allow {summary['allow']}, block {summary['block']}, mismatches {mismatches}"
    )
    mismatched = [r for r in shadow["rows"] if not r["match"]]
    for row in mismatched[:MISMATCH_ROWS_SHOWN]:
        console.print(
            f"  [red]mismatch[/red] {row['state']} {escape(row['partner'])}: "
            f"real {row['realAllowed']}, shadow {row['shadowAllowed']}, "
            f"licence {row['licenseStatus']}"
        )
    if len(mismatched) > MISMATCH_ROWS_SHOWN:
        console.print(f"  … and {len(mismatched) - MISMATCH_ROWS_SHOWN} more in the registry file")

    if "deepAudit" in snap:
        window = snap["deepAudit"]["zipWindow"]
        console.print(
            f"Deep audit: {_mark(window['ok'])} {escape(window['label'])}; every violation: "
            f"{escape(snap['deepAudit']['command'])}"
        )
    checks = Table(title="Integrity", title_justify="left")
    checks.add_column("")
    checks.add_column("check")
    checks.add_column("label")
    for check in snap["integrity"]["checks"]:
        checks.add_row(_mark(check["ok"]), check["id"], escape(check["label"]))
    console.print(checks)
    if result.attestation_key_id is not None:
        console.print(f"Attestation signed with Ed25519 key {result.attestation_key_id}")
    verdict = (
        "[green]all checks hold[/green]" if result.ok else "[bold red]a check failed[/bold red]"
    )
    console.print(f"Wrote {len(result.written)} files to {escape(str(result.out_dir))}: {verdict}")


def audit_report(result: AuditResult) -> None:
    from rich.markup import escape
    from rich.table import Table

    from compliance_bake.audit.report import FIRST_SHOWN
    from compliance_bake.audit.violations import Violation
    from compliance_bake.clock import iso_millis

    audit = result.audit
    console = _out()
    console.print(
        f"{escape(audit.plays)} ({audit.format}): window {iso_millis(audit.since)} .. "
        f"{iso_millis(audit.now)}"
    )
    console.print(
        f"{_mark(audit.ok)} {escape(audit.label)}; not enriched {audit.not_enriched_plays}; "
        f"violations {audit.violation_count}"
    )
    counts = Table(title="Violations by reason", title_justify="left")
    counts.add_column("reason")
    counts.add_column("plays", justify="right")
    for reason in Violation:
        n = audit.by_reason[reason]
        counts.add_row(reason.value, f"[bold red]{n}[/bold red]" if n else "0")
    console.print(counts)
    if audit.violations:
        first = Table(title=f"First violations (of {audit.violation_count})", title_justify="left")
        for name in ("reason", "play", "partner", "state", "zip", "enriched_at"):
            first.add_column(name, overflow="fold")
        for v in audit.violations[:FIRST_SHOWN]:
            play = v.play_id if v.play_id is not None else f"line {v.line or '?'}"
            first.add_row(
                *(
                    escape(repr(x)[1:-1] if isinstance(x, str) else "")
                    for x in (v.reason.value, play, v.partner, v.state, v.zip, v.enriched_at)
                )
            )
        console.print(first)
    verdict = "[green]ok[/green]" if audit.ok else "[bold red]violations found[/bold red]"
    console.print(f"Wrote {escape(str(result.report_path))}: {verdict}")


def verify_report(report: VerifyReport) -> None:
    """The evidence first (one line per failure), then what applied, then the two verdicts."""
    from rich.markup import escape

    console = _out()
    for finding in report.failures:
        console.print(f"[bold red]FAIL[/bold red] {escape(finding.file)}: {escape(finding.what)}")
    console.print(f"applied ({report.source_kind}): {', '.join(report.applied)}")
    if report.not_applied:
        console.print(
            f"not applied (a {report.source_kind} is not an out/ folder): "
            + ", ".join(report.not_applied)
        )
    for note in report.notes:
        _err().print(f"note: {escape(note)}", soft_wrap=True)
    for line in report.verdicts().values():
        console.print(escape(line))
    passed = len(report.findings) - len(report.failures)
    if not report.ok:
        verdict = "[bold red]verification failed[/bold red]"
    elif not report.authentic:
        verdict = "digests consistent, NOT authenticated"
    elif not report.compliant:
        verdict = "authentic; recorded failures accepted (--allow-recorded-failures)"
    else:
        verdict = "[green]verified[/green]"
    console.print(
        f"{escape(report.source)}: {passed}/{len(report.findings)} checks hold: {verdict}"
    )


def verify_json(report: VerifyReport) -> None:
    verdicts = report.verdicts()
    print(
        json.dumps(
            {
                "ok": report.ok,
                "source": report.source,
                "sourceKind": report.source_kind,
                "out": report.source,
                "authentic": {
                    "ok": report.authentic,
                    "digestsConsistent": report.digests_consistent,
                    "signers": report.signers,
                    "verdict": verdicts["authentic"],
                },
                "compliant": {
                    "ok": report.compliant,
                    "ruleFailures": [f.rule for f in report.rule_failures],
                    "recordedFailures": [f.what for f in report.recorded_failures],
                    "recordedFailuresAccepted": report.allow_recorded_failures,
                    "verdict": verdicts["compliant"],
                },
                "hmacChecked": report.hmac_checked,
                "digestsOnly": report.digests_only,
                "applied": report.applied,
                "notApplied": report.not_applied,
                "notes": report.notes,
                "failures": [
                    {"file": f.file, "kind": f.kind, "rule": f.rule, "what": f.what}
                    for f in report.failures
                ],
                "checks": len(report.findings),
            },
            indent=2,
        )
    )


def decision_line(partner: str, state: str, wager_type: str, decision: Decision, base: str) -> None:
    from rich.markup import escape

    word = "[green]ALLOWED[/green]" if decision.allowed else "[bold red]BLOCKED[/bold red]"
    reason = f": {escape(decision.reason)}" if decision.reason else ""
    _out().print(
        f"{word} ({decision.status}) {escape(partner)} in {state}, {escape(wager_type)}{reason}"
        f" [dim](answered by {escape(base)})[/dim]"
    )
