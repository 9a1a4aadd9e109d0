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

import contextlib
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from compliance_bake.audit.plays import (
    PlaysFormat,
    PlaysSource,
    open_plays,
    plays_relation,
    rejected_relation,
)
from compliance_bake.audit.reading import reporting
from compliance_bake.audit.violations import ViolatingPlay, Violation
from compliance_bake.errors import InputError
from compliance_bake.inputs.models import LICENCE_ACTIVE, LicenceRegistry
from compliance_bake.progress import NoProgress, ProgressSink
from compliance_bake.signing.integrity import zip_window_label

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


@dataclass(frozen=True, slots=True)
class ZipWindow:
    """The audit's result: the counts of spec 2.5 and every violating play."""

    plays: str
    format: str
    days: int
    now: datetime
    total_plays: int
    in_window_plays: int
    not_enriched_plays: int
    by_reason: dict[Violation, int]
    violations: list[ViolatingPlay] = field(repr=False)

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


def _micros(moment: datetime) -> int:
    return (moment - _EPOCH) // timedelta(microseconds=1)


def _load_relations(con: Any, registry: LicenceRegistry) -> None:
    from compliance_bake.inputs.zipindex import zip_index

    index = zip_index()
    con.execute(
        "CREATE TEMP TABLE zips AS SELECT unnest($zips::VARCHAR[]) AS zip, "
        "unnest($states::VARCHAR[]) AS state",
        {"zips": list(index.places), "states": [p.state for p in index.places.values()]},
    )
    regulated = set(registry.regulated_states)
    jurisdictions = sorted(index.jurisdictions | regulated)
    con.execute(
        "CREATE TEMP TABLE states AS SELECT unnest($codes::VARCHAR[]) AS state, "
        "unnest($flags::BOOLEAN[]) AS regulated",
        {"codes": jurisdictions, "flags": [c in regulated for c in jurisdictions]},
    )
    pairs = [
        (p.node_id, state)
        for p in registry.partners
        for state, status in p.licences.items()
        if status == LICENCE_ACTIVE
    ]
    con.execute(
        "CREATE TEMP TABLE licences AS SELECT unnest($partners::VARCHAR[]) AS partner, "
        "unnest($states::VARCHAR[]) AS state",
        {"partners": [p for p, _ in pairs], "states": [s for _, s in pairs]},
    )


@contextmanager
def _nul_search(source: PlaysSource) -> Iterator[Callable[[], bool]]:
    """Search the file for a NUL byte in a side thread while DuckDB counts (it releases the GIL):
    the search takes about 0.2 s per GB, which would otherwise come first."""
    if source.format is PlaysFormat.PARQUET:
        yield lambda: False
        return
    result: list[bool] = []

    def search() -> None:
        with contextlib.suppress(OSError):
            result.append(source.has_nul())

    searcher = threading.Thread(target=search, daemon=True)
    searcher.start()

    def found() -> bool:
        searcher.join()
        if not result:  # the search itself failed (the file vanished): assume the worst
            return True
        return result[0]

    try:
        yield found
    finally:
        searcher.join()


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


def run_zip_window(
    plays_path: Path,
    registry: LicenceRegistry,
    now: datetime,
    days: int = DEFAULT_DAYS,
    progress: ProgressSink | None = None,
) -> ZipWindow:
    """Audit the plays file. Bad input (file, format, columns) raises InputError first."""
    import duckdb

    try:
        since_us, now_us = _micros(now - timedelta(days=days)), _micros(now)
    except OverflowError:
        raise InputError(
            f"the window of {days} days before {now.isoformat()} starts before year 1",
            "pass a later --now or fewer --days",
        ) from None
    source: PlaysSource = open_plays(plays_path)
    sink = progress or NoProgress()
    con = duckdb.connect(":memory:")
    try:
        con.execute("SET TimeZone = 'UTC'")
        # DuckDB's own bar would print on stdout (into --json output); ours goes to a sink.
        con.execute("SET enable_progress_bar = false")
        # Keep the joins as written: the small relations (zips, states, licences) are the hash
        # tables and the plays stream past them. A CSV's row count is unknown when the plan is
        # made, and the optimiser may otherwise build the hash table from 10,000,000 plays
        # (3 GiB instead of 0.35 GiB on the benchmark, and slower).
        con.execute("SET disabled_optimizers = 'join_order,build_side_probe_side'")
        _load_relations(con, registry)
        try:
            relations = [plays_relation(con, source, nul_check=False)]
            with reporting(con, plays_path, sink), _nul_search(source) as found:
                counts = _counts(con, relations[0], since_us, now_us)
            if found():
                # Rare: the file holds a NUL byte; count again, searching every value.
                relations = [plays_relation(con, source)]
                counts = _counts(con, relations[0], since_us, now_us)
            if source.format is not PlaysFormat.PARQUET:
                # Lines the reader rejected (CSV, JSON Lines): the same query classifies them.
                relations.append(rejected_relation())
                rejected = _counts(con, relations[1], since_us, now_us)
                counts = [a + b for a, b in zip(counts, rejected, strict=True)]
            violations: list[ViolatingPlay] = []
            if sum(counts[3:]):
                with reporting(con, plays_path, sink):
                    violations = _violations(con, relations[0], since_us, now_us)
                if len(relations) > 1:
                    # The second scan rejected the same lines again; the relation groups them.
                    violations += _violations(con, relations[1], since_us, now_us)
        except duckdb.Error as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise InputError(
                f"{plays_path}: cannot read as {source.format.value}: {first}",
                "check the file's format and encoding (UTF-8)",
            ) from None
    finally:
        con.close()
    reasons = list(Violation)
    violations.sort(key=ViolatingPlay.sort_key)
    return ZipWindow(
        plays=str(plays_path),
        format=source.format.value,
        days=days,
        now=now,
        total_plays=counts[0],
        in_window_plays=counts[1],
        not_enriched_plays=counts[2],
        by_reason={m: counts[3 + i] for i, m in enumerate(reasons)},
        violations=violations,
    )
