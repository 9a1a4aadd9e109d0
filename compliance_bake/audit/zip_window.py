"""The ZIP window (spec 2.5): the audit's rules, its result, and its run on an engine.

A play is in the window when `now - days <= enriched_at <= now`, both edges included, compared as
instants (offsets honoured, microsecond precision); `placed_at` plays no part. Each in-window play
must come from a real ZIP of its own state, a regulated state, where its partner holds an active
licence. Problems that make a row unreadable or its window unknowable (a malformed row, a
malformed `enriched_at`, an `enriched_at` after `now`), and a malformed ZIP or an unknown state
code, are violations wherever the play falls. A play with no `enriched_at` is not enriched:
outside the window, counted, not a violation. Each violating play is counted once, under the
first reason of `Violation` that applies.

The query is audit/sql.py's, written once for every engine; the engines (audit/engines/) load
the relations and run it. Up to `VIOLATIONS_BOUND` violating plays are listed in full; past it
the result keeps the counts, the first `VIOLATIONS_BOUND` in the engines' order and a digest of
them all, so a cluster never sends them all to one driver (`--violations-out` writes them all
from the engine itself, without the lines of plays it read). The first violating plays of each
reason then get their file line from the plays file itself, whatever the engine, and are listed
first (audit/play_lines.py).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from compliance_bake.audit.database import is_database
from compliance_bake.audit.engines import EngineOptions, open_engine
from compliance_bake.audit.engines.interface import PlaysOptions, Window
from compliance_bake.audit.play_lines import with_lines
from compliance_bake.audit.plays_source import PlaysFormat
from compliance_bake.audit.relations import reference_relations
from compliance_bake.audit.result import ZipWindowResult
from compliance_bake.audit.violations import ViolatingPlay, Violation
from compliance_bake.errors import InputError
from compliance_bake.inputs.models import LicenceRegistry
from compliance_bake.inputs.redaction import redacted
from compliance_bake.progress import NoProgress, ProgressSink

__all__ = ["DEFAULT_DAYS", "MODE", "VIOLATIONS_BOUND", "ZipWindowResult", "run_zip_window"]

DEFAULT_DAYS = 90
MODE = "enriched"
VIOLATIONS_BOUND = 100_000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _micros(moment: datetime) -> int:
    return (moment - _EPOCH) // timedelta(microseconds=1)


def run_zip_window(
    plays_path: Path | str,
    registry: LicenceRegistry,
    now: datetime,
    days: int = DEFAULT_DAYS,
    progress: ProgressSink | None = None,
    plays_format: PlaysFormat | None = None,
    engine: EngineOptions | None = None,
    violations_out: str | None = None,
    bound: int | None = None,
    plays_options: PlaysOptions | None = None,
) -> ZipWindowResult:
    """Audit the plays (`-`: standard input). Bad input (file, format, columns, engine) raises
    InputError first."""
    try:
        window = Window(_micros(now - timedelta(days=days)), _micros(now))
    except OverflowError:
        raise InputError(
            f"the window of {days} days before {now.isoformat()} starts before year 1",
            "pass a later --now or fewer --days",
        ) from None
    bound = VIOLATIONS_BOUND if bound is None else bound
    options = engine or EngineOptions()
    sink = progress or NoProgress()
    read = plays_options or PlaysOptions()
    runner = open_engine(options)
    try:
        fmt = runner.make_plays(str(plays_path), plays_format, read)
        runner.load_relations(reference_relations(registry, read.columns.prefix))
        counts = runner.counts(window, sink)
        violations: list[ViolatingPlay] = []
        digest = None
        if sum(counts[3:]) > bound:
            violations = sorted(runner.violations(window, bound), key=ViolatingPlay.sort_key)
            violations = violations[:bound]
            digest = runner.digest(window)
        elif sum(counts[3:]):
            violations = sorted(runner.violations(window, None), key=ViolatingPlay.sort_key)
        if violations_out is not None:
            runner.write_violations(window, violations_out)
        provenance = runner.provenance
    finally:
        runner.close()
    database = is_database(str(plays_path))
    if not database:
        violations = with_lines(plays_path, fmt, violations, columns=read.columns)
    reasons = list(Violation)
    return ZipWindowResult(
        plays=redacted(str(plays_path), database=True) if database else str(plays_path),
        format=fmt,
        days=days,
        now=now,
        total_plays=counts[0],
        in_window_plays=counts[1],
        not_enriched_plays=counts[2],
        by_reason={m: counts[3 + i] for i, m in enumerate(reasons)},
        violations=violations,
        engine=options.engine,
        digest=digest,
        zip_kind=read.columns.zip_kind,
        source=None if provenance is None else provenance.as_json(),
        line_name="rowKey" if database else "line",
    )
