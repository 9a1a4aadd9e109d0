"""The audit's outputs: the snapshot's `deepAudit` block (spec 2.5), the summary and the report.

The block is the typed `DeepAudit` the bake puts in its snapshot; the summary and the report are
JSON documents for a reader, in which the block becomes JSON once. The detailed report
(`audit/zip-window.json` under `--out`) lists every violating play (past
zip_window.VIOLATIONS_BOUND: the first ones, `violationsListed` and `violationsDigest`); the
summary (`--json`) and the terminal show the counts and the first violations. Nothing here
writes files.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from compliance_bake.audit.database import is_database
from compliance_bake.audit.engines.interface import PlaysOptions
from compliance_bake.audit.plays_source import PlaysFormat
from compliance_bake.audit.violations import Violation
from compliance_bake.audit.zip_window import DEFAULT_DAYS, MODE, ZipWindowResult
from compliance_bake.clock import iso_millis
from compliance_bake.errors import EXIT_CHECK_FAILED, EXIT_NOTHING_CHECKED, EXIT_OK
from compliance_bake.inputs.jsonio import dumps_pretty
from compliance_bake.inputs.redaction import redacted
from compliance_bake.inputs.registry_map import MappedSource
from compliance_bake.inputs.registry_source import RegistryForm, registry_form
from compliance_bake.report import models
from compliance_bake.report.escape import not_an_option
from compliance_bake.resources import is_demo_fixtures

FIRST_SHOWN = 20


def audit_command(
    plays: str,
    days: int = DEFAULT_DAYS,
    now: str | None = None,
    fixtures: Path | str | None = None,
    plays_format: PlaysFormat | None = None,
    options: PlaysOptions | None = None,
) -> str:
    """The command line that runs this audit (with `now` and `fixtures`, and a database's
    --registry-map: reproduces it). The demo fixtures are the default of --fixtures, so they are
    not named. Plays from standard input keep `--plays -`: it reruns with them piped in."""
    words = ["compliance-bake", "audit", "deep", "--plays", not_an_option(shown_source(plays))]
    if options is not None:
        if options.columns.given:
            words += ["--plays-columns", options.columns.text()]
        if options.table is not None:
            words += ["--plays-table", options.table]
        if options.query is not None:
            words += ["--plays-query", options.query]
    if plays_format is not None:
        words += ["--format", plays_format.value]
    words += ["--days", str(days)]
    if now is not None:
        words += ["--now", now]
    if isinstance(fixtures, str) and registry_form(fixtures) is not RegistryForm.FOLDER:
        words += ["--registry", redacted(fixtures)]
        if isinstance(fixtures, MappedSource):
            words += ["--registry-map", not_an_option(str(fixtures.map_file))]
    elif fixtures is not None and not is_demo_fixtures(Path(fixtures)):
        words += ["--fixtures", not_an_option(str(fixtures))]
    return shlex.join(words)


def shown_source(plays: str) -> str:
    """The plays source as output names it: a database URL without its password."""
    return redacted(plays, database=True) if is_database(plays) else plays


def _kind(audit: ZipWindowResult) -> models.JsonObject:
    """What the ZIP column held, and a database's provenance: only when not a plain file's
    5-digit ZIPs, so a file's report is as it was."""
    out: models.JsonObject = {}
    if audit.zip_kind != "zip":
        out["zipColumn"] = audit.zip_kind
    if audit.source is not None:
        out["source"] = dict(audit.source)
    return out


def zip_window_block(audit: ZipWindowResult) -> models.ZipWindow:
    """deepAudit.zipWindow (spec 2.5): the audit's counts, its verdict and their label."""
    return models.ZipWindow(
        ok=audit.ok,
        days=audit.days,
        mode=MODE,
        total_plays=audit.total_plays,
        in_window_plays=audit.in_window_plays,
        label=audit.label,
    )


def deep_audit_block(audit: ZipWindowResult, command: str) -> models.DeepAudit:
    """The snapshot's deepAudit block (spec 2.5): the window, and the command that reruns it."""
    return models.DeepAudit(zip_window=zip_window_block(audit), command=command)


def nothing_audited(audit: ZipWindowResult) -> bool:
    """No violation, and no play in the window: the audit checked nothing, which is no pass."""
    return audit.ok and audit.in_window_plays == 0


def empty_window_message(audit: ZipWindowResult) -> str:
    """What to tell the operator when `nothing_audited`: where the window was, and the fix."""
    return (
        f"nothing audited: none of the {audit.total_plays:,} plays of "
        f"{shown_source(audit.plays)} was enriched in the {audit.days}-day window "
        f"{iso_millis(audit.since)} .. {iso_millis(audit.now)} "
        "(fix: pass the plays' own --now, more --days, or --allow-empty-window to accept it)"
    )


def exit_code(audit: ZipWindowResult, allow_empty_window: bool = False) -> int:
    """0 a pass, 1 a violation, 5 nothing audited (unless the empty window is allowed)."""
    if not audit.ok:
        return EXIT_CHECK_FAILED
    if nothing_audited(audit) and not allow_empty_window:
        return EXIT_NOTHING_CHECKED
    return EXIT_OK


def _cut(audit: ZipWindowResult) -> models.JsonObject:
    """Past the bound: how many are listed, and the digest of them all (zip_window.py)."""
    if audit.digest is None:
        return {}
    return {"violationsListed": len(audit.violations), "violationsDigest": audit.digest}


def summary(
    audit: ZipWindowResult, command: str, report: Path | None, allow_empty_window: bool = False
) -> models.JsonObject:
    code = exit_code(audit, allow_empty_window)
    return {
        "ok": code == EXIT_OK,
        "exitCode": code,
        "plays": audit.plays,
        "format": audit.format,
        "window": {"from": iso_millis(audit.since), "to": iso_millis(audit.now)},
        "zipWindow": zip_window_block(audit).to_json(),
        "notEnrichedPlays": audit.not_enriched_plays,
        "violations": audit.violation_count,
        "byReason": {reason.value: audit.by_reason[reason] for reason in Violation},
        **_kind(audit),
        "firstViolations": [v.as_json(audit.line_name) for v in audit.violations[:FIRST_SHOWN]],
        **_cut(audit),
        "report": None if report is None else str(report),
        "command": command,
        "engine": audit.engine,
    }


def report_bytes(audit: ZipWindowResult, command: str) -> bytes:
    document: models.JsonObject = {
        "generatedAt": iso_millis(audit.now),
        "plays": audit.plays,
        "format": audit.format,
        **_kind(audit),
        "window": {"from": iso_millis(audit.since), "to": iso_millis(audit.now)},
        "deepAudit": deep_audit_block(audit, command).to_json(),
        "notEnrichedPlays": audit.not_enriched_plays,
        "violationCount": audit.violation_count,
        "byReason": {reason.value: audit.by_reason[reason] for reason in Violation},
        "reasons": {reason.value: reason.explanation for reason in Violation},
        **_cut(audit),
        "violations": [v.as_json(audit.line_name) for v in audit.violations],
    }
    return dumps_pretty(document)
