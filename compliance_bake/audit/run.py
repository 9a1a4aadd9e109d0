"""`audit deep` end to end: clock, licences and plays checked, the audit run, the report written.

Bad input (the clock, the fixtures, the plays file's existence, kind, format or columns) raises
InputError before anything is written; `-` reads the plays from standard input. The report is
published atomically, alone, under `out/`, with the honest counts even when no play fell in the
window: that run then ends with exit 5, not a pass, unless the empty window is allowed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compliance_bake.audit import report
from compliance_bake.audit.engines.interface import EngineOptions, PlaysOptions
from compliance_bake.audit.plays_source import PlaysFormat
from compliance_bake.audit.zip_window import DEFAULT_DAYS, ZipWindowResult, run_zip_window
from compliance_bake.clock import iso_millis, resolve_now
from compliance_bake.errors import EXIT_NOTHING_CHECKED
from compliance_bake.inputs.registry_source import read_registry
from compliance_bake.progress import Phases, ProgressSink, no_phases
from compliance_bake.report.layout import AUDIT_FILE
from compliance_bake.report.publish import publish


@dataclass(frozen=True, slots=True)
class AuditResult:
    audit: ZipWindowResult
    command: str
    report_path: Path
    allow_empty_window: bool = False

    @property
    def ok(self) -> bool:
        return self.audit.ok

    @property
    def exit_code(self) -> int:
        return report.exit_code(self.audit, self.allow_empty_window)

    @property
    def nothing_audited(self) -> str | None:
        """The message when no play fell in the window and that is not allowed, else None."""
        if self.exit_code != EXIT_NOTHING_CHECKED:
            return None
        return report.empty_window_message(self.audit)

    def summary(self) -> dict[str, Any]:
        return report.summary(self.audit, self.command, self.report_path, self.allow_empty_window)


def run_audit(
    *,
    plays: Path | str,
    fixtures_dir: Path | str,
    out_dir: Path,
    now: str | None,
    days: int = DEFAULT_DAYS,
    progress: ProgressSink | None = None,
    plays_format: str | None = None,
    phases: Phases = no_phases,
    engine: EngineOptions | None = None,
    violations_out: str | None = None,
    allow_empty_window: bool = False,
    plays_options: PlaysOptions | None = None,
) -> AuditResult:
    """Phases: load (clock, licences), audit (the query over the plays), write."""
    phases("load")
    moment = resolve_now(now)
    registry = read_registry(fixtures_dir).registry
    fmt = None if plays_format is None else PlaysFormat(plays_format)
    phases("audit")
    audit = run_zip_window(
        plays,
        registry,
        moment,
        days,
        progress,
        fmt,
        engine=engine,
        violations_out=violations_out,
        plays_options=plays_options,
    )
    command = report.audit_command(
        str(plays), days, iso_millis(moment), fixtures_dir, fmt, plays_options
    )
    phases("write")
    written = publish(out_dir, {AUDIT_FILE: report.report_bytes(audit, command)})
    return AuditResult(audit, command, written[0], allow_empty_window)
