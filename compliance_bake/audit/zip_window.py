"""The ZIP window (spec 2.5): one SQL query over a `plays` relation and a ZIP relation.

A play is in the window when `now - days <= enriched_at <= now`, both edges included, compared as
instants (offsets honoured, microsecond precision); `placed_at` plays no part. Each in-window play
must come from a real ZIP of its own state, a regulated state, where its partner holds an active
licence. Problems that make a row unreadable or its window unknowable (a malformed row, a
malformed `enriched_at`, an `enriched_at` after `now`), and a malformed ZIP or an unknown state
code, are violations wherever the play falls. A play with no `enriched_at` is not enriched:
outside the window, counted, not a violation. Each violating play is counted once, under the
first reason of `Violation` that applies.

`AUDIT_SQL` classifies every play; it ends in `COUNTS_SQL` (one row of counts) or, when those
found violations, in `VIOLATIONS_SQL` (the violating plays). It names only the relations
`plays(line, play_id, partner, state, zip, placed_at, enriched_at, wager_type, stake, malformed,
raw)`, `zips(zip, state)`, `states(state, regulated)` and `licences(partner, state)` (active
licences only), in plain SQL but for DuckDB's `regexp_full_match`, `try_strptime`, `try_cast`
and `epoch_us`, so another engine needs only those spelled its way. This module builds the
relations in DuckDB and runs it.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from compliance_bake.audit.accounting import unread_plays
from compliance_bake.audit.intake import PlaysInput, counting, plays_input
from compliance_bake.audit.plays import (
    PlaysFormat,
    PlaysSource,
    drop_rejects,
    open_plays,
    parquet_rows,
    plays_relation,
    rejected_relation,
)
from compliance_bake.audit.reading import reporting
from compliance_bake.audit.records import RecordCount, has_long_line
from compliance_bake.audit.relations import load_relations
from compliance_bake.audit.result import ZipWindow
from compliance_bake.audit.violations import ViolatingPlay, Violation
from compliance_bake.errors import InputError
from compliance_bake.inputs.models import LicenceRegistry
from compliance_bake.progress import NoProgress, ProgressSink

__all__ = ["DEFAULT_DAYS", "MODE", "ZipWindow", "audit_query", "run_zip_window"]

DEFAULT_DAYS = 90
MODE = "enriched"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


# ISO 8601 date-time with seconds and an offset; DuckDB's own cast is lenient (naive times, dates,
# `epoch`, hour 24), so the shape is checked first and the cast then checks the calendar.
#
# The common form, `2026-11-20T10:00:01.250Z`, takes a faster path first (the regex costs about
# 0.4 s on 10,000,000 plays): strptime with exactly that format. strptime alone is lenient about
# leading blanks and field widths (`2026-1-2T1:0:0.000Z`), so it is asked only of 24-character
# strings that start with a digit and whose first `-` is the fifth character: then the year is
# four digits, no field can be wider than its format (%g at most three digits, the others two),
# so every field has its full width and the string is exactly the form. Anything else, or what
# strptime refuses (hour 24, second 60, 30 February), goes to the regex and the cast.
_INSTANT = (
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{1,9})?"
    r"(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$"
)


def _code(name: str) -> int:
    """A reason's number in the query: its place in `Violation`, from 1 (integers compare fast)."""
    return list(Violation.__members__).index(name) + 1


def _reason_case() -> str:
    c = _code
    return f"""CASE
        WHEN malformed THEN {c("MALFORMED_ROW")}
        WHEN enriched_text IS NOT NULL AND enriched_us IS NULL THEN {c("MALFORMED_TIMESTAMP")}
        WHEN enriched_us > $now_us THEN {c("ENRICHED_IN_FUTURE")}
        WHEN z.zip IS NULL AND NOT regexp_full_match(coalesce(p.zip, ''), '[0-9]{{5}}')
          THEN {c("MALFORMED_ZIP")}
        WHEN s.state IS NULL THEN {c("UNKNOWN_STATE")}
        WHEN NOT in_window THEN NULL
        WHEN z.zip IS NULL THEN {c("ZIP_NOT_REAL")}
        WHEN z.state <> p.state THEN {c("ZIP_IN_OTHER_STATE")}
        WHEN NOT s.regulated THEN {c("STATE_NOT_REGULATED")}
        WHEN l.partner IS NULL THEN {c("PARTNER_NOT_LICENSED")}
      END"""


AUDIT_SQL = f"""
parsed AS NOT MATERIALIZED (
  SELECT *, nullif(enriched_at, '') AS enriched_text,
    coalesce(
      CASE WHEN length(enriched_at) = 24 AND enriched_at >= '0' AND enriched_at < ':'
                AND strpos(enriched_at, '-') = 5
           THEN epoch_us(try_strptime(enriched_at, '%Y-%m-%dT%H:%M:%S.%gZ')) END,
      CASE WHEN regexp_full_match(enriched_at, '{_INSTANT}')
           THEN epoch_us(try_cast(enriched_at AS TIMESTAMPTZ)) END
    ) AS enriched_us
  FROM plays
), windowed AS NOT MATERIALIZED (
  SELECT *, coalesce(NOT malformed AND enriched_us BETWEEN $since_us AND $now_us, false)
              AS in_window
  FROM parsed
), classified AS NOT MATERIALIZED (
  SELECT p.line, p.play_id, p.partner, p.state, p.zip, p.enriched_at, p.raw, p.in_window,
         p.enriched_text IS NULL AND NOT p.malformed AS not_enriched,
         {_reason_case()} AS reason
  FROM windowed p
  LEFT JOIN zips z ON z.zip = p.zip
  LEFT JOIN states s ON s.state = p.state
  LEFT JOIN licences l ON l.partner = p.partner AND l.state = p.state
)"""
# The counts: one row.
COUNTS_SQL = f"""
SELECT count(*) AS total,
       count(*) FILTER (WHERE in_window) AS in_window,
       count(*) FILTER (WHERE not_enriched) AS not_enriched,
       {", ".join(f"count(*) FILTER (WHERE reason = {_code(m.name)})" for m in Violation)}
FROM classified
"""
# Every violating play. Run only when the counts found one: a clean file is read once, and its
# play ids are never materialised (on 10,000,000 plays that and the list cost about 0.6 s).
VIOLATIONS_SQL = """
SELECT reason, play_id, line, partner, state, zip, enriched_at, raw
FROM classified WHERE reason IS NOT NULL
"""


def _micros(moment: datetime) -> int:
    return (moment - _EPOCH) // timedelta(microseconds=1)


def audit_query(plays: str, final: str = COUNTS_SQL) -> str:
    """AUDIT_SQL with `plays` bound to a SELECT (inlined, so the file is scanned once)."""
    return f"WITH plays AS NOT MATERIALIZED ({plays}),\n{AUDIT_SQL}\n{final}"


def _counts(con: Any, relation: str, since_us: int, now_us: int) -> list[int]:
    # fetchall, not fetchone: the reader's rejects table exists only once the result is consumed.
    rows = con.execute(audit_query(relation), {"since_us": since_us, "now_us": now_us}).fetchall()
    return [int(n) for n in rows[0]]  # an aggregate without GROUP BY answers exactly one row


def _violations(con: Any, relation: str, since_us: int, now_us: int) -> list[ViolatingPlay]:
    reasons = list(Violation)
    rows = con.execute(
        audit_query(relation, VIOLATIONS_SQL), {"since_us": since_us, "now_us": now_us}
    ).fetchall()
    return [
        ViolatingPlay(
            reason=reasons[code - 1],
            play_id=play_id,
            line=line,
            partner=partner,
            state=state,
            zip=zip_code,
            enriched_at=enriched_at,
            raw=raw,
        )
        for code, play_id, line, partner, state, zip_code, enriched_at, raw in rows
    ]


class _Reader:
    """One DuckDB connection reading one plays input: the counts, the rejected lines, the
    violating plays, each over the file `path` (the input, or its copy within the limit)."""

    def __init__(self, con: Any, source: PlaysSource, since_us: int, now_us: int) -> None:
        self.con, self.source, self.window = con, source, (since_us, now_us)
        self.nul_check = False

    def reread(self, path: Path, nul_check: bool) -> None:
        if path != self.source.path:
            drop_rejects(self.con)  # lines the first file's scan rejected
        self.source = replace(self.source, path=path)
        self.nul_check = nul_check

    def relations(self) -> list[str]:
        main = plays_relation(self.con, self.source, nul_check=self.nul_check)
        if self.source.format is PlaysFormat.PARQUET:
            return [main]
        # Lines the reader rejected (CSV, JSON Lines): the same query classifies them.
        return [main, rejected_relation()]

    def counts(self) -> list[int]:
        relations = self.relations()
        counts = _counts(self.con, relations[0], *self.window)
        for extra in relations[1:]:
            counts = [
                a + b for a, b in zip(counts, _counts(self.con, extra, *self.window), strict=True)
            ]
        return counts

    def violations(self) -> list[ViolatingPlay]:
        # A second scan rejects the same lines again; the rejected relation groups them by line.
        return [v for r in self.relations() for v in _violations(self.con, r, *self.window)]


def _read_error(plays: PlaysInput, exc: Exception) -> InputError:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return InputError(
        f"{plays.label}: cannot read as {plays.format.value}: {first}",
        "check the file's format and encoding (UTF-8)",
    )


def _audit(
    reader: _Reader, plays: PlaysInput, sink: ProgressSink
) -> tuple[list[int], list[ViolatingPlay]]:
    """The counts and the violating plays, with every record of the input accounted for."""
    import duckdb

    if plays.format is not PlaysFormat.PARQUET and has_long_line(plays.path, plays.limit):
        plays.record_count()  # first: DuckDB holds a whole line in memory even past its limit
    if plays.count is not None:
        reader.reread(plays.readable(), nul_check=plays.count.nul)
    failure: duckdb.Error | None = None
    counts: list[int] = []
    with reporting(reader.con, plays.path, sink), counting(plays) as counted:
        try:
            counts = reader.counts()
        except duckdb.Error as exc:
            failure = exc  # perhaps a record past the limit: the count below says
    record = counted()
    readable = plays.readable()
    if record is not None and (
        readable != reader.source.path or record.nul and not reader.nul_check
    ):
        reader.reread(readable, nul_check=record.nul)  # a record past the limit, or a NUL byte
        counts = reader.counts()  # errors here are the file's own
    elif failure is not None:
        raise failure
    violations: list[ViolatingPlay] = []
    if sum(counts[3:]):
        with reporting(reader.con, readable, sink):
            violations = reader.violations()
    if record is None:  # Parquet: the footer's count
        record = RecordCount(parquet_rows(reader.con, readable), (), 0, False)
    unread = unread_plays(plays.path, record, counts[0], plays.limit)
    counts[0] += len(unread)
    counts[3 + list(Violation).index(Violation.MALFORMED_ROW)] += len(unread)
    return counts, violations + unread


def run_zip_window(
    plays_path: Path,
    registry: LicenceRegistry,
    now: datetime,
    days: int = DEFAULT_DAYS,
    progress: ProgressSink | None = None,
    plays_format: PlaysFormat | None = None,
) -> ZipWindow:
    """Audit the plays file (`-`: standard input). Bad input (file, format, columns) raises
    InputError first."""
    import duckdb

    try:
        since_us, now_us = _micros(now - timedelta(days=days)), _micros(now)
    except OverflowError:
        raise InputError(
            f"the window of {days} days before {now.isoformat()} starts before year 1",
            "pass a later --now or fewer --days",
        ) from None
    with plays_input(plays_path, plays_format) as plays:
        source = open_plays(plays.path, plays.format, plays.label, max_line_size=plays.limit)
        con = duckdb.connect(":memory:")
        try:
            con.execute("SET TimeZone = 'UTC'")
            # DuckDB's own bar would print on stdout (into --json output); ours goes to a sink.
            con.execute("SET enable_progress_bar = false")
            # Keep the joins as written: the small relations (zips, states, licences) are the
            # hash tables and the plays stream past them. A CSV's row count is unknown when the
            # plan is made, and the optimiser may otherwise build the hash table from 10,000,000
            # plays (3 GiB instead of 0.35 GiB on the benchmark, and slower).
            con.execute("SET disabled_optimizers = 'join_order,build_side_probe_side'")
            load_relations(con, registry)
            try:
                reader = _Reader(con, source, since_us, now_us)
                counts, violations = _audit(reader, plays, progress or NoProgress())
            except duckdb.Error as exc:
                raise _read_error(plays, exc) from None
        finally:
            con.close()
    reasons = list(Violation)
    violations.sort(key=ViolatingPlay.sort_key)
    return ZipWindow(
        plays=str(plays_path),
        format=plays.format.value,
        days=days,
        now=now,
        total_plays=counts[0],
        in_window_plays=counts[1],
        not_enriched_plays=counts[2],
        by_reason={m: counts[3 + i] for i, m in enumerate(reasons)},
        violations=violations,
    )
